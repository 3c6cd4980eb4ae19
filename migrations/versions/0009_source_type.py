"""Source type of a session (issue 16) and per-call facts on model_call (issue 19).

Revision ID: 0009_source_type
Revises: 0008_journal
Create Date: 2026-12-01

Memory files (Codex `~/.codex/memories/**.md`, Claude Code project `memory/` directories) are
indexed as one-document sessions so search, embeddings and MCP see them with the same provenance;
`search --source-type session|memory` filters on this column. `ah.model_call` gains the
per-call facts some transcripts carry: the harness's recorded cost (USD), duration with its basis,
time to first token and thinking time (ms); NULL where a format records nothing.
"""

from alembic import op

revision = "0009_source_type"
down_revision = "0008_journal"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.session ADD COLUMN source_type text NOT NULL DEFAULT 'session'
    CHECK (source_type IN ('session', 'memory'));
ALTER TABLE ah.model_call
    ADD COLUMN recorded_cost_usd numeric,
    ADD COLUMN duration_ms       bigint,
    ADD COLUMN duration_basis    text,
    ADD COLUMN ttft_ms           bigint,
    ADD COLUMN thinking_ms       bigint;
"""

DOWNGRADE = r"""
ALTER TABLE ah.session DROP COLUMN IF EXISTS source_type;
ALTER TABLE ah.model_call DROP COLUMN IF EXISTS recorded_cost_usd, DROP COLUMN IF EXISTS duration_ms,
    DROP COLUMN IF EXISTS duration_basis, DROP COLUMN IF EXISTS ttft_ms, DROP COLUMN IF EXISTS thinking_ms;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

"""Source type of a session: a transcript (`session`) or a Markdown memory file (`memory`) (issue 16).

Revision ID: 0009_source_type
Revises: 0008_journal
Create Date: 2026-12-01

Memory files (Codex `~/.codex/memories/**.md`, Claude Code project `memory/` directories) are
indexed as one-document sessions so search, embeddings and MCP see them with the same provenance;
`search --source-type session|memory` filters on this column.
"""

from alembic import op

revision = "0009_source_type"
down_revision = "0008_journal"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.session ADD COLUMN source_type text NOT NULL DEFAULT 'session'
    CHECK (source_type IN ('session', 'memory'));
"""

DOWNGRADE = r"""
ALTER TABLE ah.session DROP COLUMN IF EXISTS source_type;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

"""Usage reports and per-call accounting (issue 19).

`ah.usage_fill` records which token buckets of which model call an external source filled in
(today: LiteLLM's spend log, `agent-history litellm-fill`). Keyed by the call's natural key
(agent, call_uid), not its surrogate id, so the record survives a rebuild (a rebuild re-reads
the transcripts, which leaves those buckets NULL again, and the next fill restores them).

Revision ID: 0011_usage
Revises: 0010_source_kinds
Create Date: 2026-12-01
"""

from alembic import op

revision = "0011_usage"
down_revision = "0010_source_kinds"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.usage_fill (
    agent       text NOT NULL,
    call_uid    text NOT NULL,
    source      text NOT NULL,          -- 'litellm'
    source_key  text NOT NULL,          -- the source's row key (LiteLLM request_id)
    buckets     text[] NOT NULL,        -- model_call columns that were NULL and were filled
    filled_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent, call_uid, source)
);
"""

DOWNGRADE = r"""
DROP TABLE IF EXISTS ah.usage_fill;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

"""Recall and session curation (issue 17).

``ah.session_exclusion``: sessions a person keeps out of search, recall, embeddings and MCP
results (`agent-history sessions exclude UID`). Keyed by the session's natural key (agent,
session_uid) — not its surrogate id — so the decision survives passes and `rebuild` (which
truncates only the derived tables). Sub-agent threads share their session's uid and are
excluded with it.

Revision ID: 0012_curation
Revises: 0011_usage
Create Date: 2026-12-01
"""

from alembic import op

revision = "0012_curation"
down_revision = "0011_usage"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.session_exclusion (
    agent        text NOT NULL,
    session_uid  text NOT NULL,
    reason       text,
    excluded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent, session_uid)
);
"""

DOWNGRADE = r"""
DROP TABLE IF EXISTS ah.session_exclusion;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

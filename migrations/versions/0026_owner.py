"""Owners of rows two sessions share (docs/design.md §7 "Message uids reused by another session").

A Claude Code resume re-emits records (same ``uuid``, same ``message.id``) under the new
``sessionId``: the copies merge into one row by natural key, first stored first owned — so which
session held them depended on the order files were read. ``ah.row_claim`` records every session
that holds a merged row (with where its copy sits: file, byte offset, line); the post-pass gives
each claimed row to the session that started first, then ended first, then by session uid
(``ingest.owners``), whatever the reading order, and rolls up both sessions.

Derived data: `rebuild` empties it; rows of a deleted session go with it (cascade).

Revision ID: 0026_owner
Revises: 0025_store
Create Date: 2026-12-02
"""

from alembic import op

revision = "0026_owner"
down_revision = "0025_store"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.row_claim (
    row_table    text   NOT NULL,   -- an event table of the row model: message, model_call, …
    row_id       bigint NOT NULL,   -- its id (no foreign key: one column for several tables)
    session_id   bigint NOT NULL REFERENCES ah.session (id) ON DELETE CASCADE,
    source_id    bigint REFERENCES ah.source_file (id) ON DELETE CASCADE,
    byte_offset  bigint,
    line_number  bigint,
    PRIMARY KEY (row_table, row_id, session_id)
);
CREATE INDEX row_claim_session_idx ON ah.row_claim (session_id);
"""

DOWNGRADE = r"""
DROP TABLE IF EXISTS ah.row_claim;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

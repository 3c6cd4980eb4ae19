"""Loader source kinds: whole documents and SQLite databases (issue 16).

Revision ID: 0010_source_kinds
Revises: 0009_source_type
Create Date: 2026-12-01

`ah.source_file.kind` says how a source is read (docs/design.md §7 "Source kinds"): `jsonl` (append-only,
by byte offset), `document` (a whole JSON document re-read when size, mtime or content hash
change: `content_sha256` is the hash of the bytes last indexed) or `database` (a SQLite file read
read-only by a saved cursor: `db_cursor`, per table the last `(time_updated, id)` seen).
"""

from alembic import op

revision = "0010_source_kinds"
down_revision = "0009_source_type"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.source_file
    ADD COLUMN kind text NOT NULL DEFAULT 'jsonl' CHECK (kind IN ('jsonl', 'document', 'database')),
    ADD COLUMN content_sha256 text,
    ADD COLUMN db_cursor jsonb;
COMMENT ON COLUMN ah.source_file.content_sha256 IS 'document sources: sha256 of the bytes last indexed';
COMMENT ON COLUMN ah.source_file.db_cursor IS 'database sources: per table the last (time_updated, id) read';
"""

DOWNGRADE = r"""
ALTER TABLE ah.source_file DROP COLUMN IF EXISTS kind, DROP COLUMN IF EXISTS content_sha256,
    DROP COLUMN IF EXISTS db_cursor;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

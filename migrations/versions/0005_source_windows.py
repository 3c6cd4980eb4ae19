"""Loader: hashed windows spread over the indexed prefix of each source file (issue 10, defect 3).

Revision ID: 0005_source_windows
Revises: 0004_search_i18n
Create Date: 2026-12-01

Two columns of ``ah.source_file`` beside ``head_sha256`` / ``checkpoint_sha256`` (the meaning of
each is in `agent_history.ingest.prefix`):

- ``prefix_windows jsonb`` — sampled windows of the indexed prefix, checked when a file grows:
  ``{"w": 4096, "stride": 16384, "at": {"<byte offset>": "<16 hex of sha256>"}}``.
- ``prefix_crc32 bigint`` — CRC-32 of bytes ``[0, indexed_offset)``, compared by
  ``rebuild-check --verify``. NULL = no baseline yet (a file indexed before this revision gets one
  the next time it grows).
"""

from alembic import op

revision = "0005_source_windows"
down_revision = "0004_search_i18n"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.source_file
    ADD COLUMN IF NOT EXISTS prefix_windows jsonb,
    ADD COLUMN IF NOT EXISTS prefix_crc32 bigint;
COMMENT ON COLUMN ah.source_file.prefix_windows IS
    'sha256 (16 hex) of 4 KiB windows sampled over the indexed prefix; checked when the file grows';
COMMENT ON COLUMN ah.source_file.prefix_crc32 IS
    'CRC-32 of bytes [0, indexed_offset); compared by rebuild-check --verify; NULL = no baseline';
"""

DOWNGRADE = r"""
ALTER TABLE ah.source_file DROP COLUMN IF EXISTS prefix_windows, DROP COLUMN IF EXISTS prefix_crc32;
"""


def upgrade() -> None:
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)

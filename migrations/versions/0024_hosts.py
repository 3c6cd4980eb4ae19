"""Many machines, one catalogue (issue 29 item 2; docs/design.md §7 "Many machines").

- ``ah.source_file.origin_host`` and ``ah.session.origin_host``: the host that indexed the file
  (`config.Settings.host`: ``[host] name``, ``$AGENT_HISTORY_HOST`` or the system's name); a
  session takes its source file's in the post-pass. NULL = unknown: rows loaded before this
  revision, never a made-up value (a host's pass claims a NULL row of its own namespace when it
  sees the same path there: `ingest.loader`).
- A source file is unique by ``(path, origin_host)`` (NULLs not distinct), no longer by path
  alone: two machines' homes hold the same paths (``/home/me/.claude/projects/…``).
- ``ah.index_run.origin_host`` and ``namespaces``: which host ran a pass over which namespaces
  (each pass holds its namespaces' advisory locks, not one global lock).

Revision ID: 0024_hosts
Revises: 0022_repo_more
Create Date: 2026-12-02
"""

from alembic import op

revision = "0024_hosts"
down_revision = "0022_repo_more"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.source_file ADD COLUMN origin_host text;
ALTER TABLE ah.session ADD COLUMN origin_host text;
ALTER TABLE ah.source_file DROP CONSTRAINT source_file_path_key;
ALTER TABLE ah.source_file ADD CONSTRAINT source_file_path_host_key UNIQUE NULLS NOT DISTINCT (path, origin_host);
CREATE INDEX source_file_host_idx ON ah.source_file (origin_host, namespace);
CREATE INDEX session_origin_host_idx ON ah.session (origin_host);
ALTER TABLE ah.index_run ADD COLUMN origin_host text, ADD COLUMN namespaces text[];
"""

DOWNGRADE = r"""
ALTER TABLE ah.index_run DROP COLUMN IF EXISTS namespaces, DROP COLUMN IF EXISTS origin_host;
DROP INDEX IF EXISTS ah.session_origin_host_idx;
DROP INDEX IF EXISTS ah.source_file_host_idx;
ALTER TABLE ah.source_file DROP CONSTRAINT IF EXISTS source_file_path_host_key;
ALTER TABLE ah.source_file ADD CONSTRAINT source_file_path_key UNIQUE (path);
ALTER TABLE ah.session DROP COLUMN IF EXISTS origin_host;
ALTER TABLE ah.source_file DROP COLUMN IF EXISTS origin_host;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

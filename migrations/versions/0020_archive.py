"""The archive manifest and the secrets report (issue 29; docs/design.md §18, §19).

- ``ah.archive_copy`` — one row per archived copy of a transcript (`agent_history.archive`).
  Authoritative data, not derived: `rebuild` keeps it (it is how a rebuild finds the transcripts
  an agent deleted). A file is a lineage of *versions*: a file that grew (its archived bytes are
  a prefix of it) replaces its version's copy; one that shrank or was rewritten starts the next
  version beside the old (the old copy is never touched). ``archive_file`` is the copy's path
  relative to the archive root, stored per row so a later layout (a host directory for many
  machines) adds rows without moving files; ``origin_host`` ('' = this machine) is reserved for
  that. ``size``/``sha256`` are of the uncompressed bytes, checked by decompressing the written
  copy before the row is written; ``verified_at`` is the last time the copy was re-hashed
  (`archive --verify`), ``verify_error`` why it failed then (NULL: good).
  ``source_size``/``source_mtime_ns`` are what ``stat`` said of the hot file (a database: its
  file plus its ``-wal``), ``head_sha256``/``checkpoint_sha256``/``prefix_windows`` the prefix
  evidence of a JSONL or markdown copy at ``size`` (`ingest.prefix`), ``table_rows`` the rows per table of a
  database snapshot (a snapshot with fewer rows in some table starts a new version).
- ``ah.secret_finding`` — derived (emptied by `rebuild`, refilled by the scan): every
  secret-shaped span of a stored message text or tool-call input/output (`embed.redact`), with
  the detector, the character span in that field, the record's file and byte offset, and a
  preview in which every secret is ``[REDACTED]`` (the secret itself is never stored here).
- ``ah.secret_scan`` — derived: which message / tool call was scanned, at how many bytes of text
  (``octet_length`` of text, or of input plus output), so a scan reads only rows that are new or
  whose text changed (a tool call's output merged in later).

Revision ID: 0020_archive
Revises: 0019_collector
Create Date: 2026-12-02
"""

from alembic import op

revision = "0020_archive"
down_revision = "0019_collector"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.archive_copy (
    id               bigserial PRIMARY KEY,
    origin_host      text NOT NULL DEFAULT '',
    namespace        text NOT NULL,
    agent            text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('jsonl', 'document', 'database', 'markdown')),
    path             text NOT NULL,
    rel_path         text NOT NULL,
    version          integer NOT NULL CHECK (version >= 1),
    archive_file     text NOT NULL UNIQUE,
    size             bigint NOT NULL,
    sha256           bytea NOT NULL,
    compressed_size  bigint NOT NULL,
    source_size      bigint NOT NULL,
    source_mtime_ns  bigint NOT NULL,
    head_sha256      text,
    checkpoint_sha256 text,
    prefix_windows   jsonb,
    table_rows       jsonb,
    archived_at      timestamptz NOT NULL DEFAULT now(),
    verified_at      timestamptz NOT NULL DEFAULT now(),
    verify_error     text,
    UNIQUE (origin_host, namespace, rel_path, version)
);
CREATE INDEX archive_copy_path_idx ON ah.archive_copy (path);

CREATE TABLE ah.secret_finding (
    id            bigserial PRIMARY KEY,
    session_id    bigint NOT NULL REFERENCES ah.session (id) ON DELETE CASCADE,
    message_id    bigint REFERENCES ah.message (id) ON DELETE CASCADE,
    tool_call_id  bigint REFERENCES ah.tool_call (id) ON DELETE CASCADE,
    field         text NOT NULL CHECK (field IN ('text', 'input', 'output')),
    detector      text NOT NULL,
    char_start    integer NOT NULL,
    char_end      integer NOT NULL,
    source_id     bigint,
    byte_offset   bigint,
    preview       text NOT NULL,
    CHECK (num_nonnulls(message_id, tool_call_id) = 1)
);
CREATE INDEX secret_finding_session_idx ON ah.secret_finding (session_id);
CREATE INDEX secret_finding_message_idx ON ah.secret_finding (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX secret_finding_tool_call_idx ON ah.secret_finding (tool_call_id) WHERE tool_call_id IS NOT NULL;

CREATE TABLE ah.secret_scan (
    message_id     bigint UNIQUE REFERENCES ah.message (id) ON DELETE CASCADE,
    tool_call_id   bigint UNIQUE REFERENCES ah.tool_call (id) ON DELETE CASCADE,
    scanned_bytes  bigint NOT NULL,
    CHECK (num_nonnulls(message_id, tool_call_id) = 1)
);
"""

DOWNGRADE = r"""
DROP TABLE IF EXISTS ah.secret_scan;
DROP TABLE IF EXISTS ah.secret_finding;
DROP TABLE IF EXISTS ah.archive_copy;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

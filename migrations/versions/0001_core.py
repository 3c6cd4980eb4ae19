"""Core catalogue: schema `ah`, sources, sessions and every event table (docs/design.md §5).

Revision ID: 0001_core
Revises:
Create Date: 2026-11-29

Rules encoded here:
- Natural keys are UNIQUE constraints on content-derived uids (``agent`` + uid); surrogate ``id``
  columns exist for joins and BM25 ``key_field`` only.
- Every event row records ``source_id``, ``byte_offset`` and ``line_number`` so a rewritten file
  can be purged and events ordered physically. ``ON DELETE CASCADE`` from ``source_file``.
- NULL means unknown (tokens, durations, exit codes): no ``DEFAULT 0`` on those columns.
- The keyword backend (`bm25` with ParadeDB `pg_search`, else `fts`) is recorded in ``ah.meta``.
"""

from alembic import op

revision = "0001_core"
down_revision = None
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS ah;

-- convert_to() is only STABLE (it depends on the encoding); the database encoding is fixed at
-- creation, so this wrapper is honestly IMMUTABLE and can back a generated column.
CREATE FUNCTION ah.utf8_sha256(t text) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN sha256(convert_to(coalesce(t, ''), 'UTF8'));

CREATE TABLE ah.meta (
    key         text PRIMARY KEY,
    value       text,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per transcript file; the loader's resume point and parser state live here.
CREATE TABLE ah.source_file (
    id                 bigserial PRIMARY KEY,
    path               text NOT NULL UNIQUE,
    namespace          text NOT NULL,
    agent              text NOT NULL,
    role               text NOT NULL DEFAULT 'main',       -- main | subagent
    tier               text NOT NULL DEFAULT 'hot',        -- hot | cold
    rel_path           text,                               -- path relative to the agent home
    size               bigint,                              -- bytes at last stat
    mtime_ns           bigint,
    indexed_offset     bigint NOT NULL DEFAULT 0,           -- bytes of complete lines read
    line_count         bigint NOT NULL DEFAULT 0,
    head_sha256        text,                                -- sha256 of the first 64 KiB
    checkpoint_sha256  text,                                -- sha256 of the 64 KiB before indexed_offset
    parser_version     integer,
    parser_state       jsonb,
    status             text NOT NULL DEFAULT 'new',         -- new | ok | error | parser_upgraded | missing
    rewrite_count      integer NOT NULL DEFAULT 0,
    last_error         text,
    first_seen_at      timestamptz NOT NULL DEFAULT now(),
    last_indexed_at    timestamptz
);
CREATE INDEX source_file_namespace_idx ON ah.source_file (namespace, status);
CREATE INDEX source_file_rel_path_idx ON ah.source_file (namespace, rel_path);

CREATE TABLE ah.repo (
    id          bigserial PRIMARY KEY,
    root_path   text NOT NULL UNIQUE,
    name        text NOT NULL,
    remote_url  text
);

CREATE TABLE ah.session (
    id                  bigserial PRIMARY KEY,
    agent               text NOT NULL,
    session_uid         text NOT NULL,
    agent_id            text NOT NULL DEFAULT '',
    namespace           text,
    source_id           bigint REFERENCES ah.source_file (id) ON DELETE SET NULL,
    is_subagent         boolean,
    parent_session_uid  text,
    parent_agent_id     text,
    spawn_uid           text,
    forked_from_uid     text,
    subagent_type       text,
    cwd                 text,
    git_branch          text,
    cli_version         text,
    model               text,
    custom_title        text,
    ai_title            text,
    first_prompt        text,
    started_at          timestamptz,
    ended_at            timestamptz,
    byte_offset         bigint,
    line_number         bigint,
    -- derived by post-passes (ingest.postpass)
    parent_session_id   bigint,
    root_session_id     bigint,
    repo_id             bigint REFERENCES ah.repo (id) ON DELETE SET NULL,
    title               text,
    message_count       integer,
    prompt_count        integer,
    tool_call_count     integer,
    tool_error_count    integer,
    model_call_count    integer,
    subagent_count      integer,
    input_uncached      bigint,
    cache_read          bigint,
    cache_write_5m      bigint,
    cache_write_1h      bigint,
    output              bigint,
    reasoning           bigint,
    cost_usd            numeric(14, 6),
    duration_ms         bigint,
    rolled_up_at        timestamptz,
    CONSTRAINT session_natural_key UNIQUE (agent, session_uid, agent_id)
);
CREATE INDEX session_started_idx ON ah.session (started_at DESC);
CREATE INDEX session_parent_idx ON ah.session (parent_session_id);
CREATE INDEX session_root_idx ON ah.session (root_session_id);
CREATE INDEX session_source_idx ON ah.session (source_id);
CREATE INDEX session_namespace_idx ON ah.session (namespace, started_at DESC);
CREATE INDEX session_cwd_idx ON ah.session (cwd text_pattern_ops);
-- lineage post-pass lookups (sql/30_postpass.sql)
CREATE INDEX session_parent_uid_idx ON ah.session (agent, parent_session_uid) WHERE parent_session_uid IS NOT NULL;
CREATE INDEX session_spawn_uid_idx ON ah.session (agent, spawn_uid) WHERE spawn_uid IS NOT NULL;

CREATE TABLE ah.turn (
    id           bigserial PRIMARY KEY,
    agent        text NOT NULL,
    turn_uid     text NOT NULL,
    session_id   bigint NOT NULL,
    source_id    bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    model        text,
    started_at   timestamptz,
    ended_at     timestamptz,
    byte_offset  bigint,
    line_number  bigint,
    CONSTRAINT turn_natural_key UNIQUE (agent, turn_uid)
);
CREATE INDEX turn_session_idx ON ah.turn (session_id);
CREATE INDEX turn_source_idx ON ah.turn (source_id);

CREATE TABLE ah.message (
    id                bigserial PRIMARY KEY,
    agent             text NOT NULL,
    message_uid       text NOT NULL,
    session_id        bigint NOT NULL,
    namespace         text NOT NULL,
    source_id         bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    turn_uid          text,
    parent_uid        text,
    role              text,
    message_class     text,
    text              text,
    text_sha256       bytea GENERATED ALWAYS AS (ah.utf8_sha256(text)) STORED,
    ts                timestamptz,
    model             text,
    on_active_branch  boolean,
    attachments       jsonb,
    byte_offset       bigint,
    line_number       bigint,
    CONSTRAINT message_natural_key UNIQUE (agent, message_uid)
);
CREATE INDEX message_session_idx ON ah.message (session_id, byte_offset);
CREATE INDEX message_source_idx ON ah.message (source_id);
CREATE INDEX message_ts_idx ON ah.message (ts);
CREATE INDEX message_class_idx ON ah.message (message_class);
-- Claude `summary` records stored as messages 'summary:<leaf>' (sql/30_postpass.sql, titles)
CREATE INDEX message_summary_leaf_idx ON ah.message (agent, parent_uid) WHERE message_uid LIKE 'summary:%';

CREATE TABLE ah.model_call (
    id              bigserial PRIMARY KEY,
    agent           text NOT NULL,
    call_uid        text NOT NULL,
    session_id      bigint NOT NULL,
    source_id       bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    turn_uid        text,
    request_id      text,
    model           text,
    stop_reason     text,
    input_uncached  bigint,
    cache_read      bigint,
    cache_write_5m  bigint,
    cache_write_1h  bigint,
    output          bigint,
    reasoning       bigint,
    is_api_error    boolean,
    is_complete     boolean,
    ts              timestamptz,
    byte_offset     bigint,
    line_number     bigint,
    CONSTRAINT model_call_natural_key UNIQUE (agent, call_uid)
);
CREATE INDEX model_call_session_idx ON ah.model_call (session_id, byte_offset);
CREATE INDEX model_call_source_idx ON ah.model_call (source_id);
CREATE INDEX model_call_ts_idx ON ah.model_call (ts);

CREATE TABLE ah.tool_call (
    id             bigserial PRIMARY KEY,
    agent          text NOT NULL,
    tool_call_uid  text NOT NULL,
    session_id     bigint NOT NULL,
    source_id      bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    turn_uid       text,
    message_uid    text,
    call_uid       text,
    name           text,
    input          text,
    output         text,
    is_error       boolean,
    exit_code      integer,
    outcome        text,
    error_class    text,
    error_excerpt  text,
    duration_ms    bigint,
    started_at     timestamptz,
    ended_at       timestamptz,
    byte_offset    bigint,
    line_number    bigint,
    CONSTRAINT tool_call_natural_key UNIQUE (agent, tool_call_uid)
);
CREATE INDEX tool_call_session_idx ON ah.tool_call (session_id, byte_offset);
CREATE INDEX tool_call_source_idx ON ah.tool_call (source_id);
CREATE INDEX tool_call_error_idx ON ah.tool_call (error_class) WHERE error_class IS NOT NULL;

CREATE TABLE ah.subagent_spawn (
    id                 bigserial PRIMARY KEY,
    agent              text NOT NULL,
    spawn_uid          text NOT NULL,
    session_id         bigint NOT NULL,
    source_id          bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    tool_call_uid      text,
    child_session_uid  text,
    child_agent_id     text,
    child_session_id   bigint,                      -- resolved by the lineage post-pass
    subagent_type      text,
    description        text,
    brief              text,
    ts                 timestamptz,
    byte_offset        bigint,
    line_number        bigint,
    CONSTRAINT subagent_spawn_natural_key UNIQUE (agent, spawn_uid)
);
CREATE INDEX subagent_spawn_session_idx ON ah.subagent_spawn (session_id);
CREATE INDEX subagent_spawn_source_idx ON ah.subagent_spawn (source_id);
CREATE INDEX subagent_spawn_child_idx ON ah.subagent_spawn (child_session_id);
CREATE INDEX subagent_spawn_child_uid_idx ON ah.subagent_spawn (agent, child_session_uid);

CREATE TABLE ah.compaction (
    id                   bigserial PRIMARY KEY,
    agent                text NOT NULL,
    compaction_uid       text NOT NULL,
    session_id           bigint NOT NULL,
    source_id            bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    trigger              text,
    tokens_before        bigint,
    tokens_after         bigint,
    summary_message_uid  text,
    ts                   timestamptz,
    byte_offset          bigint,
    line_number          bigint,
    CONSTRAINT compaction_natural_key UNIQUE (agent, compaction_uid)
);
CREATE INDEX compaction_session_idx ON ah.compaction (session_id);
CREATE INDEX compaction_source_idx ON ah.compaction (source_id);

CREATE TABLE ah.file_touch (
    id             bigserial PRIMARY KEY,
    agent          text NOT NULL,
    touch_uid      text NOT NULL,
    session_id     bigint NOT NULL,
    source_id      bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    tool_call_uid  text,
    path           text NOT NULL,
    op             text NOT NULL,
    ts             timestamptz,
    byte_offset    bigint,
    line_number    bigint,
    CONSTRAINT file_touch_natural_key UNIQUE (agent, touch_uid)
);
CREATE INDEX file_touch_path_idx ON ah.file_touch (path text_pattern_ops);
CREATE INDEX file_touch_session_idx ON ah.file_touch (session_id);
CREATE INDEX file_touch_source_idx ON ah.file_touch (source_id);

CREATE TABLE ah.git_event (
    id             bigserial PRIMARY KEY,
    agent          text NOT NULL,
    git_event_uid  text NOT NULL,
    session_id     bigint NOT NULL,
    source_id      bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    tool_call_uid  text,
    op             text NOT NULL,
    sha            text,
    old_sha        text,
    branch         text,
    remote_ref     text,
    subject        text,
    ts             timestamptz,
    byte_offset    bigint,
    line_number    bigint,
    CONSTRAINT git_event_natural_key UNIQUE (agent, git_event_uid)
);
CREATE INDEX git_event_sha_idx ON ah.git_event (sha text_pattern_ops);
CREATE INDEX git_event_session_idx ON ah.git_event (session_id);
CREATE INDEX git_event_source_idx ON ah.git_event (source_id);

-- Per-source rows: unique within one source file.
CREATE TABLE ah.parse_issue (
    id           bigserial PRIMARY KEY,
    source_id    bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    kind         text NOT NULL,
    byte_offset  bigint NOT NULL,
    line_number  bigint,
    detail       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT parse_issue_natural_key UNIQUE (source_id, kind, byte_offset)
);
CREATE INDEX parse_issue_kind_idx ON ah.parse_issue (kind);

CREATE TABLE ah.record_type_seen (
    id           bigserial PRIMARY KEY,
    source_id    bigint NOT NULL REFERENCES ah.source_file (id) ON DELETE CASCADE,
    agent        text NOT NULL,
    record_type  text NOT NULL,
    subtype      text NOT NULL DEFAULT '',
    key_set      text NOT NULL,
    known        boolean NOT NULL DEFAULT true,
    count        bigint NOT NULL DEFAULT 0,
    CONSTRAINT record_type_seen_natural_key UNIQUE (source_id, agent, record_type, subtype, key_set)
);

-- Sessions whose rows changed since the last post-pass.
CREATE TABLE ah.dirty_session (
    session_id  bigint PRIMARY KEY,
    marked_at   timestamptz NOT NULL DEFAULT now()
);

-- List prices in USD per million tokens; `model_pattern` is a LIKE pattern on model_call.model.
CREATE TABLE ah.model_pricing (
    model_pattern        text NOT NULL,
    effective_from       date NOT NULL,
    input_per_mtok       numeric(12, 4) NOT NULL,
    output_per_mtok      numeric(12, 4) NOT NULL,
    cache_read_per_mtok  numeric(12, 4),
    cache_write_5m_per_mtok numeric(12, 4),
    cache_write_1h_per_mtok numeric(12, 4),
    source               text NOT NULL,
    PRIMARY KEY (model_pattern, effective_from)
);

-- One row per index pass (status: last pass time and duration).
CREATE TABLE ah.index_run (
    id             bigserial PRIMARY KEY,
    started_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz,
    status         text NOT NULL DEFAULT 'running',   -- running | ok | interrupted | failed
    files_scanned  integer,
    files_changed  integer,
    bytes_read     bigint,
    summary        jsonb
);

INSERT INTO ah.meta (key, value) VALUES ('schema_created_at', now()::text);
"""

DOWNGRADE = r"""
DROP SCHEMA IF EXISTS ah CASCADE;
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    # ParadeDB: only where the extension is installable (docs/design.md §8). pg_search 0.25 needs vector first.
    op.execute(
        """
        DO $$
        BEGIN
          IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_search') THEN
            BEGIN
              CREATE EXTENSION IF NOT EXISTS pg_search;
              INSERT INTO ah.meta (key, value) VALUES ('keyword_backend', 'bm25');
            EXCEPTION WHEN others THEN
              -- listed but not loadable (e.g. missing shared_preload_libraries): fall back
              INSERT INTO ah.meta (key, value) VALUES ('keyword_backend', 'fts'),
                ('keyword_backend_note', 'pg_search unavailable: ' || SQLERRM);
            END;
          ELSE
            INSERT INTO ah.meta (key, value) VALUES ('keyword_backend', 'fts');
          END IF;
        END
        $$;
        """
    )


def downgrade() -> None:
    op.execute(DOWNGRADE)

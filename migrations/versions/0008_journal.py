"""Journal: session summaries copied in from an external journal database (issue 15).

Revision ID: 0008_journal
Revises: 0007_loops
Create Date: 2026-12-01

``ah.session_summary`` holds one row per journal conversation, joined to ``ah.session`` by the
natural key (agent, session_uid, agent_id or ''). ``session_id`` is deliberately not a foreign
key: a summary can arrive before its session (kept with a NULL session and linked by
``ah.link_session_summaries()`` when the session appears), and a rebuild renumbers sessions
without touching summaries (relinked by the same function). ``ah.session_topic`` holds the
topics, replaced per conversation. ``ah.journal_sync_run`` records each pass like
``ah.index_run`` does (status, skip reason, counts) for `status` and the ``run="journal_sync"``
metrics.
"""

from alembic import op

revision = "0008_journal"
down_revision = "0007_loops"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.session_summary (
    id                       bigserial PRIMARY KEY,
    journal_conversation_id  text NOT NULL UNIQUE,
    session_id               bigint,                 -- ah.session.id by natural key; NULL until it appears
    agent                    text NOT NULL,
    session_uid              text NOT NULL,
    agent_id                 text NOT NULL DEFAULT '',
    namespace                text,
    revision_id              text,
    analysed_at              timestamptz NOT NULL,
    model                    text,
    title                    text,
    objective                text,
    narrative                text,
    outcomes                 text,
    unfinished               text,
    classification           text,
    project                  text,
    app_instance_id          text NOT NULL,
    synced_at                timestamptz NOT NULL DEFAULT now(),
    -- Summaries are prose written for people: English stemming is right here ("decisions" finds
    -- "decided"), unlike the code-aware message text. Title weighs most, then objective/outcomes.
    search_tsv               tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english', coalesce(objective, '')), 'B')
        || setweight(to_tsvector('english', coalesce(outcomes, '')), 'B')
        || setweight(to_tsvector('english', coalesce(narrative, '')), 'C')
    ) STORED
);
CREATE INDEX session_summary_search_idx ON ah.session_summary USING gin (search_tsv);
CREATE INDEX session_summary_natural_key_idx ON ah.session_summary (agent, session_uid, agent_id);
CREATE INDEX session_summary_session_idx ON ah.session_summary (session_id);

CREATE TABLE ah.session_topic (
    summary_id  bigint NOT NULL REFERENCES ah.session_summary (id) ON DELETE CASCADE,
    position    integer NOT NULL,                    -- order in topics_json, from 0
    topic       text NOT NULL,
    PRIMARY KEY (summary_id, position)
);
CREATE INDEX session_topic_topic_idx ON ah.session_topic (lower(topic));

-- One row per journal-sync pass (status: last pass; metrics: run="journal_sync").
CREATE TABLE ah.journal_sync_run (
    id            bigserial PRIMARY KEY,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    status        text NOT NULL DEFAULT 'running',  -- running | ok | skipped | refused | failed
    full_pass     boolean,
    skip_reason   text,                             -- why nothing was written (skipped / refused)
    rows_read     integer,
    rows_written  integer,                          -- summaries inserted or updated + pruned
    summary       jsonb
);
"""

DOWNGRADE = r"""
DROP TABLE IF EXISTS ah.journal_sync_run;
DROP TABLE IF EXISTS ah.session_topic;
DROP TABLE IF EXISTS ah.session_summary;
DROP FUNCTION IF EXISTS ah.link_session_summaries();
DELETE FROM ah.meta WHERE starts_with(key, 'journal_sync:') OR key = 'sql:50_journal.sql';
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

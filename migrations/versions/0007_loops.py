"""Loops: launches, lanes, closeouts (issue 12).

Revision ID: 0007_loops
Revises: 0006_efficiency
Create Date: 2026-12-01

- ``ah.loops``: one row per launch prompt (natural key: agent + launch message uid), its status
  and progress. Progress columns are NULL when unknown, never 0 (issue 12, Progress).
- ``ah.lane``: sessions attached to a loop, by lineage or by the Codex exec heuristic, with
  every lane-return block (oldest first) and the latest one's status.
- ``ah.loop_closeout``: each captured write (or partial edit) of a loop's closeout path inside
  its window: only the content's SHA-256 and first line, never the body.
Filled by the loop post-pass (`agent_history.ingest.loops`); surrogate ids renumber on rebuild.
"""

from alembic import op

revision = "0007_loops"
down_revision = "0006_efficiency"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.loops (
    id                   bigserial PRIMARY KEY,
    agent                text NOT NULL,
    launch_message_uid   text NOT NULL,
    root_session_id      bigint NOT NULL REFERENCES ah.session (id) ON DELETE CASCADE,
    launch_message_id    bigint,
    closeout_path        text NOT NULL,                  -- as written in the launch prompt
    closeout_abspath     text NOT NULL,                  -- against the root's cwd, normalised
    charter_path         text,
    charter_sha256       text,
    loop_number          integer NOT NULL,
    loop_date            date,
    repo                 text,                           -- directory name, or owner/name from the remote
    started_at           timestamptz,                    -- the launch message's time
    window_end_at        timestamptz,                    -- the next launch of the same root (NULL: open)
    status               text NOT NULL CHECK (status IN ('finished', 'waiting', 'paused', 'running', 'stale')),
    waiting_until        timestamptz,
    ended_at             timestamptz,
    end_evidence         text,
    root_last_active_at  timestamptz,
    lanes                integer,
    model_calls          integer,
    input_uncached       bigint,
    cache_read           bigint,
    cache_write_5m       bigint,
    cache_write_1h       bigint,
    output               bigint,
    reasoning            bigint,
    cost_usd             numeric(14, 6),
    errors               integer,
    commits              integer,
    pushes               integer,
    landed               integer,
    parked               integer,
    refreshed_at         timestamptz,
    CONSTRAINT loops_launch_key UNIQUE (agent, launch_message_uid)
);
CREATE INDEX loops_root_idx ON ah.loops (root_session_id);
CREATE INDEX loops_status_idx ON ah.loops (status, started_at DESC);
CREATE INDEX loops_closeout_idx ON ah.loops (closeout_abspath);
COMMENT ON TABLE ah.loops IS 'One row per loop launch (issue 12); progress columns are NULL when unknown, never 0.';

CREATE TABLE ah.lane (
    id             bigserial PRIMARY KEY,
    loop_id        bigint NOT NULL REFERENCES ah.loops (id) ON DELETE CASCADE,
    session_id     bigint NOT NULL REFERENCES ah.session (id) ON DELETE CASCADE,
    link_method    text NOT NULL CHECK (link_method IN ('lineage', 'heuristic')),
    return_status  text CHECK (return_status IN ('complete', 'partial', 'blocked', 'failed')),
    returns        jsonb NOT NULL DEFAULT '[]',
    CONSTRAINT lane_loop_session_key UNIQUE (loop_id, session_id)
);
CREATE INDEX lane_session_idx ON ah.lane (session_id);
COMMENT ON TABLE ah.lane IS 'Sessions attached to a loop (lineage | heuristic) and their lane-return blocks.';

CREATE TABLE ah.loop_closeout (
    id             bigserial PRIMARY KEY,
    loop_id        bigint NOT NULL REFERENCES ah.loops (id) ON DELETE CASCADE,
    session_id     bigint REFERENCES ah.session (id) ON DELETE CASCADE,
    tool_call_uid  text NOT NULL,
    sha256         text,                                  -- of the written content; NULL when not a whole write
    first_line     text,
    written_at     timestamptz,
    qualified      boolean NOT NULL,
    reason         text,                                  -- why it does not qualify
    CONSTRAINT loop_closeout_write_key UNIQUE (loop_id, tool_call_uid)
);
COMMENT ON TABLE ah.loop_closeout IS 'Captured writes of a loop''s closeout path: SHA-256 and first line only, never the body.';

-- A catalogue indexed before this revision: sessions with a launch-shaped prompt are marked dirty,
-- so the next post-pass detects their loops (agent_history.loops.rules.LAUNCH_MARKER / LAUNCH_CLASSES).
INSERT INTO ah.dirty_session (session_id)
SELECT DISTINCT m.session_id
FROM ah.message AS m
WHERE m.message_class IN ('human_prompt', 'queued_prompt') AND strpos(m.text, 'You are the root') > 0
ON CONFLICT (session_id) DO NOTHING;
"""

DOWNGRADE = r"""
DROP VIEW IF EXISTS ah.thread_loop;  -- sql/36_agent_efficiency.sql, on ah.lane
DROP TABLE IF EXISTS ah.loop_closeout;
DROP TABLE IF EXISTS ah.lane;
DROP TABLE IF EXISTS ah.loops;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

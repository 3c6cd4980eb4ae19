"""The repository collector (issue 30): repositories, commits, pushes, Backlog.md tasks.

Revision ID: 0019_collector
Revises: 0017_price_library
Create Date: 2026-12-02

Authoritative data: `agent-history collect` reads checkouts with `git` and writes these tables;
`rebuild` keeps them (they are not derived from transcripts). Written by the owner or by the
``ah_collector`` role (`db roles`), which may write these tables and nothing else.

- ``ah.repository``: one checkout (absolute top-level path), its default branch, whether it is
  a shallow clone, and ``gone`` (collected before, no longer a repository here: rows are kept).
- ``ah.repo_commit``: every commit on a local branch (natural key repository + sha): parents,
  author and commit times, subject, the trailers that name no person, the ``Task:`` trailer
  values, ``authored_by_me`` (the author's address compared with ``[identity] emails``; NULL
  when none are configured) — never an address, a name or a hash of one — files and lines
  changed (merges: against the first parent), and when it reached the default branch.
- ``ah.repo_commit_file``: the files a commit changed with added/deleted lines (NULL: binary).
- ``ah.repo_push``: pushes the remote-tracking refs' reflogs record ("update by push").
- ``ah.backlog_task``: Backlog.md tasks of the work tree (``backlog/tasks``, ``completed``,
  ``archive``) with id, title, status, labels, assignee, dates and dependencies.
- ``ah.backlog_status_change``: every status a task's file took on the default branch's
  first-parent history, with the commit that brought it and that commit's time.
- ``ah.loop_state_line``: the lines of loop state logs (``codex/state-<date>-loop<N>.jsonl``,
  docs/design.md §11) in the work tree; ``ah.loops.progress_sources`` says, per progress column,
  which source gave its value (the precedence of `agent_history.loops.progress`).
- ``ah.ci_run``: GitHub Actions runs read with ``gh run list --json`` (`repos.ci`) when gh is
  installed and authenticated; otherwise nothing, and `collect` says why in one line.
- ``ah.collect_issue``: what could not be read (a task file with bad frontmatter, a shallow
  clone, a path that is not a repository): one row per (path, kind), the rest collected.
"""

from alembic import op

revision = "0019_collector"
down_revision = "0017_price_library"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.repository (
    id                 bigserial PRIMARY KEY,
    path               text NOT NULL UNIQUE,          -- absolute top-level of the work tree
    name               text NOT NULL,                 -- directory name
    default_branch     text,                          -- NULL: none could be determined
    is_shallow         boolean,
    gone               boolean NOT NULL DEFAULT false,
    first_collected_at timestamptz NOT NULL DEFAULT now(),
    changed_at         timestamptz NOT NULL DEFAULT now()  -- the last run that changed a row of it
);
COMMENT ON TABLE ah.repository IS 'Checkouts read by `collect` (issue 30); gone = collected before, missing now.';

CREATE TABLE ah.repo_commit (
    id                 bigserial PRIMARY KEY,
    repository_id      bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    sha                text NOT NULL,
    parents            text[] NOT NULL,
    authored_at        timestamptz NOT NULL,
    committed_at       timestamptz NOT NULL,
    subject            text NOT NULL,
    trailers           jsonb NOT NULL DEFAULT '[]',   -- [[key, value], …] naming no person
    task_ids           text[] NOT NULL DEFAULT '{}',  -- values of `Task:` trailers
    authored_by_me     boolean,                       -- NULL: no identities configured
    files_changed      integer,
    lines_added        integer,                       -- NULL: only binary files changed
    lines_deleted      integer,
    on_default_branch  boolean NOT NULL,
    reached_default_at timestamptz,                   -- commit time of the first-parent commit bringing it
    CONSTRAINT repo_commit_key UNIQUE (repository_id, sha)
);
CREATE INDEX repo_commit_sha_idx ON ah.repo_commit (sha text_pattern_ops);
CREATE INDEX repo_commit_task_idx ON ah.repo_commit USING gin (task_ids);
COMMENT ON TABLE ah.repo_commit IS 'Commits on local branches; authored_by_me only, never an email, name or hash of one.';

CREATE TABLE ah.repo_commit_file (
    commit_id      bigint NOT NULL REFERENCES ah.repo_commit (id) ON DELETE CASCADE,
    path           text NOT NULL,
    lines_added    integer,
    lines_deleted  integer,
    PRIMARY KEY (commit_id, path)
);

CREATE TABLE ah.repo_push (
    id             bigserial PRIMARY KEY,
    repository_id  bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    ref            text NOT NULL,                     -- remote-tracking ref, e.g. refs/remotes/origin/main
    sha            text NOT NULL,
    pushed_at      timestamptz NOT NULL,
    CONSTRAINT repo_push_key UNIQUE (repository_id, ref, sha, pushed_at)
);

CREATE TABLE ah.backlog_task (
    id             bigserial PRIMARY KEY,
    repository_id  bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    task_id        text NOT NULL,
    path           text NOT NULL,                     -- relative to the repository
    folder         text NOT NULL CHECK (folder IN ('tasks', 'completed', 'archive')),
    title          text,
    status         text,
    labels         text[] NOT NULL DEFAULT '{}',
    assignee       text[] NOT NULL DEFAULT '{}',
    created_date   text,                              -- as written (Backlog.md: 'YYYY-MM-DD[ HH:MM]')
    updated_date   text,
    dependencies   text[] NOT NULL DEFAULT '{}',
    CONSTRAINT backlog_task_key UNIQUE (repository_id, task_id)
);
CREATE INDEX backlog_task_status_idx ON ah.backlog_task (status);

CREATE TABLE ah.backlog_status_change (
    id             bigserial PRIMARY KEY,
    repository_id  bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    task_id        text NOT NULL,
    sha            text NOT NULL,                     -- the default branch's first-parent commit
    changed_at     timestamptz NOT NULL,              -- that commit's commit time
    old_status     text,                              -- NULL: the task's first appearance
    new_status     text,
    CONSTRAINT backlog_status_change_key UNIQUE (repository_id, task_id, sha)
);
CREATE INDEX backlog_status_change_at_idx ON ah.backlog_status_change (repository_id, changed_at);

CREATE TABLE ah.loop_state_line (
    id             bigserial PRIMARY KEY,
    repository_id  bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    path           text NOT NULL,                     -- relative: codex/state-<date>-loop<N>.jsonl
    line_number    integer NOT NULL,
    ts             timestamptz NOT NULL,
    event          text NOT NULL,                     -- landed | parked | accepted | joined
    task           text,
    lane           text,
    loop           text,                              -- "<repo> loop<N>" (joined)
    CONSTRAINT loop_state_line_key UNIQUE (repository_id, path, line_number)
);
COMMENT ON TABLE ah.loop_state_line IS 'Loop state logs read from the work tree (docs/design.md §11, loop state log).';

ALTER TABLE ah.loops ADD COLUMN progress_sources jsonb;
COMMENT ON COLUMN ah.loops.progress_sources IS 'column → where its value came from (closeout | state_log | task_trailers | done_flips | repository | transcripts).';

CREATE TABLE ah.ci_run (
    id             bigserial PRIMARY KEY,
    repository_id  bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    run_id         bigint NOT NULL,                   -- GitHub Actions' databaseId
    workflow       text,
    event          text,
    branch         text,
    head_sha       text NOT NULL,
    status         text,
    conclusion     text,                              -- NULL while the run goes on
    created_at     timestamptz,
    updated_at     timestamptz,
    url            text,
    CONSTRAINT ci_run_key UNIQUE (repository_id, run_id)
);
CREATE INDEX ci_run_sha_idx ON ah.ci_run (head_sha);

CREATE TABLE ah.collect_issue (
    id             bigserial PRIMARY KEY,
    repository_id  bigint REFERENCES ah.repository (id) ON DELETE CASCADE,
    path           text NOT NULL,
    kind           text NOT NULL,                     -- bad_frontmatter | shallow_clone | not_a_repository | …
    detail         text,
    seen_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT collect_issue_key UNIQUE NULLS NOT DISTINCT (repository_id, path, kind)
);
"""

DOWNGRADE = r"""
DROP VIEW IF EXISTS ah.repo_commit_session;  -- sql/60_collector.sql
DROP TABLE IF EXISTS ah.collect_issue;
DROP TABLE IF EXISTS ah.ci_run;
ALTER TABLE ah.loops DROP COLUMN IF EXISTS progress_sources;
DROP TABLE IF EXISTS ah.loop_state_line;
DROP TABLE IF EXISTS ah.backlog_status_change;
DROP TABLE IF EXISTS ah.backlog_task;
DROP TABLE IF EXISTS ah.repo_push;
DROP TABLE IF EXISTS ah.repo_commit_file;
DROP TABLE IF EXISTS ah.repo_commit;
DROP TABLE IF EXISTS ah.repository;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

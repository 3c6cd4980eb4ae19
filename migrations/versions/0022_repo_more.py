"""The collector's second half (issue 30): installed skills and plugins, permission rules, loop
charter/closeout metadata, and the per-repository history cursor.

Revision ID: 0022_repo_more
Revises: 0023_session_health
Create Date: 2026-12-02

Authoritative data like migration 0019's tables: written by `collect` (owner or ``ah_collector``),
kept by `rebuild`.

- ``ah.installed_skill``: a skill (a ``SKILL.md`` directory) or a Claude Code plugin, per
  harness and scope (user | project | local), with its source (a plugin's marketplace) and version
  (a plugin's version, a skill's SHA-256 of SKILL.md); ``repository_id`` for project skills;
  ``gone`` when it was seen before and is no longer installed (the row is kept).
- ``ah.permission_rule``: allow / deny / ask rules of the harnesses' settings files, per file.
- ``ah.loop_run_metadata``: each loop's charter and closeout in a repository's work tree: path,
  SHA-256, first line, mtime and size — never the body.
- ``ah.repository.history_cursor``: the default branch tip and the branch tips `collect` read last
  (``{"refs": {ref: sha}, "default": sha}``); the next run reads only commits not reachable from
  them, and reads everything again when one of them is no longer an ancestor of its ref (a
  rewritten history: force-push, rebase).
- ``ah.collect_run``: one row per `collect` run (when, repositories collected and failed, new
  commits, rows written, whether every path was collected): the ``run="collect"`` metrics.
- View ``ah.skill_use`` (sql/60_collector.sql): sessions that used an installed skill.
"""

from alembic import op

revision = "0022_repo_more"
down_revision = "0023_session_health"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.installed_skill (
    id             bigserial PRIMARY KEY,
    harness        text NOT NULL,                     -- claude | codex | pi
    kind           text NOT NULL CHECK (kind IN ('skill', 'plugin')),
    scope          text NOT NULL,                     -- user | project | local (plugins: as installed)
    name           text NOT NULL,
    path           text NOT NULL,                     -- SKILL.md, or the plugin's install path
    source         text,                              -- a plugin's marketplace; NULL for a skill
    version        text,                              -- plugin version, or SHA-256 (hex) of SKILL.md
    description    text,
    repository_id  bigint REFERENCES ah.repository (id) ON DELETE CASCADE,  -- project skills
    gone           boolean NOT NULL DEFAULT false,
    first_seen_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT installed_skill_key UNIQUE (harness, kind, path, name)
);
COMMENT ON TABLE ah.installed_skill IS 'Skills and plugins installed for the harnesses (collect, issue 30).';

CREATE TABLE ah.permission_rule (
    id             bigserial PRIMARY KEY,
    harness        text NOT NULL,
    scope          text NOT NULL,                     -- user | project | local
    settings_path  text NOT NULL,
    list           text NOT NULL CHECK (list IN ('allow', 'deny', 'ask')),
    rule           text NOT NULL,
    repository_id  bigint REFERENCES ah.repository (id) ON DELETE CASCADE,
    CONSTRAINT permission_rule_key UNIQUE (settings_path, list, rule)
);
COMMENT ON TABLE ah.permission_rule IS 'Allow/deny/ask rules of the harnesses'' settings files (collect, issue 30).';

CREATE TABLE ah.loop_run_metadata (
    id             bigserial PRIMARY KEY,
    repository_id  bigint NOT NULL REFERENCES ah.repository (id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('charter', 'closeout')),
    path           text NOT NULL,                     -- relative to the repository
    sha256         text NOT NULL,
    first_line     text NOT NULL,
    mtime          timestamptz NOT NULL,
    size_bytes     bigint NOT NULL,
    gone           boolean NOT NULL DEFAULT false,
    CONSTRAINT loop_run_metadata_key UNIQUE (repository_id, path)
);
COMMENT ON TABLE ah.loop_run_metadata IS 'Loop charters and closeouts in repositories: metadata only, never the body.';

CREATE TABLE ah.collect_run (
    id             bigserial PRIMARY KEY,
    started_at     timestamptz NOT NULL,
    finished_at    timestamptz NOT NULL,
    repositories   integer NOT NULL,                  -- collected
    failed         integer NOT NULL,                  -- not a repository, or git failed
    commits_new    integer NOT NULL,
    rows_written   bigint NOT NULL,
    ok             boolean NOT NULL                   -- every path named was collected
);
COMMENT ON TABLE ah.collect_run IS 'One row per collect run: the ah_run_* metrics with run="collect".';

ALTER TABLE ah.repository ADD COLUMN history_cursor jsonb;
COMMENT ON COLUMN ah.repository.history_cursor IS 'Branch tips read by the last collect: {"refs": {ref: sha}}.';
"""

DOWNGRADE = r"""
DROP VIEW IF EXISTS ah.skill_use;  -- sql/60_collector.sql
ALTER TABLE ah.repository DROP COLUMN IF EXISTS history_cursor;
DROP TABLE IF EXISTS ah.collect_run;
DROP TABLE IF EXISTS ah.loop_run_metadata;
DROP TABLE IF EXISTS ah.permission_rule;
DROP TABLE IF EXISTS ah.installed_skill;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

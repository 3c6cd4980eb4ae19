"""Session health (issue 32; docs/health.md): the rule tables and the harness capability table.

- ``ah.health_signal`` / ``ah.health_rule`` / ``ah.health_grade`` — the grading rule as data,
  loaded from `agent_history.classify.health` by `agent_history.db.health.load_health` whenever its
  data key (``ah.meta['health']``) differs: signals with their unit and the capability they need,
  (signal, threshold, points, source) rules, and the grade bands.
- ``ah.harness_capability`` — (agent, capability) for every capability a harness row declares
  (`agent_history.harnesses`), loaded the same way: what the view ``ah.session_health``
  (``sql/37_health.sql``) reads to tell "not recorded by this harness" (NULL, unknown) from none.

Configuration, not derived data: `rebuild` leaves them; the loader rewrites them whole.

Revision ID: 0023_session_health
Revises: 0020_archive
Create Date: 2026-12-02
"""

from alembic import op

revision = "0023_session_health"
down_revision = "0020_archive"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.health_signal (
    name        text PRIMARY KEY,
    position    integer NOT NULL,
    label       text NOT NULL,
    unit        text NOT NULL CHECK (unit IN ('share', 'count', 'flag')),
    capability  text,
    definition  text NOT NULL
);
CREATE TABLE ah.health_rule (
    signal      text NOT NULL REFERENCES ah.health_signal (name) ON DELETE CASCADE,
    threshold   numeric NOT NULL,
    points      integer NOT NULL CHECK (points > 0),
    source      text NOT NULL,
    PRIMARY KEY (signal, threshold)
);
CREATE TABLE ah.health_grade (
    grade       text PRIMARY KEY,
    min_score   integer NOT NULL UNIQUE CHECK (min_score BETWEEN 0 AND 100)
);
CREATE TABLE ah.harness_capability (
    agent       text NOT NULL,
    capability  text NOT NULL,
    PRIMARY KEY (agent, capability)
);
"""

DOWNGRADE = r"""
DROP VIEW IF EXISTS ah.session_health;
DROP VIEW IF EXISTS ah.session_health_signals;
DROP TABLE IF EXISTS ah.harness_capability;
DROP TABLE IF EXISTS ah.health_grade;
DROP TABLE IF EXISTS ah.health_rule;
DROP TABLE IF EXISTS ah.health_signal;
DELETE FROM ah.meta WHERE key = 'health';
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

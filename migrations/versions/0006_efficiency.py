"""Efficiency classifier: result positions, raw record types, per-model-call triggers (issue 11).

Revision ID: 0006_efficiency
Revises: 0005_source_windows
Create Date: 2026-12-01

- ``tool_call.output_byte_offset`` / ``output_line``: where the record carrying the call's
  *result* sits (a result's record differs from its call's), so attribution can order results
  physically without re-reading files.
- ``message.record_type`` / ``record_origin``: the raw record type and origin the harness wrote.
- ``model_call.trigger``: what triggered the call (`agent_history.classify.rules.TRIGGERS`),
  NULL when not classified; ``session.thread_role``: root | worker | solo. Both are filled by
  the post-pass (``ah.refresh_efficiency`` in ``sql/35_efficiency.sql``).

Files indexed by the previous parser versions keep NULL in the new columns until ``rebuild``
(the loader records ``parser_upgraded`` for them).
"""

from alembic import op

revision = "0006_efficiency"
down_revision = "0005_source_windows"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.tool_call
    ADD COLUMN output_byte_offset bigint,
    ADD COLUMN output_line        bigint;
ALTER TABLE ah.message
    ADD COLUMN record_type   text,
    ADD COLUMN record_origin text;
ALTER TABLE ah.model_call
    ADD COLUMN trigger text
        CONSTRAINT model_call_trigger_check CHECK (trigger IN (
            'user', 'model', 'work', 'status', 'wait', 'event', 'noop', 'orchestrate', 'agent_msg'));
ALTER TABLE ah.session
    ADD COLUMN thread_role text
        CONSTRAINT session_thread_role_check CHECK (thread_role IN ('root', 'worker', 'solo'));
CREATE INDEX session_thread_role_idx ON ah.session (thread_role);
"""

DOWNGRADE = r"""
DROP VIEW IF EXISTS ah.efficiency;
DROP FUNCTION IF EXISTS ah.refresh_efficiency(bigint[]);
DROP INDEX IF EXISTS ah.session_thread_role_idx;
ALTER TABLE ah.session DROP COLUMN IF EXISTS thread_role;
ALTER TABLE ah.model_call DROP COLUMN IF EXISTS trigger;
ALTER TABLE ah.message DROP COLUMN IF EXISTS record_origin, DROP COLUMN IF EXISTS record_type;
ALTER TABLE ah.tool_call DROP COLUMN IF EXISTS output_line, DROP COLUMN IF EXISTS output_byte_offset;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

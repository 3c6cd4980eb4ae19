"""Natural keys by digest without a column (docs/performance.md, decisions 15 and 20): the message,
tool-call and model-call keys as unique expression indexes on ``(agent, ah.key_digest(uid))``.

The three uids are the harnesses' record ids (``message_uid`` 44.5 bytes on average on the shared
corpus, ``tool_call_uid`` 30.4, ``call_uid`` 31.3) and stay stored as text: readers return them
and other tables name rows by them (``file_touch.tool_call_uid``, ``git_event.tool_call_uid``,
a summary's ``parent_uid``). Only the key's B-tree changes: its entries hold the uid's 16-byte
digest (`ah.key_digest`, migration 0029_touch_keys) instead of the text — ×10 cold load, 2.74 →
1.79 MB for the three. The index keeps the constraint's name (``<table>_natural_key``), so the
bulk pass's rebuild (`ingest.bulk.REINDEX_AFTER`) and the merges' ``ON CONFLICT`` target
(`db.tables.merges.KEY_DIGESTS`) find it. A lookup by uid must compare digests to use it:
``ah.key_digest(t.uid) = ah.key_digest(x) AND t.uid = x`` (tests/test_key_digests.py EXPLAINs
every reader's). Two uids of one agent share a digest with probability ≈ n² / 2¹²⁹; the second
would then merge into the first.

Downgrade: the text constraints come back (same rows; the unique text key cannot fail where the
digest key held).

Revision ID: 0030_key_digests
Revises: 0029_touch_keys
Create Date: 2026-12-03
"""

from alembic import op

revision = "0030_key_digests"
down_revision = "0029_touch_keys"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.message DROP CONSTRAINT message_natural_key;
CREATE UNIQUE INDEX message_natural_key ON ah.message (agent, ah.key_digest(message_uid));
ALTER TABLE ah.tool_call DROP CONSTRAINT tool_call_natural_key;
CREATE UNIQUE INDEX tool_call_natural_key ON ah.tool_call (agent, ah.key_digest(tool_call_uid));
ALTER TABLE ah.model_call DROP CONSTRAINT model_call_natural_key;
CREATE UNIQUE INDEX model_call_natural_key ON ah.model_call (agent, ah.key_digest(call_uid));
"""

DOWNGRADE = r"""
DROP INDEX ah.message_natural_key;
ALTER TABLE ah.message ADD CONSTRAINT message_natural_key UNIQUE (agent, message_uid);
DROP INDEX ah.tool_call_natural_key;
ALTER TABLE ah.tool_call ADD CONSTRAINT tool_call_natural_key UNIQUE (agent, tool_call_uid);
DROP INDEX ah.model_call_natural_key;
ALTER TABLE ah.model_call ADD CONSTRAINT model_call_natural_key UNIQUE (agent, call_uid);
"""


def upgrade() -> None:
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)

"""Cursor, Copilot, VS Code Copilot Chat, memories (issue 16).

Revision ID: 0011_harnesses
Revises: 0010_source_kinds
Create Date: 2026-12-01
"""

from alembic import op

revision = "0011_harnesses"
down_revision = "0010_source_kinds"
branch_labels = None
depends_on = None

UPGRADE = r"""
SELECT 1;
"""

DOWNGRADE = r"""
SELECT 1;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)

"""Usage reports and per-call accounting (issue 19).

Revision ID: 0013_usage
Revises: 0012_speed
Create Date: 2026-12-01
"""

from alembic import op

revision = "0013_usage"
down_revision = "0012_speed"
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

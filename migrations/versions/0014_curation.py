"""Recall and session curation (issue 17).

Revision ID: 0014_curation
Revises: 0013_usage
Create Date: 2026-12-01
"""

from alembic import op

revision = "0014_curation"
down_revision = "0013_usage"
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

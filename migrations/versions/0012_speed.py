"""Ingest speed and store size (issue 18).

Revision ID: 0012_speed
Revises: 0011_harnesses
Create Date: 2026-12-01
"""

from alembic import op

revision = "0012_speed"
down_revision = "0011_harnesses"
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

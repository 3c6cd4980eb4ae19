"""Loader: hashed windows spread over the indexed prefix of each source file (issue 10, defect 3).

Revision ID: 0005_source_windows
Revises: 0004_search_i18n
Create Date: 2026-12-01

Placeholder revision: the chain is fixed up front so parallel work on separate revisions does not
collide. Until its issue fills it, upgrade and downgrade do nothing.
"""

revision = "0005_source_windows"
down_revision = "0004_search_i18n"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

"""Search for every script: accent folding, CJK bigrams, emoji/symbol tokens (issue 10, defect 4).

Revision ID: 0004_search_i18n
Revises: 0003_embeddings
Create Date: 2026-12-01

Placeholder revision: the chain is fixed up front so parallel work on separate revisions does not
collide. Until its issue fills it, upgrade and downgrade do nothing.
"""

revision = "0004_search_i18n"
down_revision = "0003_embeddings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

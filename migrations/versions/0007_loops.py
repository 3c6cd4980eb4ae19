"""Loops: launches, lanes, closeouts (issue 12).

Revision ID: 0007_loops
Revises: 0006_efficiency
Create Date: 2026-12-01

Placeholder revision: the chain is fixed up front so parallel work on separate revisions does not
collide. Until its issue fills it, upgrade and downgrade do nothing.
"""

revision = "0007_loops"
down_revision = "0006_efficiency"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

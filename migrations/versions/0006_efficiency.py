"""Efficiency classifier: result positions, raw record types, per-model-call triggers (issue 11).

Revision ID: 0006_efficiency
Revises: 0005_source_windows
Create Date: 2026-12-01

Placeholder revision: the chain is fixed up front so parallel work on separate revisions does not
collide. Until its issue fills it, upgrade and downgrade do nothing.
"""

revision = "0006_efficiency"
down_revision = "0005_source_windows"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

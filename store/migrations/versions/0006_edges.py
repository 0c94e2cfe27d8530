"""Edges: requests seen once (Slack replays and retries), the organisation above a
workspace (Slack Enterprise Grid), and channels whose posts the platform refuses for good.

Revision ID: 0006_edges
Revises: 0005_operations
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_edges"
down_revision = "0005_operations"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "seen_requests",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("seen_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_seen_requests_seen_at", "seen_requests", ["seen_at"])
    with op.batch_alter_table("channels") as channels:
        channels.add_column(sa.Column("org", sa.String(100)))
        channels.add_column(sa.Column("refusals", sa.Integer, nullable=False, server_default="0"))
        channels.add_column(sa.Column("refused_on", sa.Date))
        channels.add_column(sa.Column("pause_notice", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("channels") as channels:
        channels.drop_column("pause_notice")
        channels.drop_column("refused_on")
        channels.drop_column("refusals")
        channels.drop_column("org")
    op.drop_index("ix_seen_requests_seen_at", "seen_requests")
    op.drop_table("seen_requests")

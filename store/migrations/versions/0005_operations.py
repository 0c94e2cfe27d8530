"""Operations: scheduled corpus feeds, and heartbeats (the scheduler's last tick).

Revision ID: 0005_operations
Revises: 0004_meetings
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_operations"
down_revision = "0004_meetings"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "feeds",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(200), nullable=False, unique=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("cron", sa.String(100), nullable=False),
        sa.Column("format", sa.String(40)),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("last_run_at", TIMESTAMP),
        sa.Column("last_status", sa.String(20)),
        sa.Column("last_message", sa.Text),
    )
    op.create_table(
        "heartbeats",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("heartbeats")
    op.drop_table("feeds")

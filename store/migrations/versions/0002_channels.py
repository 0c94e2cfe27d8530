"""Channels with schedules and topics, their posts, and the daily-post claims.

Revision ID: 0002_channels
Revises: 0001_corpus
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_channels"
down_revision = "0001_corpus"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "channels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("platform", sa.String(20), nullable=False),
        sa.Column("workspace", sa.String(100), nullable=False),
        sa.Column("channel", sa.String(100), nullable=False),
        sa.Column("post_time", sa.String(5)),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("days", sa.String(40), nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("paused_until", sa.Date),
        sa.Column("topics", sa.JSON, nullable=False),
        sa.Column("collections", sa.JSON, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.UniqueConstraint("platform", "workspace", "channel", name="uq_channel"),
    )
    op.create_table(
        "posts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("local_date", sa.Date),
        sa.Column("posted_at", TIMESTAMP, nullable=False),
        sa.Column("message_ref", sa.String(200)),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("matched", sa.JSON, nullable=False),
        sa.UniqueConstraint("channel_id", "paper_id", name="uq_post_channel_paper"),
    )
    op.create_index("ix_posts_channel_posted", "posts", ["channel_id", "posted_at"])
    op.create_table(
        "claims",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("local_date", sa.Date, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("post_id", sa.Integer, sa.ForeignKey("posts.id", ondelete="SET NULL")),
        sa.Column("error", sa.Text),
        sa.Column("claimed_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.UniqueConstraint("channel_id", "local_date", name="uq_claim_channel_date"),
    )


def downgrade() -> None:
    op.drop_table("claims")
    op.drop_table("posts")
    op.drop_table("channels")

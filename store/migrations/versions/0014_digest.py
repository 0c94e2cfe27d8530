"""The weekly digest: each channel's digest plan (`digest_plans`) and one row per channel
and ISO week (`digests`), the claim that posts it exactly once and what it said.

Revision ID: 0014_digest
Revises: 0010_reaction_order
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_digest"
down_revision = "0013_follows"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "digest_plans",
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("weekday", sa.String(3), nullable=False),
        sa.Column("local_time", sa.String(5), nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
    )
    op.create_table(
        "digests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("week", sa.String(10), nullable=False),
        sa.Column("due_at", TIMESTAMP, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("claimed_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("message_ref", sa.String(200)),
        sa.Column("body", sa.JSON),
        sa.UniqueConstraint("channel_id", "week", name="uq_digest_channel_week"),
    )


def downgrade() -> None:
    op.drop_table("digests")
    op.drop_table("digest_plans")

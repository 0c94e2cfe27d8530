"""Reading sessions: the weekly meeting, skips, the presenter rota, meetings, notes.

Revision ID: 0004_meetings
Revises: 0003_votes_polls
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_meetings"
down_revision = "0003_votes_polls"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def _channel() -> sa.Column[int]:
    return sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "meeting_plans",
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("weekday", sa.String(3), nullable=False),
        sa.Column("local_time", sa.String(5), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
    )
    op.create_table(
        "meeting_skips",
        sa.Column("id", sa.Integer, primary_key=True),
        _channel(),
        sa.Column("local_date", sa.Date, nullable=False),
        sa.UniqueConstraint("channel_id", "local_date", name="uq_meeting_skip"),
    )
    op.create_table(
        "presenters",
        sa.Column("id", sa.Integer, primary_key=True),
        _channel(),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("added_at", TIMESTAMP, nullable=False),
        sa.Column("volunteered_at", TIMESTAMP),
        sa.UniqueConstraint("channel_id", "user_id", name="uq_presenter"),
    )
    op.create_table(
        "meetings",
        sa.Column("id", sa.Integer, primary_key=True),
        _channel(),
        sa.Column("local_date", sa.Date, nullable=False),
        sa.Column("starts_at", TIMESTAMP, nullable=False),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="SET NULL")),
        sa.Column("presenter", sa.String(100)),
        sa.Column("day_before_sent_at", TIMESTAMP),
        sa.Column("hour_before_sent_at", TIMESTAMP),
        sa.UniqueConstraint("channel_id", "local_date", name="uq_meeting"),
    )
    op.create_table(
        "paper_notes",
        sa.Column("id", sa.Integer, primary_key=True),
        _channel(),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_paper_notes_channel_paper", "paper_notes", ["channel_id", "paper_id"])
    with op.batch_alter_table("queue_items") as batch:
        batch.add_column(sa.Column("presented_by", sa.String(100)))


def downgrade() -> None:
    with op.batch_alter_table("queue_items") as batch:
        batch.drop_column("presented_by")
    for table in ("paper_notes", "meetings", "presenters", "meeting_skips", "meeting_plans"):
        op.drop_table(table)

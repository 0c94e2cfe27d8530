"""Votes on posts, nominations, reading polls and the reading queue.

Revision ID: 0003_votes_polls
Revises: 0002_channels
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_votes_polls"
down_revision = "0002_channels"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def _fk(table: str, ondelete: str = "CASCADE", nullable: bool = False) -> sa.Column[int]:
    return sa.Column(f"{table[:-1]}_id", sa.Integer, sa.ForeignKey(f"{table}.id", ondelete=ondelete), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "post_votes",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("posts"),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("slot", sa.String(10), nullable=False),
        sa.Column("value", sa.String(10), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.UniqueConstraint("post_id", "user_id", "slot", name="uq_post_vote"),
    )
    op.create_index("ix_post_votes_post_id", "post_votes", ["post_id"])
    op.create_table(
        "nominations",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("channels"),
        _fk("papers"),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.UniqueConstraint("channel_id", "paper_id", name="uq_nomination"),
    )
    op.create_table(
        "polls",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("channels"),
        sa.Column("created_by", sa.String(100), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("closes_at", TIMESTAMP, nullable=False),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("closed_at", TIMESTAMP),
        sa.Column("winner_paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="SET NULL")),
        sa.Column("result", sa.JSON, nullable=False),
        sa.Column("message_ref", sa.String(200)),
    )
    op.create_index("ix_polls_channel_id", "polls", ["channel_id"])
    op.create_table(
        "poll_options",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("polls"),
        sa.Column("position", sa.Integer, nullable=False),
        _fk("papers"),
        sa.Column("nominated_at", TIMESTAMP),
        sa.UniqueConstraint("poll_id", "position", name="uq_poll_option"),
    )
    op.create_table(
        "poll_votes",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("polls"),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.UniqueConstraint("poll_id", "user_id", name="uq_poll_vote"),
    )
    op.create_table(
        "queue_items",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("channels"),
        _fk("papers"),
        _fk("polls", ondelete="SET NULL", nullable=True),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("added_at", TIMESTAMP, nullable=False),
        sa.Column("done_at", TIMESTAMP),
        sa.UniqueConstraint("channel_id", "paper_id", name="uq_queue_item"),
    )


def downgrade() -> None:
    for table in ("queue_items", "poll_votes", "poll_options", "polls", "nominations", "post_votes"):
        op.drop_table(table)

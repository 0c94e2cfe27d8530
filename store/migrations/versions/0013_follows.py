"""Follows: what a channel follows (arXiv categories, authors, the papers citing what it
read), each follow's daily fetch claimed once per day, the papers each brought, the
OpenAlex work ids of papers (a cache), and each channel's fresh-picks window.

Revision ID: 0013_follows
Revises: 0010_reaction_order
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_follows"
down_revision = "0012_zotero"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "follows",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("target", sa.String(100), nullable=False),
        sa.Column("query", sa.String(200), nullable=False, server_default=""),
        sa.Column("label", sa.String(300), nullable=False),
        sa.Column("collection", sa.String(200), nullable=False),
        sa.Column("created_by", sa.String(100), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("fetched_through", WHEN),
        sa.Column("last_run_at", WHEN),
        sa.Column("last_status", sa.String(20)),
        sa.Column("last_message", sa.Text),
        sa.UniqueConstraint("channel_id", "kind", "target", "query", name="uq_follow"),
    )
    op.create_table(
        "follow_claims",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("follow_id", sa.Integer, sa.ForeignKey("follows.id", ondelete="CASCADE"), nullable=False),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("claimed_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.Column("error", sa.Text),
        sa.UniqueConstraint("follow_id", "day", name="uq_follow_claim"),
    )
    op.create_table(
        "follow_arrivals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("follow_id", sa.Integer, sa.ForeignKey("follows.id", ondelete="CASCADE"), nullable=False),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("arrived_at", WHEN, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.UniqueConstraint("follow_id", "paper_id", name="uq_follow_arrival"),
    )
    op.create_index("ix_follow_arrivals_arrived", "follow_arrivals", ["arrived_at"])
    op.create_table(
        "openalex_works",
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("work_id", sa.String(40)),
        sa.Column("resolved_at", WHEN, nullable=False),
    )
    op.create_table(
        "fresh_windows",
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("days", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("fresh_windows")
    op.drop_table("openalex_works")
    op.drop_table("follow_arrivals")
    op.drop_table("follow_claims")
    op.drop_table("follows")

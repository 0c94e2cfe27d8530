"""`briefs`: each paper's brief made once per text, model, language and prompt version (a
claim row first, so one process calls the model); `brief_spend`: the model calls each
channel caused a day, against its daily budget; `brief_channels`: the language a
channel's briefs come in.

Revision ID: 0019_briefs
Revises: 0018_follow_waits
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0019_briefs"
down_revision = "0018_follow_waits"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "briefs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("paper_id", sa.Integer(), sa.ForeignKey("papers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text_hash", sa.String(64), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("language", sa.String(20), nullable=False),
        sa.Column("prompt_version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("tldr", sa.Text(), nullable=True),
        sa.Column("contribution", sa.Text(), nullable=True),
        sa.Column("questions", sa.JSON(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("paper_id", "text_hash", "model", "language", "prompt_version", name="uq_brief"),
    )
    op.create_table(
        "brief_spend",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("channel_id", sa.Integer(), sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.UniqueConstraint("channel_id", "day", name="uq_brief_spend"),
    )
    op.create_table(
        "brief_channels",
        sa.Column("channel_id", sa.Integer(), sa.ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("language", sa.String(20), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("brief_channels")
    op.drop_table("brief_spend")
    op.drop_table("briefs")

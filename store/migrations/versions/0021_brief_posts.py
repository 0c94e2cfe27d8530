"""`brief_channels.on_posts`: whether a channel's paper of the day and weekly digest carry
a one-line TL;DR from its language model (`briefs on`), made ahead by the scheduler.

Revision ID: 0021_brief_posts
Revises: 0020_enrich
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0021_brief_posts"
down_revision = "0020_enrich"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("brief_channels", sa.Column("on_posts", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("brief_channels") as batch:
        batch.drop_column("on_posts")

"""Papers from the conversation, reactions that vote, and links for the group's memory.

- `additions`: every `add` a member made (what they asked for, which paper it became,
  or why it was refused), for "added by ... on ..." on a card and the per-member
  hourly limit on fetches.
- `channels.reactions`: the emoji that vote on a channel's posts (NULL: 👍 👎 ✅).
- `channel_links`: the secret links of a channel's calendar feed and archive page,
  stored as SHA-256 digests of their tokens, one per channel, kind and member who asked
  (only a digest is kept, so a link cannot be shown twice: each member gets their own).

Revision ID: 0008_conversation
Revises: 0007_source_fields
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_conversation"
down_revision = "0007_source_fields"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "additions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("platform", sa.String(20), nullable=False),
        sa.Column("workspace", sa.String(100), nullable=False),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="SET NULL")),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("user_name", sa.String(200), nullable=False, server_default=""),
        sa.Column("asked", sa.String(2000), nullable=False),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="SET NULL")),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_additions_user_time", "additions", ["platform", "workspace", "user_id", "created_at"])
    op.create_index("ix_additions_paper", "additions", ["paper_id"])
    with op.batch_alter_table("channels") as channels:
        channels.add_column(sa.Column("reactions", sa.String(200)))
    op.create_table(
        "channel_links",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("user_id", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.UniqueConstraint("channel_id", "kind", "user_id", name="uq_channel_link_member"),
        sa.UniqueConstraint("token_hash", name="uq_channel_link_token"),
    )


def downgrade() -> None:
    op.drop_table("channel_links")
    with op.batch_alter_table("channels") as channels:
        channels.drop_column("reactions")
    op.drop_index("ix_additions_paper", "additions")
    op.drop_index("ix_additions_user_time", "additions")
    op.drop_table("additions")

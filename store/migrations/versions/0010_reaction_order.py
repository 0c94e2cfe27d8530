"""The newest reaction event applied per member and post (`reaction_marks`), so a
reaction taken off and handled before it was put on leaves no vote.

Reactions already counted have no mark: the first event of each kind after this
revision is applied as it comes, as before.

Revision ID: 0010_reaction_order
Revises: 0009_changes
Create Date: 2026-11-26
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0010_reaction_order"
down_revision = "0009_changes"
branch_labels = None
depends_on = None

KINDS = ("up", "down", "read")


def upgrade() -> None:
    columns: list[sa.Column[Any]] = []
    for kind in KINDS:
        columns += [sa.Column(f"{kind}_order", sa.BigInteger),
                    sa.Column(f"{kind}_on", sa.Boolean, nullable=False)]
    op.create_table(
        "reaction_marks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("post_id", sa.Integer, sa.ForeignKey("posts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.String(100), nullable=False),
        *columns,
        sa.UniqueConstraint("post_id", "user_id", name="uq_reaction_mark"),
    )
    op.create_index("ix_reaction_marks_post_id", "reaction_marks", ["post_id"])


def downgrade() -> None:
    op.drop_table("reaction_marks")

"""A meeting's length, place and call link (`session 90m at Room 4.12`, `session at
https://...`): three columns of `meeting_plans`, and the same three of `meetings`, where a
meeting held keeps them when the plan changes later. Plans made before keep an hour, as
the calendar booked them, and no place or link.

Revision ID: 0011_meeting_details
Revises: 0010_reaction_order
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_meeting_details"
down_revision = "0010_reaction_order"
branch_labels = None
depends_on = None

# The lengths as this revision made them (store.models keeps the live ones).
PLACE_CHARS = 200
LINK_CHARS = 1000


def upgrade() -> None:
    with op.batch_alter_table("meeting_plans") as batch:
        batch.add_column(sa.Column("length_minutes", sa.Integer, nullable=False, server_default="60"))
        batch.add_column(sa.Column("place", sa.String(PLACE_CHARS)))
        batch.add_column(sa.Column("link", sa.String(LINK_CHARS)))
    with op.batch_alter_table("meetings") as batch:
        batch.add_column(sa.Column("length_minutes", sa.Integer))
        batch.add_column(sa.Column("place", sa.String(PLACE_CHARS)))
        batch.add_column(sa.Column("link", sa.String(LINK_CHARS)))


def downgrade() -> None:
    for table in ("meetings", "meeting_plans"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("link")
            batch.drop_column("place")
            batch.drop_column("length_minutes")


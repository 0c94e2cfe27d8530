"""`follows.wait_until`: a follow put off until then, because its provider asked to wait
(Retry-After) longer than a fetch may take, or its fetch ran out of time; the scheduled
fetches leave it alone until that moment, on whichever process.

Revision ID: 0018_follow_waits
Revises: 0017_embedding_claims
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0018_follow_waits"
down_revision = "0017_embedding_claims"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("follows", sa.Column("wait_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("follows") as batch:
        batch.drop_column("wait_until")

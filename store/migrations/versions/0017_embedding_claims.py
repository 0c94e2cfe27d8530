"""`embedding_claims`: the papers a run is embedding under a model, keyed by paper and model,
with the run's random token and when it claimed them, so that several processes on one
database embed each paper once (a claim past its lease is taken again).

Revision ID: 0017_embedding_claims
Revises: 0016_paper_vectors
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0017_embedding_claims"
down_revision = "0016_paper_vectors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "embedding_claims",
        sa.Column("paper_id", sa.Integer(), sa.ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("embedding_models.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("owner", sa.String(32), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("embedding_claims")

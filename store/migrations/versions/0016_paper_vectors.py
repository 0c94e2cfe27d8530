"""`paper_vectors`: each paper's vector under an embedding model (int8 codes and a scale),
keyed by paper and model (`embedding_models`, by number), with the hash of the text it was
made from and the version of the write that stored it (`corpus_state.vectors_version`,
which every write moves on).

Revision ID: 0016_paper_vectors
Revises: 0015_unused_title_index
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_paper_vectors"
down_revision = "0015_unused_title_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "embedding_models",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
    )
    op.create_table(
        "paper_vectors",
        sa.Column("paper_id", sa.Integer(), sa.ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("embedding_models.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("text_hash", sa.String(16), nullable=False),
        sa.Column("codes", sa.LargeBinary(), nullable=False),
        sa.Column("scale", sa.Float(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
    )
    op.create_index("ix_paper_vectors_model_version", "paper_vectors", ["model_id", "version"])
    with op.batch_alter_table("corpus_state") as table:
        table.add_column(sa.Column("vectors_version", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("corpus_state") as table:
        table.drop_column("vectors_version")
    op.drop_index("ix_paper_vectors_model_version", table_name="paper_vectors")
    op.drop_table("paper_vectors")
    op.drop_table("embedding_models")

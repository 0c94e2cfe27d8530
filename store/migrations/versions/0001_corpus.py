"""The corpus: papers, their external ids and sources, and the corpus revision.

Revision ID: 0001_corpus
Revises:
Create Date: 2026-11-22
"""

from datetime import datetime, timezone

import sqlalchemy as sa
from alembic import op

revision = "0001_corpus"
down_revision = None
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "papers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("title_key", sa.String(512), nullable=False),
        sa.Column("title_derived", sa.Boolean, nullable=False),
        sa.Column("authors", sa.JSON, nullable=False),
        sa.Column("abstract", sa.Text, nullable=False),
        sa.Column("url", sa.Text),
        sa.Column("track", sa.String(100)),
        sa.Column("presentation", sa.String(200)),
        sa.Column("award", sa.String(200)),
        sa.Column("venue", sa.String(300)),
        sa.Column("year", sa.Integer),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("notes", sa.JSON, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_papers_title_key", "papers", ["title_key"])
    op.create_table(
        "paper_external_ids",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("scheme", sa.String(32), nullable=False),
        sa.Column("value", sa.String(255), nullable=False),
        sa.UniqueConstraint("scheme", "value", name="uq_external_id"),
    )
    op.create_index("ix_paper_external_ids_paper_id", "paper_external_ids", ["paper_id"])
    op.create_table(
        "paper_sources",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("collection", sa.String(200), nullable=False),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("format", sa.String(32), nullable=False),
        sa.UniqueConstraint("paper_id", "collection", "source", name="uq_paper_source"),
    )
    op.create_index("ix_paper_sources_collection", "paper_sources", ["collection"])
    corpus_state = op.create_table(
        "corpus_state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
    )
    # The one row exists from the start, so bumping it is always a plain UPDATE and two
    # first imports cannot race to insert it.
    op.bulk_insert(corpus_state, [{"id": 1, "revision": 0, "updated_at": datetime.now(timezone.utc)}])


def downgrade() -> None:
    op.drop_table("corpus_state")
    op.drop_table("paper_sources")
    op.drop_table("paper_external_ids")
    op.drop_table("papers")

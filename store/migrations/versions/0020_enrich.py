"""`enrich_attempts`: each paper asked of a provider (OpenAlex) by the enrichment, how it
went and when it may be asked again; `enrich_turns`: each provider's last run and the wait
it asked for. What the enrichment fills in is a paper source of its own ("filled:openalex"),
in the tables that exist.

Revision ID: 0020_enrich
Revises: 0019_briefs
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_enrich"
down_revision = "0019_briefs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "enrich_attempts",
        sa.Column("paper_id", sa.Integer(), sa.ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("provider", sa.String(20), primary_key=True),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("work_id", sa.String(40), nullable=True),
        sa.Column("cited_by", sa.Integer(), nullable=True),
        sa.Column("tried_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retry_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_enrich_attempts_retry", "enrich_attempts", ["provider", "retry_at"])
    op.create_table(
        "enrich_turns",
        sa.Column("provider", sa.String(20), primary_key=True),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("wait_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_message", sa.Text(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("enrich_turns")
    op.drop_index("ix_enrich_attempts_retry", table_name="enrich_attempts")
    op.drop_table("enrich_attempts")

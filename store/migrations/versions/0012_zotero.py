"""Zotero group library sync (issue 30): a channel's link to a group collection, the
collection's items paperclub knows of, and the members' notes written there as child notes.

Revision ID: 0012_zotero
Revises: 0011_meeting_details
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_zotero"
# Developed on 0010; the lead re-points this at 0011_meeting_details when both land.
down_revision = "0011_meeting_details"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "zotero_links",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_id", sa.Integer, sa.ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
        sa.Column("group_id", sa.BigInteger),
        sa.Column("group_name", sa.String(300)),
        sa.Column("collection_key", sa.String(8)),
        sa.Column("collection_name", sa.String(300)),
        sa.Column("api_key", sa.Text),
        sa.Column("linked_by", sa.String(100), nullable=False),
        sa.Column("linked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("read_version", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("read_start", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lease_until", sa.DateTime(timezone=True)),
        sa.Column("lease_owner", sa.String(32)),
        sa.Column("last_sync_at", sa.DateTime(timezone=True)),
        sa.Column("last_error", sa.Text),
        sa.Column("failed_at", sa.DateTime(timezone=True)),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("retry_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("channel_id", name="uq_zotero_link_channel"),
    )
    op.create_table(
        "zotero_items",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("link_id", sa.Integer, sa.ForeignKey("zotero_links.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_key", sa.String(8), nullable=False),
        sa.Column("version", sa.BigInteger),
        sa.Column("paper_id", sa.Integer, sa.ForeignKey("papers.id", ondelete="SET NULL")),
        sa.Column("doi", sa.String(255)),
        sa.Column("arxiv", sa.String(255)),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("write_token", sa.String(32)),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("link_id", "item_key", name="uq_zotero_item_key"),
        sa.UniqueConstraint("link_id", "paper_id", name="uq_zotero_item_paper"),
    )
    op.create_index("ix_zotero_items_doi", "zotero_items", ["link_id", "doi"])
    op.create_index("ix_zotero_items_arxiv", "zotero_items", ["link_id", "arxiv"])
    op.create_table(
        "zotero_notes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("link_id", sa.Integer, sa.ForeignKey("zotero_links.id", ondelete="CASCADE"), nullable=False),
        sa.Column("note_id", sa.Integer, sa.ForeignKey("paper_notes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_key", sa.String(8), nullable=False),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("write_token", sa.String(32)),
        sa.UniqueConstraint("link_id", "note_id", name="uq_zotero_note"),
    )


def downgrade() -> None:
    op.drop_table("zotero_notes")
    op.drop_table("zotero_items")
    op.drop_table("zotero_links")

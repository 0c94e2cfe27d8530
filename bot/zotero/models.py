"""The Zotero feature's tables: a channel's link to a group library, and what was written there."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base, utcnow


class ZoteroLink(Base):
    """A channel's Zotero group library (and collection) that its papers are written to
    (bot/zotero). `api_key`: the key a manager gave in chat, Fernet-encrypted; NULL: the
    operator's PAPERCLUB_ZOTERO_API_KEY. A tick claims the link (`lease_until`) before it
    syncs, so one process at a time writes for a channel; `retry_at` postpones the next
    sync after a failure or when Zotero asked to wait (Backoff, Retry-After)."""

    __tablename__ = "zotero_links"
    __table_args__ = (UniqueConstraint("channel_id", name="uq_zotero_link_channel"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    # NULL: a key was given (`zotero key`) but no group linked yet; nothing is synced.
    group_id: Mapped[int | None] = mapped_column(BigInteger)
    group_name: Mapped[str | None] = mapped_column(String(300))
    collection_key: Mapped[str | None] = mapped_column(String(8))  # NULL: the library's top level
    collection_name: Mapped[str | None] = mapped_column(String(300))
    api_key: Mapped[str | None] = mapped_column(Text)
    linked_by: Mapped[str] = mapped_column(String(100))
    linked_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The library version the collection was last read up to (`since=`), and how far into
    # a read that spans several ticks it got (`start=`).
    read_version: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    read_start: Mapped[int] = mapped_column(default=0, server_default="0")
    lease_until: Mapped[datetime | None]
    lease_owner: Mapped[str | None] = mapped_column(String(32))
    last_sync_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    failed_at: Mapped[datetime | None]
    failures: Mapped[int] = mapped_column(default=0, server_default="0")
    retry_at: Mapped[datetime | None]


class ZoteroItem(Base):
    """An item of a linked collection: read from it (state "remote", with the DOI or arXiv
    id it names, so a paper is matched instead of written twice), written by paperclub
    ("pending" until Zotero confirms, then "synced"), or refused ("failed"). The key is
    made here before the write and the write token stored with it, so a write retried
    after a lost answer creates nothing twice. `tags`: the tags paperclub last wrote."""

    __tablename__ = "zotero_items"
    __table_args__ = (
        UniqueConstraint("link_id", "item_key", name="uq_zotero_item_key"),
        UniqueConstraint("link_id", "paper_id", name="uq_zotero_item_paper"),
        Index("ix_zotero_items_doi", "link_id", "doi"),
        Index("ix_zotero_items_arxiv", "link_id", "arxiv"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    link_id: Mapped[int] = mapped_column(ForeignKey("zotero_links.id", ondelete="CASCADE"))
    item_key: Mapped[str] = mapped_column(String(8))
    version: Mapped[int | None] = mapped_column(BigInteger)
    paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="SET NULL"))
    doi: Mapped[str | None] = mapped_column(String(255))
    arxiv: Mapped[str | None] = mapped_column(String(255))
    state: Mapped[str] = mapped_column(String(10))  # remote | pending | synced | failed
    write_token: Mapped[str | None] = mapped_column(String(32))
    tags: Mapped[list[str]] = mapped_column(default=list)
    error: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ZoteroNote(Base):
    """A member's note written as a child note of its paper's item (same write rules)."""

    __tablename__ = "zotero_notes"
    __table_args__ = (UniqueConstraint("link_id", "note_id", name="uq_zotero_note"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    link_id: Mapped[int] = mapped_column(ForeignKey("zotero_links.id", ondelete="CASCADE"))
    note_id: Mapped[int] = mapped_column(ForeignKey("paper_notes.id", ondelete="CASCADE"))
    item_key: Mapped[str] = mapped_column(String(8))
    state: Mapped[str] = mapped_column(String(10))  # pending | synced | failed
    write_token: Mapped[str | None] = mapped_column(String(32))

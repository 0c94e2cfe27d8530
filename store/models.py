"""The shared Base and the tables every layer reads: the papers, the channels, the feeds and
the processes' heartbeats and seen requests.

A feature's own tables live in its folder (bot/FEATURE/models.py) and the shared
services' in bot/services/models.py, all on this Base; `bot.app.schema()` gathers them.
The schema itself is owned by the Alembic migrations in store/migrations; the models
must describe the same tables (tests/test_store.py checks that they agree).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any, ClassVar
from uuid import uuid4

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


# A source a provider filled in (bot/enrich, "filled:openalex"), not one a person or a file
# gave: the merge reads it after every other source whatever its name, so it fills only
# what none of them says and never overwrites it (bot.corpus.merge).
FILLED_PREFIX = "filled:"


def source_order(collection: str, source: str, line: int) -> tuple[bool, str, str, int]:
    """Where a source stands in the merge rule's order: (collection, source, line), the
    sources a provider filled in last."""
    return collection.startswith(FILLED_PREFIX), collection, source, line


def new_identity() -> str:
    """A random id for one database's corpus (CorpusState.identity)."""
    return uuid4().hex


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        list[str]: JSON,
        dict[str, str]: JSON,
        dict[str, int]: JSON,
        datetime: DateTime(timezone=True),
    }


class Paper(Base):
    """One paper, whatever number of sources named it."""

    __tablename__ = "papers"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(Text)
    # Normalised title (bot.corpus.records.title_key) of the title shown. Papers are
    # matched by their sources' title keys (PaperSource.title_key, indexed); this one
    # is not, as no query asks for it.
    title_key: Mapped[str] = mapped_column(String(512))
    title_derived: Mapped[bool] = mapped_column(default=False)
    authors: Mapped[list[str]] = mapped_column(default=list)
    abstract: Mapped[str] = mapped_column(Text, default="")
    url: Mapped[str | None] = mapped_column(Text)
    track: Mapped[str | None] = mapped_column(String(100))
    presentation: Mapped[str | None] = mapped_column(String(200))
    award: Mapped[str | None] = mapped_column(String(200))
    venue: Mapped[str | None] = mapped_column(String(300))
    year: Mapped[int | None]
    tags: Mapped[list[str]] = mapped_column(default=list)
    notes: Mapped[list[str]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The corpus revision (CorpusState.revision) of the import that last added or changed
    # the paper: an index asks for the papers changed since the revision it was built at.
    changed_revision: Mapped[int] = mapped_column(default=0, server_default="0", index=True)

    external_ids: Mapped[list[PaperExternalId]] = relationship(
        back_populates="paper", cascade="all, delete-orphan", lazy="selectin"
    )
    # In (collection, source, line) order: the order the merge rule reads them in
    # (bot.corpus.merge), whatever order they were imported in.
    sources: Mapped[list[PaperSource]] = relationship(
        back_populates="paper",
        cascade="all, delete-orphan",
        lazy="selectin",
        order_by="(PaperSource.collection, PaperSource.source, PaperSource.line)",
    )

    @property
    def collections(self) -> list[str]:
        return sorted({s.collection for s in self.sources})

    def ids(self) -> dict[str, str]:
        """One identifier per scheme, schemes sorted. The paper holds every id its sources
        gave (so any of them finds it); where they disagree (two DOIs), the one shown is
        the first source's in the merge order (store.models.source_order), like every merged field."""
        held = {(x.scheme, x.value) for x in self.external_ids}
        shown: dict[str, str] = {}
        for source in sorted(self.sources, key=lambda s: source_order(s.collection, s.source, s.line)):
            for scheme, value in (source.fields or {}).get("external_ids", {}).items():
                if (scheme, value) in held:
                    shown.setdefault(scheme, value)
        for scheme, value in sorted(held):  # held but named by no source's fields
            shown.setdefault(scheme, value)
        return dict(sorted(shown.items()))


class PaperExternalId(Base):
    """An identifier a source gave the paper (arXiv id, DOI, BEIR _id, BibTeX key)."""

    __tablename__ = "paper_external_ids"
    __table_args__ = (UniqueConstraint("scheme", "value", name="uq_external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    scheme: Mapped[str] = mapped_column(String(32))
    value: Mapped[str] = mapped_column(String(255))

    paper: Mapped[Paper] = relationship(back_populates="external_ids")


class PaperSource(Base):
    """Where a paper came from: a collection and the file (and line) that named it, and
    what that source said about it."""

    __tablename__ = "paper_sources"
    __table_args__ = (
        UniqueConstraint("paper_id", "collection", "source", name="uq_paper_source"),
        Index("ix_paper_sources_collection", "collection"),
        Index("ix_paper_sources_title_key", "title_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    collection: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(500))
    line: Mapped[int] = mapped_column(default=1)
    format: Mapped[str] = mapped_column(String(32))
    # This source's title, normalised: a paper is found again by any of its sources'
    # titles, not only by the one it shows.
    title_key: Mapped[str] = mapped_column(String(512))
    # This source's record (bot.corpus.merge.source_fields): the paper's shown fields are
    # recomputed from all its sources', so no import order decides them.
    fields: Mapped[dict[str, Any]] = mapped_column(JSON)

    paper: Mapped[Paper] = relationship(back_populates="sources")


class EmbeddingModel(Base):
    """An embedding model vectors were made with, by name (bot.search.embedding): each
    vector names it by this row's small number, not by its name (38 bytes a paper, three
    times over with the keys, were a fifth of the vectors' size)."""

    __tablename__ = "embedding_models"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)


class PaperVector(Base):
    """A paper's vector under one embedding model: its title and abstract as int8 codes
    and the scale that turns them back into a unit vector. Kept in the database, so that
    several processes embed each paper once and every one reads it; `text_hash` tells a
    vector of a changed abstract, which is embedded again."""

    __tablename__ = "paper_vectors"
    __table_args__ = (Index("ix_paper_vectors_model_version", "model_id", "version"),)

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("embedding_models.id", ondelete="CASCADE"), primary_key=True)
    text_hash: Mapped[str] = mapped_column(String(16))
    codes: Mapped[bytes] = mapped_column(LargeBinary)
    scale: Mapped[float] = mapped_column(Float)
    # CorpusState.vectors_version of the write that stored it: a process that read the
    # vectors up to some version reads only the newer ones.
    version: Mapped[int] = mapped_column(default=0)


class EmbeddingClaim(Base):
    """A paper one run is embedding under a model (bot.corpus.embedded): inserted with ON
    CONFLICT DO NOTHING, so of several processes (serving replicas, `paperclub embed`)
    exactly one embeds each batch. Deleted with the vector's write, or by the run that
    stops before it; one older than the lease was left by a process that died, and is
    taken again. `owner` is a random token per run, so a run releases only its own."""

    __tablename__ = "embedding_claims"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("embedding_models.id", ondelete="CASCADE"), primary_key=True)
    owner: Mapped[str] = mapped_column(String(32))
    claimed_at: Mapped[datetime]


class CorpusState(Base):
    """A single row whose revision goes up whenever the corpus changes, so every process
    can tell cheaply whether its search index is still current."""

    __tablename__ = "corpus_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Random, made once per database (uuid4 hex): tells this database from a recreated
    # one, whose revisions count from 0 again. NULL only until it is first asked for.
    identity: Mapped[str | None] = mapped_column(String(32), default=new_identity)
    # Goes up with every write of papers' vectors (bot.corpus.embedded), so a process can
    # tell cheaply whether there are vectors it has not read.
    vectors_version: Mapped[int] = mapped_column(default=0, server_default="0")


class Channel(Base):
    """A chat channel (or console channel) with its own schedule, topics and history."""

    __tablename__ = "channels"
    __table_args__ = (UniqueConstraint("platform", "workspace", "channel", name="uq_channel"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    workspace: Mapped[str] = mapped_column(String(100))
    channel: Mapped[str] = mapped_column(String(100))
    # The schedule: local "HH:MM" in an IANA zone on some weekdays; NULL time = none set.
    post_time: Mapped[str | None] = mapped_column(String(5))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    days: Mapped[str] = mapped_column(String(40), default="mon,tue,wed,thu,fri,sat,sun")
    enabled: Mapped[bool] = mapped_column(default=False)
    paused_until: Mapped[date | None]
    topics: Mapped[list[str]] = mapped_column(default=list)
    collections: Mapped[list[str]] = mapped_column(default=list)  # empty: every collection
    # The organisation above the workspace, when the platform has one (a Slack Enterprise
    # Grid's enterprise id): the scheduler needs it to find the workspace's installation.
    org: Mapped[str | None] = mapped_column(String(100))
    # Days in a row on which the platform refused this channel's post for good (channel
    # gone, bot removed); at three the schedule pauses itself and says why.
    refusals: Mapped[int] = mapped_column(default=0, server_default="0")
    refused_on: Mapped[date | None]
    # Shown (once) in the reply to the channel's next command, e.g. why it was paused.
    pause_notice: Mapped[str | None] = mapped_column(Text)
    # The emoji that vote on this channel's posts, space-separated, for want to discuss,
    # not for us and read; NULL: 👍 👎 ✅.
    reactions: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Feed(Base):
    """A corpus source fetched on a schedule (`paperclub feed add`): the feed at `url`
    is imported into `collection` whenever `cron` (five fields, UTC) fires."""

    __tablename__ = "feeds"

    id: Mapped[int] = mapped_column(primary_key=True)
    collection: Mapped[str] = mapped_column(String(200), unique=True)
    url: Mapped[str] = mapped_column(Text)
    cron: Mapped[str] = mapped_column(String(100))
    format: Mapped[str | None] = mapped_column(String(40))
    enabled: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_run_at: Mapped[datetime | None]
    last_status: Mapped[str | None] = mapped_column(String(20))  # "ok" or "failed"
    last_message: Mapped[str | None] = mapped_column(Text)


class Heartbeat(Base):
    """The last time a named loop ran (the scheduler's tick), and where: what /healthz
    reports, from whichever process serves it."""

    __tablename__ = "heartbeats"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    at: Mapped[datetime]
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int]
    detail: Mapped[str] = mapped_column(Text, default="")


class SeenRequest(Base):
    """A request a platform may deliver again (a replay, a retry), by its id: acted on
    only by the process whose insert landed. Rows older than the platform's replay
    window are pruned."""

    __tablename__ = "seen_requests"
    __table_args__ = (Index("ix_seen_requests_seen_at", "seen_at"),)

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    seen_at: Mapped[datetime]

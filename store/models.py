"""The tables, as typed SQLAlchemy 2 models.

The schema itself is owned by the Alembic migrations in store/migrations; these classes
must describe the same tables (tests/test_store.py checks that they agree).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any
from uuid import uuid4

from sqlalchemy import JSON, BigInteger, DateTime, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def new_identity() -> str:
    """A random id for one database's corpus (CorpusState.identity)."""
    return uuid4().hex


class Base(DeclarativeBase):
    type_annotation_map = {
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
        the first source's in (collection, source, line) order, like every merged field."""
        held = {(x.scheme, x.value) for x in self.external_ids}
        shown: dict[str, str] = {}
        for source in sorted(self.sources, key=lambda s: (s.collection, s.source, s.line)):
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


class Post(Base):
    """A paper posted in a channel; unique per (channel, paper): never the same twice.

    The row is written with state "sending" before the message goes out, so two
    processes can never both send the same paper; it becomes "sent" with the message
    reference, or is removed again when sending failed.
    """

    __tablename__ = "posts"
    __table_args__ = (
        UniqueConstraint("channel_id", "paper_id", name="uq_post_channel_paper"),
        Index("ix_posts_channel_posted", "channel_id", "posted_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))  # daily | manual (`next`) | discussion (`discuss`)
    state: Mapped[str] = mapped_column(String(20), default="sending")  # sending | sent
    local_date: Mapped[date | None]
    posted_at: Mapped[datetime] = mapped_column(default=utcnow)
    message_ref: Mapped[str | None] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text, default="")
    matched: Mapped[list[str]] = mapped_column(default=list)


class Claim(Base):
    """The right to make one channel's daily post for one local date.

    Inserted with ON CONFLICT DO NOTHING before anything is picked: only the process
    whose insert landed goes on, which keeps the paper of the day exactly-once across
    replicas, restarts and retried ticks. States: claimed -> sending -> posted | failed
    (retried within the grace) | empty (nothing left to pick) | skipped; claimed ->
    released when the process stopped before sending (taken again by the next tick).
    """

    __tablename__ = "claims"
    __table_args__ = (UniqueConstraint("channel_id", "local_date", name="uq_claim_channel_date"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    local_date: Mapped[date]
    state: Mapped[str] = mapped_column(String(20), default="claimed")
    attempts: Mapped[int] = mapped_column(default=1)
    post_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id", ondelete="SET NULL"))
    error: Mapped[str | None] = mapped_column(Text)
    claimed_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class PostVote(Base):
    """A member's reaction to a post: an opinion (up or down, exclusive) and/or "read".

    Unique per (post, member, slot), so the same vote delivered twice counts once and
    up replaces down.
    """

    __tablename__ = "post_votes"
    __table_args__ = (UniqueConstraint("post_id", "user_id", "slot", name="uq_post_vote"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(String(100))
    slot: Mapped[str] = mapped_column(String(10))  # opinion | read
    value: Mapped[str] = mapped_column(String(10))  # up | down | read
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReactionMark(Base):
    """The newest reaction event applied for a member on a post, per kind of vote: its
    order (the platform's event time, in microseconds since the epoch) and whether the
    emoji was put on or taken off.

    Reaction events are handled on parallel worker threads, and by several processes, so
    a "taken off" can be handled before its "put on". An event older than the one
    recorded for its kind changes nothing (a compare-and-set in SQL), so the votes end as
    the reactions do whatever the order of handling. One row per (post, member): updating
    it locks it, which makes the events of one member on one post take turns.
    """

    __tablename__ = "reaction_marks"
    __table_args__ = (UniqueConstraint("post_id", "user_id", name="uq_reaction_mark"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(String(100))
    # Per kind (bot/votes/reactions.py KINDS): the order of its newest event (None: none
    # seen, or only events without an order) and whether the emoji is on now.
    up_order: Mapped[int | None] = mapped_column(BigInteger)
    up_on: Mapped[bool] = mapped_column(default=False)
    down_order: Mapped[int | None] = mapped_column(BigInteger)
    down_on: Mapped[bool] = mapped_column(default=False)
    read_order: Mapped[int | None] = mapped_column(BigInteger)
    read_on: Mapped[bool] = mapped_column(default=False)


class Nomination(Base):
    """A paper a member proposed for the channel's next reading poll."""

    __tablename__ = "nominations"
    __table_args__ = (UniqueConstraint("channel_id", "paper_id", name="uq_nomination"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(100))
    state: Mapped[str] = mapped_column(String(10), default="open")  # open | polled
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Poll(Base):
    """A vote on what to read next; closed by its deadline or a manager, exactly once
    (UPDATE ... WHERE state = 'open' is the claim)."""

    __tablename__ = "polls"

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"), index=True)
    created_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    closes_at: Mapped[datetime]
    state: Mapped[str] = mapped_column(String(10), default="open")  # open | closed
    closed_at: Mapped[datetime | None]
    winner_paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="SET NULL"))
    # {option position: votes}, written in the closing transaction: the counted result.
    result: Mapped[dict[str, int]] = mapped_column(default=dict)
    message_ref: Mapped[str | None] = mapped_column(String(200))


class PollOption(Base):
    __tablename__ = "poll_options"
    __table_args__ = (UniqueConstraint("poll_id", "position", name="uq_poll_option"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    poll_id: Mapped[int] = mapped_column(ForeignKey("polls.id", ondelete="CASCADE"))
    position: Mapped[int]  # 1..N as members type it
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    nominated_at: Mapped[datetime | None]  # set when the option came from a nomination


class PollVote(Base):
    """One vote per member per poll, changeable while the poll is open."""

    __tablename__ = "poll_votes"
    __table_args__ = (UniqueConstraint("poll_id", "user_id", name="uq_poll_vote"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    poll_id: Mapped[int] = mapped_column(ForeignKey("polls.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(100))
    position: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class QueueItem(Base):
    """The channel's reading queue: poll winners waiting to be discussed."""

    __tablename__ = "queue_items"
    __table_args__ = (UniqueConstraint("channel_id", "paper_id", name="uq_queue_item"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    poll_id: Mapped[int | None] = mapped_column(ForeignKey("polls.id", ondelete="SET NULL"))
    state: Mapped[str] = mapped_column(String(10), default="queued")  # queued | done | removed
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
    done_at: Mapped[datetime | None]
    presented_by: Mapped[str | None] = mapped_column(String(100))  # kept by `queue done`


# A meeting's place and call link, in characters: checked before they are stored (SQLite
# would keep a longer value, PostgreSQL refuse it).
MEETING_PLACE_CHARS = 200
MEETING_LINK_CHARS = 1000


class MeetingPlan(Base):
    """A channel's weekly reading-group meeting: a weekday, a local time, a zone, how long
    it lasts, and where (a place, a call link: either, both or none)."""

    __tablename__ = "meeting_plans"

    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True)
    weekday: Mapped[str] = mapped_column(String(3))  # mon..sun
    local_time: Mapped[str] = mapped_column(String(5))  # HH:MM
    timezone: Mapped[str] = mapped_column(String(64))
    enabled: Mapped[bool] = mapped_column(default=True)
    length_minutes: Mapped[int] = mapped_column(default=60, server_default="60")
    place: Mapped[str | None] = mapped_column(String(MEETING_PLACE_CHARS))
    link: Mapped[str | None] = mapped_column(String(MEETING_LINK_CHARS))


class MeetingSkip(Base):
    __tablename__ = "meeting_skips"
    __table_args__ = (UniqueConstraint("channel_id", "local_date", name="uq_meeting_skip"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    local_date: Mapped[date]


class Presenter(Base):
    """A member on the channel's presenter rota; `volunteered_at` marks an offer to
    present next, cleared when it is used."""

    __tablename__ = "presenters"
    __table_args__ = (UniqueConstraint("channel_id", "user_id", name="uq_presenter"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(100))
    active: Mapped[bool] = mapped_column(default=True)
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
    volunteered_at: Mapped[datetime | None]


class Meeting(Base):
    """One meeting (channel, local date): its paper and presenter, assigned when the
    day-before reminder goes out, and the two reminders, each claimed exactly once by
    UPDATE ... WHERE reminded_... IS NULL."""

    __tablename__ = "meetings"
    __table_args__ = (UniqueConstraint("channel_id", "local_date", name="uq_meeting"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    local_date: Mapped[date]
    starts_at: Mapped[datetime]
    paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="SET NULL"))
    presenter: Mapped[str | None] = mapped_column(String(100))
    day_before_sent_at: Mapped[datetime | None]
    hour_before_sent_at: Mapped[datetime | None]
    # How long and where it was held, kept when the plan's change after it began; empty
    # while the plan still says what it was (bot.meetings.meetings.Meetings.set_plan).
    length_minutes: Mapped[int | None]
    place: Mapped[str | None] = mapped_column(String(MEETING_PLACE_CHARS))
    link: Mapped[str | None] = mapped_column(String(MEETING_LINK_CHARS))


class PaperNote(Base):
    """A member's note on a paper, kept per channel (notes never cross channels)."""

    __tablename__ = "paper_notes"
    __table_args__ = (Index("ix_paper_notes_channel_paper", "channel_id", "paper_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(100))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


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


class Addition(Base):
    """One `add` by a member: what they asked for and what came of it (the paper, or
    why not). It names who added a paper and when, and bounds a member's fetches."""

    __tablename__ = "additions"
    __table_args__ = (
        Index("ix_additions_user_time", "platform", "workspace", "user_id", "created_at"),
        Index("ix_additions_paper", "paper_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    workspace: Mapped[str] = mapped_column(String(100))
    channel_id: Mapped[int | None] = mapped_column(ForeignKey("channels.id", ondelete="SET NULL"))
    user_id: Mapped[str] = mapped_column(String(100))
    user_name: Mapped[str] = mapped_column(String(200), default="", server_default="")
    asked: Mapped[str] = mapped_column(String(2000))
    paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="SET NULL"))
    outcome: Mapped[str] = mapped_column(String(20))  # added | existed | not_found | unreachable | timed_out | busy | refused | unreadable | stopped
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ChannelLink(Base):
    """A member's secret link to a channel's calendar feed or archive page: only the
    SHA-256 digest of the token is kept, so the database alone opens no page (and a
    link cannot be shown again: each member who asks gets their own)."""

    __tablename__ = "channel_links"
    __table_args__ = (
        UniqueConstraint("channel_id", "kind", "user_id", name="uq_channel_link_member"),
        UniqueConstraint("token_hash", name="uq_channel_link_token"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))  # calendar | archive
    user_id: Mapped[str] = mapped_column(String(100))  # who asked for it
    token_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


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


class DigestPlan(Base):
    """When a channel's weekly digest goes out: a weekday and a local time, in the zone
    of the channel's schedule (UTC without one)."""

    __tablename__ = "digest_plans"

    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True)
    weekday: Mapped[str] = mapped_column(String(3))  # mon..sun
    local_time: Mapped[str] = mapped_column(String(5))  # HH:MM
    enabled: Mapped[bool] = mapped_column(default=True)


class Digest(Base):
    """One channel's weekly digest for one ISO week ("2026-W48"): the claim that makes it
    exactly once across replicas (inserted ON CONFLICT DO NOTHING, like a daily Claim),
    and what was posted, kept for the archive page.

    States: claimed -> sending -> posted | quiet (the one-line quiet week) | failed
    (retried within the grace) | refused (for good this week); skipped when its time
    passed beyond the grace unposted. `body` is {"text": ..., "sections": [{"title",
    "lines", "papers"}]}."""

    __tablename__ = "digests"
    __table_args__ = (UniqueConstraint("channel_id", "week", name="uq_digest_channel_week"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    week: Mapped[str] = mapped_column(String(10))
    due_at: Mapped[datetime]  # the slot: the digest covers the seven days before it
    state: Mapped[str] = mapped_column(String(20), default="claimed")
    attempts: Mapped[int] = mapped_column(default=1)
    claimed_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    error: Mapped[str | None] = mapped_column(Text)
    message_ref: Mapped[str | None] = mapped_column(String(200))
    body: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class Follow(Base):
    """Something a channel follows (bot/follows): an arXiv category (with an optional
    query), an OpenAlex author, or the papers citing what the channel read. What it brings
    lands in `collection`; `fetched_through` is the high-water mark: the next fetch asks
    for what appeared after it, so nothing is missed or fetched twice across restarts."""

    __tablename__ = "follows"
    __table_args__ = (UniqueConstraint("channel_id", "kind", "target", "query", name="uq_follow"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))  # arxiv | author | citations
    target: Mapped[str] = mapped_column(String(100))  # cs.LG | A5023888391 | ""
    query: Mapped[str] = mapped_column(String(200), default="", server_default="")
    label: Mapped[str] = mapped_column(String(300))  # how members read it: "cs.LG (Machine Learning)"
    collection: Mapped[str] = mapped_column(String(200))
    created_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    fetched_through: Mapped[datetime | None]
    last_run_at: Mapped[datetime | None]
    last_status: Mapped[str | None] = mapped_column(String(20))  # ok | failed
    last_message: Mapped[str | None] = mapped_column(Text)


class FollowClaim(Base):
    """The right to fetch one follow on one (UTC) day: inserted with ON CONFLICT DO
    NOTHING, so of several schedulers exactly one fetches. States: claimed -> done |
    failed (taken again after a back-off); a claim left "claimed" past its lease was
    abandoned by a process that died, and is taken again."""

    __tablename__ = "follow_claims"
    __table_args__ = (UniqueConstraint("follow_id", "day", name="uq_follow_claim"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    follow_id: Mapped[int] = mapped_column(ForeignKey("follows.id", ondelete="CASCADE"))
    day: Mapped[date]
    state: Mapped[str] = mapped_column(String(20), default="claimed")
    attempts: Mapped[int] = mapped_column(default=1)
    claimed_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    error: Mapped[str | None] = mapped_column(Text)


class FollowArrival(Base):
    """A paper a follow brought, once per (follow, paper), with why in words a member can
    check ("new on arXiv 25 Nov in cs.LG")."""

    __tablename__ = "follow_arrivals"
    __table_args__ = (
        UniqueConstraint("follow_id", "paper_id", name="uq_follow_arrival"),
        Index("ix_follow_arrivals_arrived", "arrived_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    follow_id: Mapped[int] = mapped_column(ForeignKey("follows.id", ondelete="CASCADE"))
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    arrived_at: Mapped[datetime]
    reason: Mapped[str] = mapped_column(Text)


class OpenAlexWork(Base):
    """A paper's OpenAlex work id, looked up once (by DOI or arXiv id); None: OpenAlex
    does not know it (asked again after a while)."""

    __tablename__ = "openalex_works"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    work_id: Mapped[str | None] = mapped_column(String(40))
    resolved_at: Mapped[datetime]


class FreshWindow(Base):
    """`fresh 7d`: the channel's paper of the day comes from what its follows brought in
    the last `days` days, when something relevant arrived."""

    __tablename__ = "fresh_windows"

    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True)
    days: Mapped[int]

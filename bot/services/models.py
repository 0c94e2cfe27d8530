"""The tables of the shared services, on the shared Base: the posts and their claims and votes,
polls and the reading queue, meetings, members' notes, who added a paper, the channels' private
links and the digests posted. Several features read each of them, so none of them owns one."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base, utcnow


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
    # while the plan still says what it was (bot.services.meetings.Meetings.set_plan).
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


class Addition(Base):
    """One `add` by a member: what they asked for and what came of it (the paper, or
    why not). It names who added a paper and when, and bounds a member's fetches."""

    __tablename__ = "additions"
    __table_args__ = (
        Index("ix_additions_user_time", "platform", "workspace", "user_id", "created_at"),
        Index("ix_additions_paper", "paper_id"),
        # A record of requests, refused ones too (they count against the hourly limit),
        # not state a refusal must leave alone (tests/test_every_line.py).
        {"info": {"audit": True}},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    workspace: Mapped[str] = mapped_column(String(100))
    channel_id: Mapped[int | None] = mapped_column(ForeignKey("channels.id", ondelete="SET NULL"))
    user_id: Mapped[str] = mapped_column(String(100))
    user_name: Mapped[str] = mapped_column(String(200), default="", server_default="")
    asked: Mapped[str] = mapped_column(String(2000))
    paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="SET NULL"))
    # added | existed | not_found | unreachable | timed_out | busy | refused | unreadable | stopped
    outcome: Mapped[str] = mapped_column(String(20))
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

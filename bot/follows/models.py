"""The follows feature's tables: what a channel follows, the daily claims, what each follow brought,
OpenAlex's record of a paper, and each channel's fresh-picks window."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base, utcnow


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
    last_status: Mapped[str | None] = mapped_column(String(20))  # ok | partial (works skipped) | failed
    last_message: Mapped[str | None] = mapped_column(Text)
    # Put off until then: the provider asked to wait longer than a fetch may take
    # (Retry-After), or the fetch ran out of time; fetched again after it.
    wait_until: Mapped[datetime | None]


class FollowClaim(Base):
    """The right to fetch one follow on one (UTC) day: inserted with ON CONFLICT DO
    NOTHING, so of several schedulers exactly one fetches. States: claimed -> done |
    failed (taken again after a back-off) | deferred (taken again once the follow's
    `wait_until` passed); a claim left "claimed" past its lease was abandoned by a
    process that died, and is taken again."""

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

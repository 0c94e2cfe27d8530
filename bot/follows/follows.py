"""The follows table and what hangs off it: each channel's follows, the papers they
brought (arrivals, with why), and each channel's fresh-picks window. Rows come back as
detached, read-only views."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from bot.corpus.records import COLLECTION_MAX
from bot.follows.models import Follow, FollowArrival, FreshWindow
from store import Database
from store.database import as_utc, upsert_insert
from store.models import Paper

KINDS = ("arxiv", "author", "citations")
FOLLOWS_MAX = 20  # per channel


@dataclass(frozen=True)
class FollowView:
    id: int
    channel_id: int
    kind: str
    target: str
    query: str
    label: str
    collection: str
    created_at: datetime
    fetched_through: datetime | None
    last_run_at: datetime | None
    last_status: str | None
    last_message: str | None
    wait_until: datetime | None = None

    @classmethod
    def of(cls, row: Follow) -> FollowView:
        return cls(row.id, row.channel_id, row.kind, row.target, row.query, row.label, row.collection,
                   as_utc(row.created_at), as_utc(row.fetched_through), as_utc(row.last_run_at),
                   row.last_status, row.last_message, as_utc(row.wait_until))


@dataclass(frozen=True)
class Arrival:
    """A paper a follow brought a channel, with why (`reason`) and when."""

    paper_id: int
    follow_id: int
    follow: str  # the follow's label
    reason: str
    arrived_at: datetime


class FollowExists(ValueError):
    """The channel follows this already."""


class TooManyFollows(ValueError):
    """The channel has FOLLOWS_MAX follows."""


class Follows:
    def __init__(self, db: Database):
        self.db = db

    def add(self, channel_id: int, kind: str, target: str, query: str, label: str, user: str,
            now: datetime) -> FollowView:
        """A new follow; FollowExists or TooManyFollows (nothing written) otherwise."""
        try:
            with self.db.session() as session:
                count = session.scalar(select(func.count(Follow.id)).where(Follow.channel_id == channel_id)) or 0
                if count >= FOLLOWS_MAX:
                    raise TooManyFollows(str(FOLLOWS_MAX))
                row = Follow(channel_id=channel_id, kind=kind, target=target, query=query, label=label,
                             collection=collection_name(channel_id, kind, target, query), created_by=user,
                             created_at=now)
                session.add(row)
                session.flush()
                return FollowView.of(row)
        except IntegrityError:
            raise FollowExists(label) from None

    def remove(self, channel_id: int, follow_id: int) -> FollowView | None:
        """Forget one of the channel's follows (the papers it brought stay); None if the
        channel has no follow of that number."""
        with self.db.session() as session:
            row = session.get(Follow, follow_id)
            if row is None or row.channel_id != channel_id:
                return None
            view = FollowView.of(row)
            session.execute(delete(Follow).where(Follow.id == follow_id))
            return view

    def of_channel(self, channel_id: int) -> list[FollowView]:
        with self.db.session() as session:
            rows = session.scalars(select(Follow).where(Follow.channel_id == channel_id).order_by(Follow.id))
            return [FollowView.of(r) for r in rows]

    def get(self, follow_id: int) -> FollowView | None:
        with self.db.session() as session:
            row = session.get(Follow, follow_id)
            return FollowView.of(row) if row else None

    # --- arrivals ---------------------------------------------------------------------------

    def arrivals(self, channel_ids: list[int], since: datetime, until: datetime) -> dict[int, list[Arrival]]:
        """Per channel, the papers its follows brought in [since, until), newest first."""
        out: dict[int, list[Arrival]] = {cid: [] for cid in channel_ids}
        if not channel_ids:
            return out
        with self.db.session() as session:
            rows = session.execute(
                select(Follow.channel_id, FollowArrival.paper_id, Follow.id, Follow.label, FollowArrival.reason,
                       FollowArrival.arrived_at)
                .join(Follow, Follow.id == FollowArrival.follow_id)
                .where(Follow.channel_id.in_(channel_ids), FollowArrival.arrived_at >= since,
                       FollowArrival.arrived_at < until)
                .order_by(FollowArrival.arrived_at.desc(), FollowArrival.id.desc())
            ).all()
        for channel_id, paper_id, follow_id, label, reason, at in rows:
            out[channel_id].append(Arrival(paper_id, follow_id, label, reason, as_utc(at)))
        return out

    def brought(self, follow_ids: list[int], since: datetime) -> dict[int, int]:
        """How many papers each follow brought since `since`."""
        if not follow_ids:
            return {}
        with self.db.session() as session:
            rows = session.execute(
                select(FollowArrival.follow_id, func.count(FollowArrival.id))
                .where(FollowArrival.follow_id.in_(follow_ids), FollowArrival.arrived_at >= since)
                .group_by(FollowArrival.follow_id)
            ).all()
        return dict(rows)

    def latest_titles(self, follow_id: int, since: datetime, limit: int = 3) -> list[tuple[int, str]]:
        with self.db.session() as session:
            return [(paper_id, title) for paper_id, title in session.execute(
                select(Paper.id, Paper.title).join(FollowArrival, FollowArrival.paper_id == Paper.id)
                .where(FollowArrival.follow_id == follow_id, FollowArrival.arrived_at >= since)
                .order_by(FollowArrival.arrived_at.desc(), Paper.id).limit(limit)
            )]

    # --- fresh picks ------------------------------------------------------------------------

    def fresh_days(self, channel_ids: list[int]) -> dict[int, int]:
        """{channel id: window in days} for the channels with fresh picks on."""
        if not channel_ids:
            return {}
        with self.db.session() as session:
            return dict(session.execute(
                select(FreshWindow.channel_id, FreshWindow.days).where(FreshWindow.channel_id.in_(channel_ids))
            ).all())

    def set_fresh(self, channel_id: int, days: int | None) -> None:
        with self.db.session() as session:
            if days is None:
                session.execute(delete(FreshWindow).where(FreshWindow.channel_id == channel_id))
                return
            statement = upsert_insert(session, FreshWindow).values(channel_id=channel_id, days=days)
            session.execute(statement.on_conflict_do_update(index_elements=["channel_id"], set_={"days": days}))


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def collection_name(channel_id: int, kind: str, target: str, query: str) -> str:
    """One collection per follow, one word so `search in:` can name it:
    follow-12-arxiv-cs.LG, follow-12-author-A5023888391, follow-12-citations; a query adds
    a short digest, so two queries on one category are two collections."""
    name = f"follow-{channel_id}-{kind}" + (f"-{_UNSAFE.sub('-', target)}" if target else "")
    if query:
        name += "-" + hashlib.sha1(query.casefold().encode()).hexdigest()[:8]
    return name[:COLLECTION_MAX]

"""The `additions` table: who added which paper, when, and how many this hour."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, String, func, select

from bot.messages import ChannelRef, Incoming
from bot.services.models import Addition
from store import Database


def _length(column: ColumnElement[Any]) -> int:
    """A String column's length, in characters (as bot.corpus.records reads its limits)."""
    type_ = column.type
    if not isinstance(type_, String) or type_.length is None:
        raise TypeError(f"{column} is not a string column of a given length")
    return type_.length


HOUR = timedelta(hours=1)
ASKED_MAX = _length(Addition.__table__.c.asked)
NAME_MAX = _length(Addition.__table__.c.user_name)
# Outcomes of a fetch made for the member: what the hourly limit counts. Not counted: a
# paper found in the library (no fetch), a link refused unread, a line past the limit.
FETCHED = ("added", "not_found", "unreachable", "timed_out", "busy", "refused", "stopped")


class Additions:
    def __init__(self, db: Database):
        self.db = db

    def fetched_since(self, incoming: Incoming, since: datetime) -> int:
        """Fetches this member caused since then, whatever came of them (a paper added, or
        a page that timed out, refused or was not there): the hourly limit."""
        with self.db.session() as session:
            return session.scalar(
                select(func.count(Addition.id)).where(
                    Addition.platform == incoming.user.platform,
                    Addition.workspace == incoming.channel.workspace,
                    Addition.user_id == incoming.user.user_id,
                    Addition.outcome.in_(FETCHED),
                    Addition.created_at >= since,
                )
            ) or 0

    def record(self, incoming: Incoming, channel_id: int | None, asked: str, paper_id: int | None,
               outcome: str, now: datetime) -> None:
        with self.db.session() as session:
            session.add(Addition(
                platform=incoming.channel.platform,
                workspace=incoming.channel.workspace,
                channel_id=channel_id,
                user_id=incoming.user.user_id,
                user_name=(incoming.user.display_name or "")[:NAME_MAX],
                asked=asked[:ASKED_MAX],
                paper_id=paper_id,
                outcome=outcome,
                created_at=now,
            ))

    def added_by(self, channel: ChannelRef, paper_ids: Iterable[int]) -> dict[int, str]:
        """"Added by Ann on 2026-11-23" for the papers someone in this workspace added: the
        first member who did."""
        ids = list(paper_ids)
        if not ids:
            return {}
        with self.db.session() as session:
            rows = session.execute(
                select(Addition.paper_id, Addition.user_name, Addition.user_id, Addition.created_at)
                .where(Addition.platform == channel.platform, Addition.workspace == channel.workspace,
                       Addition.paper_id.in_(ids), Addition.outcome.in_(("added", "existed")))
                .order_by(Addition.created_at, Addition.id)
            ).all()
        lines: dict[int, str] = {}
        for paper_id, name, user_id, at in rows:
            if paper_id is not None:  # (the query asked for these ids)
                lines.setdefault(paper_id, f"Added by {name or user_id} on {at:%Y-%m-%d}")
        return lines

    def added_between(self, channel_id: int, since: datetime, until: datetime) -> list[tuple[int, str]]:
        """(paper id, who) for the papers members added in this channel in [since, until),
        each once, first addition first ("existed": added to the conversation, already
        in the library)."""
        with self.db.session() as session:
            rows = session.execute(
                select(Addition.paper_id, Addition.user_name, Addition.user_id)
                .where(Addition.channel_id == channel_id, Addition.paper_id.is_not(None),
                       Addition.outcome.in_(("added", "existed")), Addition.created_at >= since,
                       Addition.created_at < until)
                .order_by(Addition.created_at, Addition.id)
            ).all()
        found: dict[int, str] = {}
        for paper_id, name, user_id in rows:
            if paper_id is not None:  # (the query left out additions without a paper)
                found.setdefault(paper_id, name or user_id)
        return list(found.items())

"""Nominations, reading polls and the reading queue.

A poll vote is one conditional upsert: it lands only while the poll is open, and on
PostgreSQL it takes a share lock on the poll row, so a vote and a closing can never
cross: the vote is either in the counted result or refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, func, literal, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.services.models import Nomination, Poll, PollOption, PollVote, QueueItem
from store import Database
from store.database import as_utc, dml_result, upsert_insert


class PollRefused(ValueError):
    """A poll action that cannot happen; the message says why (nothing changed)."""


@dataclass(frozen=True)
class Option:
    position: int
    paper_id: int
    nominated_at: datetime | None


@dataclass(frozen=True)
class PollView:
    id: int
    channel_id: int
    state: str
    closes_at: datetime
    options: tuple[Option, ...]
    result: dict[str, int]
    winner_paper_id: int | None
    message_ref: str | None
    created_at: datetime | None = None
    closed_at: datetime | None = None


class Polls:
    def __init__(self, db: Database):
        self.db = db

    # --- nominations ----------------------------------------------------------------

    def nominate(self, channel_id: int, paper_id: int, user_id: str, now: datetime) -> bool:
        """True if newly nominated; False if it already was (or is queued)."""
        with self.db.session() as session:
            if session.scalar(select(QueueItem.id).where(
                QueueItem.channel_id == channel_id, QueueItem.paper_id == paper_id, QueueItem.state == "queued"
            )):
                raise PollRefused("That paper is already in the reading queue.")
            existing = session.scalar(
                select(Nomination).where(Nomination.channel_id == channel_id, Nomination.paper_id == paper_id)
            )
            if existing is not None:
                if existing.state == "open":
                    return False
                existing.state, existing.user_id, existing.created_at = "open", user_id, now
                return True
            try:
                with session.begin_nested():
                    session.add(Nomination(channel_id=channel_id, paper_id=paper_id, user_id=user_id, created_at=now))
            except IntegrityError:  # the same nomination, a moment earlier
                return False
            return True

    def open_nominations(self, channel_id: int) -> list[tuple[int, datetime]]:
        with self.db.session() as session:
            rows = session.execute(
                select(Nomination.paper_id, Nomination.created_at)
                .where(Nomination.channel_id == channel_id, Nomination.state == "open")
                .order_by(Nomination.created_at, Nomination.id)
            ).all()
        return [(pid, at) for pid, at in rows]

    # --- polls ----------------------------------------------------------------------

    def open_poll(self, channel_id: int) -> PollView | None:
        with self.db.session() as session:
            poll = session.scalar(select(Poll).where(Poll.channel_id == channel_id, Poll.state == "open"))
            return _view(session, poll) if poll else None

    def closed_between(self, channel_id: int, since: datetime, until: datetime) -> PollView | None:
        """The channel's latest poll closed in [since, until)."""
        with self.db.session() as session:
            poll = session.scalar(
                select(Poll).where(Poll.channel_id == channel_id, Poll.state == "closed", Poll.closed_at >= since,
                                   Poll.closed_at < until)
                .order_by(Poll.closed_at.desc(), Poll.id.desc()).limit(1)
            )
            return _view(session, poll) if poll else None

    def counts(self, poll_id: int) -> dict[int, int]:
        """An open poll's votes so far, by option position."""
        with self.db.session() as session:
            rows = session.execute(
                select(PollVote.position, func.count()).where(PollVote.poll_id == poll_id)
                .group_by(PollVote.position)
            ).all()
        return dict(rows)

    def get(self, poll_id: int) -> PollView | None:
        with self.db.session() as session:
            poll = session.get(Poll, poll_id)
            return _view(session, poll) if poll else None

    def create(
        self, channel_id: int, user_id: str, options: list[Option], now: datetime, closes_at: datetime
    ) -> PollView:
        with self.db.session() as session:
            poll = Poll(channel_id=channel_id, created_by=user_id, created_at=now, closes_at=closes_at,
                        state="open", result={})
            session.add(poll)
            session.flush()
            for option in options:
                session.add(PollOption(poll_id=poll.id, position=option.position, paper_id=option.paper_id,
                                       nominated_at=option.nominated_at))
            nominated = [o.paper_id for o in options if o.nominated_at is not None]
            if nominated:
                session.execute(
                    update(Nomination)
                    .where(Nomination.channel_id == channel_id, Nomination.paper_id.in_(nominated))
                    .values(state="polled")
                )
            session.flush()
            return _view(session, poll)

    def set_message(self, poll_id: int, message_ref: str | None) -> None:
        with self.db.session() as session:
            session.execute(update(Poll).where(Poll.id == poll_id).values(message_ref=message_ref))

    def vote(self, poll_id: int, channel_id: int, user_id: str, position: int, now: datetime) -> PollView:
        """Record or change a member's vote; PollRefused if the poll is unknown here,
        closed, or has no such option. Nothing changes on a refusal."""
        with self.db.session() as session:
            poll = session.get(Poll, poll_id)
            if poll is None or poll.channel_id != channel_id:
                raise PollRefused(f"There is no poll {poll_id} in this channel.")
            positions = set(session.scalars(select(PollOption.position).where(PollOption.poll_id == poll_id)))
            if position not in positions:
                raise PollRefused(f"Poll {poll_id} has options {min(positions)} to {max(positions)}.")
            if not _conditional_vote(session, poll_id, user_id, position, now):
                raise PollRefused(f"Poll {poll_id} is closed; your vote was not counted.")
            session.flush()
            session.expire(poll)
            return _view(session, poll)

    def close(self, poll_id: int, now: datetime) -> PollView | None:
        """Close an open poll exactly once: count, pick the winner, queue it.

        Returns None if the poll was not open (someone else closed it).
        """
        with self.db.session() as session:
            claimed = dml_result(session.execute(
                update(Poll).where(Poll.id == poll_id, Poll.state == "open").values(state="closed", closed_at=now)
            )).rowcount
            if not claimed:
                return None
            counts = dict(session.execute(
                select(PollVote.position, func.count(PollVote.id))
                .where(PollVote.poll_id == poll_id)
                .group_by(PollVote.position)
            ).all())
            options = session.scalars(
                select(PollOption).where(PollOption.poll_id == poll_id).order_by(PollOption.position)
            ).all()
            result = {str(o.position): counts.get(o.position, 0) for o in options}
            winner = _winner(options, counts)
            poll = session.get_one(Poll, poll_id)  # the UPDATE above found it
            poll.result = result
            poll.winner_paper_id = winner.paper_id if winner else None
            if winner is not None:
                _enqueue(session, poll.channel_id, winner.paper_id, poll_id, now)
            session.flush()
            return _view(session, poll)

    def withdraw(self, poll_id: int) -> None:
        """Remove a poll that never reached its channel; its nominations stand again."""
        with self.db.session() as session:
            poll = session.get(Poll, poll_id)
            if poll is None:
                return
            nominated = select(PollOption.paper_id).where(
                PollOption.poll_id == poll_id, PollOption.nominated_at.is_not(None)
            )
            session.execute(
                update(Nomination)
                .where(Nomination.channel_id == poll.channel_id, Nomination.paper_id.in_(nominated))
                .values(state="open")
            )
            session.delete(poll)

    def due(self, now: datetime) -> list[tuple[int, int]]:
        """(poll id, channel id) of the open polls whose deadline has passed."""
        with self.db.session() as session:
            rows = session.execute(
                select(Poll.id, Poll.channel_id).where(Poll.state == "open", Poll.closes_at <= now)
            ).all()
        return [(poll_id, channel_id) for poll_id, channel_id in rows]

    # --- queue ----------------------------------------------------------------------

    def queue(self, channel_id: int) -> list[QueueItem]:
        with self.db.session() as session:
            return list(session.scalars(
                select(QueueItem)
                .where(QueueItem.channel_id == channel_id, QueueItem.state == "queued")
                .order_by(QueueItem.added_at, QueueItem.id)
            ))

    def queued_papers(self, channel_id: int) -> set[int]:
        return {item.paper_id for item in self.queue(channel_id)}

    def mark(
        self, channel_id: int, paper_id: int, state: str, now: datetime, presented_by: str | None = None
    ) -> bool:
        """Move a queued paper to done (keeping who presented it) or removed; False if it
        is not in the queue."""
        with self.db.session() as session:
            changed = dml_result(session.execute(
                update(QueueItem)
                .where(QueueItem.channel_id == channel_id, QueueItem.paper_id == paper_id,
                       QueueItem.state == "queued")
                .values(state=state, done_at=now, presented_by=presented_by)
            )).rowcount
        return bool(changed)


def _winner(options: Sequence[PollOption], counts: dict[int, int]) -> PollOption | None:
    """Most votes; a tie goes to the earliest nomination, then to relevance (the order
    the bot proposed). No votes at all: no winner."""
    if not any(counts.values()):
        return None
    return min(
        options,
        key=lambda o: (-counts.get(o.position, 0), o.nominated_at is None, o.nominated_at or o.position, o.position),
    )


def _enqueue(session: Session, channel_id: int, paper_id: int, poll_id: int, now: datetime) -> None:
    existing = session.scalar(
        select(QueueItem).where(QueueItem.channel_id == channel_id, QueueItem.paper_id == paper_id)
    )
    if existing is None:
        session.add(QueueItem(channel_id=channel_id, paper_id=paper_id, poll_id=poll_id, added_at=now))
    else:
        existing.state, existing.poll_id, existing.added_at, existing.done_at = "queued", poll_id, now, None


def _conditional_vote(session: Session, poll_id: int, user_id: str, position: int, now: datetime) -> bool:
    """INSERT ... SELECT ... WHERE the poll is open, upserting on (poll, member).

    On PostgreSQL the SELECT takes FOR SHARE on the poll row: a closing UPDATE waits for
    this vote to commit (and counts it), or this vote waits for the closing and then
    finds the poll closed. SQLite runs each write statement under its single write lock.
    """
    postgres = session.get_bind().dialect.name == "postgresql"
    source = select(
        literal(poll_id), literal(user_id), literal(position), literal(now), literal(now)
    ).select_from(Poll).where(and_(Poll.id == poll_id, Poll.state == "open"))
    if postgres:
        source = source.with_for_update(read=True)
    statement = upsert_insert(session, PollVote).from_select(
        ["poll_id", "user_id", "position", "created_at", "updated_at"], source
    )
    upsert = statement.on_conflict_do_update(
        index_elements=["poll_id", "user_id"],
        set_={"position": statement.excluded.position, "updated_at": statement.excluded.updated_at},
    ).returning(PollVote.id)
    # RETURNING, not rowcount: drivers report -1 for INSERT ... SELECT.
    return session.execute(upsert).first() is not None


def _view(session: Session, poll: Poll) -> PollView:
    options = session.scalars(
        select(PollOption).where(PollOption.poll_id == poll.id).order_by(PollOption.position)
    ).all()
    return PollView(
        id=poll.id,
        channel_id=poll.channel_id,
        state=poll.state,
        closes_at=poll.closes_at,
        options=tuple(Option(o.position, o.paper_id, o.nominated_at) for o in options),
        result=dict(poll.result or {}),
        winner_paper_id=poll.winner_paper_id,
        message_ref=poll.message_ref,
        created_at=as_utc(poll.created_at),
        closed_at=as_utc(poll.closed_at),
    )

"""The digest tables: each channel's plan, and one row per channel and ISO week that
claims the week's post (INSERT ... ON CONFLICT DO NOTHING, as bot/services/posts.py claims
a day) and keeps what was posted for the archive page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select, tuple_, update
from sqlalchemy.orm import Session

from bot.channels.channels import ChannelSettings
from bot.channels.schedule import parse_time
from bot.digest.compose import DigestBody
from bot.digest.models import DigestPlan
from bot.digest.weekly import WeeklySlot
from bot.services.models import Digest
from bot.services.posts import CLAIM_LEASE, retry_after
from store import Database
from store.database import as_utc, upsert_insert
from store.models import Channel, utcnow

BATCH = 500
# States after which a week's digest is settled: no tick touches it again.
SETTLED = ("sending", "posted", "quiet", "refused", "skipped")


@dataclass(frozen=True)
class Plan:
    weekday: str
    local_time: str  # HH:MM
    enabled: bool

    def slot(self, channel: ChannelSettings) -> WeeklySlot:
        """In the zone of the channel's schedule, UTC without one."""
        zone = channel.schedule.zone if channel.schedule else "UTC"
        return WeeklySlot(self.weekday, parse_time(self.local_time), zone)


@dataclass(frozen=True)
class Claimed:
    digest_id: int
    channel: ChannelSettings
    slot: WeeklySlot
    due_at: datetime


class Digests:
    def __init__(self, db: Database):
        self.db = db

    # --- plans -------------------------------------------------------------------------

    def plan(self, channel_id: int) -> Plan | None:
        with self.db.session() as session:
            row = session.get(DigestPlan, channel_id)
            return Plan(row.weekday, row.local_time, row.enabled) if row else None

    def set_plan(self, channel_id: int, weekday: str | None, local_time: str | None,
                 enabled: bool) -> Plan | None:
        """Change the parts given (None: kept); None when there is no plan to keep a
        part of (a day alone, or `on`, before any plan was set)."""
        with self.db.session() as session:
            row = session.get(DigestPlan, channel_id)
            if row is None:
                if weekday is None or local_time is None:
                    return None
                row = DigestPlan(channel_id=channel_id, weekday=weekday, local_time=local_time, enabled=enabled)
                session.add(row)
            row.weekday = weekday or row.weekday
            row.local_time = local_time or row.local_time
            row.enabled = enabled
            return Plan(row.weekday, row.local_time, row.enabled)

    def planned(self, platforms: set[str]) -> list[tuple[ChannelSettings, Plan]]:
        """Every channel on `platforms` whose digest is on."""
        with self.db.session() as session:
            rows = session.execute(
                select(Channel, DigestPlan).join(DigestPlan, DigestPlan.channel_id == Channel.id)
                .where(DigestPlan.enabled.is_(True), Channel.platform.in_(platforms)).order_by(Channel.id)
            ).all()
            return [(ChannelSettings.of(c), Plan(p.weekday, p.local_time, p.enabled)) for c, p in rows]

    # --- claims ------------------------------------------------------------------------

    def states(self, keys: list[tuple[int, str]]) -> dict[tuple[int, str], str]:
        """The state of each (channel id, week) that has a row: one query a tick, so a
        week already done costs no write."""
        found: dict[tuple[int, str], str] = {}
        for start in range(0, len(keys), BATCH):
            with self.db.session() as session:
                rows = session.execute(
                    select(Digest.channel_id, Digest.week, Digest.state)
                    .where(tuple_(Digest.channel_id, Digest.week).in_(keys[start:start + BATCH]))
                ).all()
            found.update({(c, w): state for c, w, state in rows})
        return found

    def claim(self, channel: ChannelSettings, slot: WeeklySlot, due_at: datetime, now: datetime,
              state: str = "claimed") -> Claimed | None:
        """The week's digest for this process, if its insert landed or it takes over a
        claim that failed (after its back-off), was released, or was abandoned."""
        week = slot.week(due_at)
        with self.db.session() as session:
            inserted = session.execute(
                upsert_insert(session, Digest).values(
                    channel_id=channel.id, week=week, due_at=due_at, state=state, attempts=1,
                    claimed_at=now, updated_at=now,
                ).on_conflict_do_nothing(index_elements=["channel_id", "week"]).returning(Digest.id)
            ).scalar()
            if inserted is not None or state != "claimed":
                return Claimed(inserted, channel, slot, due_at) if inserted is not None else None
            taken = self._retake(session, channel.id, week, now)
        return Claimed(taken, channel, slot, due_at) if taken is not None else None

    @staticmethod
    def _retake(session: Session, channel_id: int, week: str, now: datetime) -> int | None:
        row = session.execute(
            select(Digest.id, Digest.state, Digest.attempts, Digest.claimed_at).where(
                Digest.channel_id == channel_id, Digest.week == week,
                or_(Digest.state == "failed",
                    and_(Digest.state == "claimed", Digest.claimed_at < now - CLAIM_LEASE))),
        ).first()
        if row is None or (row.state == "failed" and now - as_utc(row.claimed_at) < retry_after(row.attempts)):
            return None
        # Conditional on the state it was read in: of two processes, one takes it.
        return session.execute(
            update(Digest).where(Digest.id == row.id, Digest.state == row.state,
                                 Digest.attempts == row.attempts)
            .values(state="claimed", attempts=Digest.attempts + 1, claimed_at=now, updated_at=utcnow())
            .returning(Digest.id)
        ).scalar()

    def sending(self, digest_id: int, body: DigestBody) -> None:
        """Marked just before delivery: from here on it is never taken over (it may be out)."""
        self._set(digest_id, state="sending", body=body)

    def finish(self, digest_id: int, state: str, message_ref: str | None = None, error: str | None = None) -> None:
        self._set(digest_id, state=state, message_ref=message_ref, error=error)

    def _set(self, digest_id: int, **values: object) -> None:
        with self.db.session() as session:
            session.execute(update(Digest).where(Digest.id == digest_id).values(**values, updated_at=utcnow()))

    def last(self, channel_id: int) -> Digest | None:
        """The channel's latest digest that went out (a quiet week's line included)."""
        with self.db.session() as session:
            return session.scalar(
                select(Digest).where(Digest.channel_id == channel_id, Digest.state.in_(("posted", "quiet")))
                .order_by(Digest.due_at.desc()).limit(1)
            )


def since_until(due_at: datetime) -> tuple[datetime, datetime]:
    """The week a digest covers: the seven days before its slot."""
    return due_at - timedelta(days=7), due_at

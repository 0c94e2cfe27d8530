"""Channel state: settings (schedule, topics, collections) and post history."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.channels.schedule import WEEKDAYS, Schedule, parse_time
from bot.corpus.records import COLLECTION_MAX
from bot.messages import ChannelRef
from store import Database
from store.database import dml_result
from store.models import Channel, utcnow

# Asked before every command (bot.core): built once, as constructing it cost about what
# running it does.
_WAITING_NOTICE = select(Channel.id, Channel.pause_notice).where(
    Channel.platform == bindparam("platform"), Channel.workspace == bindparam("workspace"),
    Channel.channel == bindparam("channel"), Channel.pause_notice.is_not(None),
)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ChannelSettings:
    """A detached, read-only view of a channel row, safe to pass between threads."""

    id: int
    ref: ChannelRef
    schedule: Schedule | None
    enabled: bool
    paused_until: date | None
    topics: tuple[str, ...]
    collections: tuple[str, ...]
    refusals: int = 0  # posting days in a row the platform refused for good
    reactions: str | None = None  # the emoji that vote here (bot/reactions/commands.py); None: the default

    @classmethod
    def of(cls, row: Channel) -> ChannelSettings:
        schedule = None
        if row.post_time:
            schedule = Schedule(parse_time(row.post_time), row.timezone, tuple(row.days.split(",")))
        return cls(
            id=row.id,
            ref=ChannelRef(row.platform, row.workspace, row.channel, row.org or ""),
            schedule=schedule,
            enabled=row.enabled,
            paused_until=row.paused_until,
            topics=tuple(row.topics),
            collections=tuple(row.collections),
            refusals=row.refusals or 0,
            reactions=row.reactions,
        )

    def paused_on(self, day: date) -> bool:
        return self.paused_until is not None and day <= self.paused_until


class Channels:
    def __init__(self, db: Database):
        self.db = db

    def get(self, ref: ChannelRef) -> ChannelSettings:
        """The channel's settings, creating the row on first contact."""
        with self.db.session() as session:
            return ChannelSettings.of(self._row(session, ref))

    def take_notice(self, ref: ChannelRef) -> str | None:
        """The notice waiting for this channel's next command (why its schedule paused
        itself), cleared as it is taken, so it is shown exactly once."""
        with self.db.connection() as connection:
            where = {"platform": ref.platform, "workspace": ref.workspace, "channel": ref.channel}
            found = connection.execute(_WAITING_NOTICE, where).first()
            if found is None:
                return None
            # Cleared only if still there: of two commands at once, one shows it.
            taken = connection.execute(
                update(Channel).where(Channel.id == found.id, Channel.pause_notice.is_not(None))
                .values(pause_notice=None)
            ).rowcount
            return found.pause_notice if taken else None

    def update(self, ref: ChannelRef, change: Callable[[Channel], None]) -> ChannelSettings:
        """Apply `change` to the channel row in one transaction."""
        with self.db.session() as session:
            row = self._row(session, ref)
            change(row)
            row.updated_at = utcnow()
            return ChannelSettings.of(row)

    def set_reactions(self, ref: ChannelRef, emoji: str | None) -> ChannelSettings:
        """The emoji that vote on this channel's posts, space-separated; None: the default."""

        def change(row: Channel) -> None:
            row.reactions = emoji

        return self.update(ref, change)

    def _row(self, session: Session, ref: ChannelRef) -> Channel:
        query = select(Channel).where(
            Channel.platform == ref.platform, Channel.workspace == ref.workspace, Channel.channel == ref.channel
        )
        row = session.scalar(query)
        if row is not None:
            if ref.org and row.org != ref.org:  # learnt from a request: kept for deliveries
                row.org = ref.org
            return row
        try:
            with session.begin_nested():
                row = Channel(
                    platform=ref.platform,
                    workspace=ref.workspace,
                    channel=ref.channel,
                    org=ref.org or None,
                    timezone="UTC",
                    days=",".join(WEEKDAYS),
                    enabled=False,
                    topics=[],
                    collections=[],
                )
                session.add(row)
        except IntegrityError:  # another process created it a moment ago
            row = session.scalars(query).one()
        return row

    def by_ids(self, channel_ids: list[int]) -> dict[int, ChannelSettings]:
        with self.db.session() as session:
            rows = session.scalars(select(Channel).where(Channel.id.in_(channel_ids)))
            return {r.id: ChannelSettings.of(r) for r in rows}

    def scheduled(self) -> list[ChannelSettings]:
        """Every channel with a schedule switched on."""
        with self.db.session() as session:
            rows = session.scalars(select(Channel).where(Channel.enabled.is_(True)).order_by(Channel.id))
            return [ChannelSettings.of(r) for r in rows]

    def pause_workspace(self, platform: str, workspace: str, notice: str) -> int:
        """Switch off every channel of a workspace the bot has left (a Slack app
        uninstalled, its token revoked), each with `notice` for its next command; how many."""
        with self.db.session() as session:
            return dml_result(session.execute(
                update(Channel)
                .where(Channel.platform == platform, Channel.workspace == workspace)
                .values(enabled=False, pause_notice=notice, updated_at=utcnow())
            )).rowcount


def added_collection(channel: ChannelRef) -> str:
    """The collection that holds a workspace's papers added in chat.

    Stored as `added-<platform>-<workspace>` (e.g. added-slack-T0123): one workspace's
    additions never mix with another's, and the name stays one word so `search in:` can
    name it. Members type plain `added` (`use added`): that word is mapped to their own
    workspace's collection (the daily feature's `use`), so the same word in two workspaces
    selects each one's own papers."""
    name = f"added-{channel.platform}-{_UNSAFE.sub('-', channel.workspace)}"
    return name[:COLLECTION_MAX]

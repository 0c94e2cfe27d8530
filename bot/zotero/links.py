"""Channels' links to Zotero group libraries in the database: making and removing them,
their status, and the lease a tick takes before it syncs one (exactly one process at a
time writes for a channel, across replicas)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update

from bot.zotero.api import WAIT_MOST
from bot.zotero.models import ZoteroItem, ZoteroLink
from store import Database
from store.database import as_utc, dml_result

LEASE = timedelta(minutes=5)  # a sync is a few requests with 20 s timeouts: well inside
# A failed sync is tried again after 1, 2, 4 ... minutes, at most every hour; a refused key
# (403) waits the hour at once: asking again every minute only earns more refusals.
RETRY_FIRST = timedelta(minutes=1)
RETRY_MOST = timedelta(hours=1)


@dataclass(frozen=True)
class LinkStatus:
    group_id: int
    group_name: str | None
    collection_key: str | None
    collection_name: str | None
    own_key: bool  # a key given in chat (else the operator's)
    synced: int
    waiting: int  # written but not yet confirmed
    refused: int
    last_sync_at: datetime | None
    last_error: str | None
    failed_at: datetime | None
    failures: int
    retry_at: datetime | None

    @property
    def where(self) -> str:
        place = f"group {self.group_name} ({self.group_id})"
        return f"{place}, collection {self.collection_name}" if self.collection_key else f"{place}, top level"


class ZoteroLinks:
    def __init__(self, db: Database):
        self.db = db

    def link(self, channel_id: int, group_id: int, group_name: str, collection: tuple[str, str] | None,
             sealed_key: str | None, user_id: str, now: datetime) -> None:
        """Link the channel (replacing a link it had, whose map of written items goes: what
        was written stays in Zotero, and the new collection is read before anything is
        written, so it is matched, not duplicated)."""
        with self.db.session() as session:
            session.execute(delete(ZoteroLink).where(ZoteroLink.channel_id == channel_id))
            session.add(ZoteroLink(channel_id=channel_id, group_id=group_id, group_name=group_name[:300],
                                   collection_key=collection[0] if collection else None,
                                   collection_name=collection[1][:300] if collection else None,
                                   api_key=sealed_key, linked_by=user_id, linked_at=now))

    def set_key(self, channel_id: int, sealed_key: str, user_id: str, now: datetime) -> None:
        """Keep a key given in chat: on the channel's link, or on a row of its own that the
        next `zotero link` completes."""
        with self.db.session() as session:
            done = session.execute(update(ZoteroLink).where(ZoteroLink.channel_id == channel_id)
                                   .values(api_key=sealed_key, retry_at=None, failures=0))
            if dml_result(done).rowcount == 0:
                session.add(ZoteroLink(channel_id=channel_id, api_key=sealed_key, linked_by=user_id, linked_at=now))

    def unlink(self, channel_id: int) -> bool:
        """Remove the link and its key; the items already written stay in Zotero."""
        with self.db.session() as session:
            done = session.execute(delete(ZoteroLink).where(ZoteroLink.channel_id == channel_id))
            return dml_result(done).rowcount > 0

    def get(self, channel_id: int) -> ZoteroLink | None:
        with self.db.session() as session:
            return session.scalar(select(ZoteroLink).where(ZoteroLink.channel_id == channel_id))

    def status(self, channel_id: int) -> LinkStatus | None:
        with self.db.session() as session:
            link = session.scalar(select(ZoteroLink).where(ZoteroLink.channel_id == channel_id))
            if link is None or link.group_id is None:
                return None
            counts = dict(session.execute(
                select(ZoteroItem.state, func.count()).where(ZoteroItem.link_id == link.id,
                                                             ZoteroItem.paper_id.is_not(None))
                .group_by(ZoteroItem.state)).all())
        return LinkStatus(link.group_id, link.group_name, link.collection_key, link.collection_name,
                          link.api_key is not None, counts.get("synced", 0), counts.get("pending", 0),
                          counts.get("failed", 0), as_utc(link.last_sync_at), link.last_error,
                          as_utc(link.failed_at), link.failures, as_utc(link.retry_at))

    # --- the tick's lease ---------------------------------------------------------------

    def due(self, now: datetime, limit: int) -> list[int]:
        """Links whose next sync may start now (nobody holds them, nothing postpones them)."""
        with self.db.session() as session:
            return list(session.scalars(
                select(ZoteroLink.id).where(_free(now)).order_by(ZoteroLink.last_sync_at.is_not(None),
                                                                 ZoteroLink.last_sync_at, ZoteroLink.id)
                .limit(limit)))

    def claim(self, link_id: int, now: datetime) -> str | None:
        """Take the link for one sync (UPDATE ... WHERE free: one process wins); the owner
        token to release it with, or None when another process has it."""
        owner = secrets.token_hex(8)
        with self.db.session() as session:
            won = session.execute(update(ZoteroLink).where(ZoteroLink.id == link_id, _free(now))
                                  .values(lease_until=now + LEASE, lease_owner=owner))
        return owner if dml_result(won).rowcount == 1 else None

    def finish(self, link_id: int, owner: str, now: datetime, error: str | None = None,
               wait: timedelta | None = None, refused: bool = False) -> None:
        """Release the lease and record how the sync went: `error` a failure (retried
        with a growing delay, or after `wait` when Zotero named one); `wait` alone: Zotero
        asked us to slow down (Backoff), not a failure. A wait is at most WAIT_MOST, so the
        time stored is always one a datetime can hold."""
        wait = min(wait, timedelta(seconds=WAIT_MOST)) if wait else None
        with self.db.session() as session:
            link = session.scalar(select(ZoteroLink).where(ZoteroLink.id == link_id,
                                                           ZoteroLink.lease_owner == owner))
            if link is None:  # unlinked meanwhile, or the lease was lost
                return
            link.lease_until, link.lease_owner = None, None
            if error is None:
                link.last_sync_at, link.failures = now, 0
                link.retry_at = now + wait if wait else None
                return
            link.failures += 1
            link.last_error, link.failed_at = error[:2000], now
            delay = RETRY_MOST if refused else min(RETRY_FIRST * 2 ** (link.failures - 1), RETRY_MOST)
            link.retry_at = now + max(delay, wait or timedelta(0))



def _free(now: datetime) -> ColumnElement[bool]:
    return and_(ZoteroLink.group_id.is_not(None), or_(ZoteroLink.lease_until.is_(None), ZoteroLink.lease_until < now),
                or_(ZoteroLink.retry_at.is_(None), ZoteroLink.retry_at <= now))

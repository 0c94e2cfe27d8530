"""Requests a platform may deliver twice (a replay inside its signature window, a retry
after a slow answer), acted on once: the first process to record a request's id acts,
every other copy is acknowledged and dropped.

The record is a row per id with an INSERT ... ON CONFLICT DO NOTHING, so it holds across
the processes of a deployment (several HTTP workers behind a load balancer). Rows older
than the window are pruned as new ones arrive.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import delete

from store import Database
from store.database import upsert_insert
from store.models import SeenRequest

# Slack refuses a signature older than five minutes; a copy arriving later than this
# cannot pass the signature check anyway.
DEFAULT_WINDOW = timedelta(minutes=10)
KEY_CHARS = 200  # the column's length; longer ids are hashed to fit
PRUNE_EVERY = 100  # prune once per this many new ids, not on every request


class SeenRequests:
    def __init__(self, db: Database, window: timedelta = DEFAULT_WINDOW):
        self.db = db
        self.window = window
        self._since_prune = 0

    def first_time(self, key: str, now: datetime) -> bool:
        """True for the first copy of the request named `key`, False for every other."""
        key = _fit(key)
        with self.db.session() as session:
            statement = (
                upsert_insert(session, SeenRequest)
                .values(key=key, seen_at=now)
                .on_conflict_do_nothing(index_elements=["key"])
                .returning(SeenRequest.key)
            )
            first = session.execute(statement).scalar() is not None
            self._since_prune += first
            if self._since_prune >= PRUNE_EVERY:
                self._since_prune = 0
                session.execute(delete(SeenRequest).where(SeenRequest.seen_at < now - self.window))
        return first


def _fit(key: str) -> str:
    if len(key) <= KEY_CHARS:
        return key
    return key[: KEY_CHARS - 65] + ":" + hashlib.sha256(key.encode()).hexdigest()

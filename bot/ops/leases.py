"""A lease: one process at a time does a thing (holds Slack's Socket Mode link), the others
wait and take over when it stops.

It is a heartbeat row (bot/ops/heartbeats.py, so /healthz and `paperclub status` can show
who holds it and since when) that only its holder may renew: the holder writes it every
few seconds; a row not renewed for `stale_after` is free (its holder was killed or cut off
from the database), and one let go (a clean stop) is free at once. Taking it is one
INSERT ... ON CONFLICT DO UPDATE ... WHERE (stale, or already ours), so two processes
racing for it cannot both win. Holders are told apart by a token of their own, not by
host and pid, which a restarted container may reuse.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete

from bot.ops.heartbeats import Beat, Heartbeats
from store import Database
from store.database import upsert_insert
from store.models import Heartbeat


class Lease:
    def __init__(self, db: Database, name: str, stale_after: timedelta, host: str | None = None,
                 pid: int | None = None):
        self.db = db
        self.name = name
        self.stale_after = stale_after
        self.beats = Heartbeats(db, host, pid)
        self.token = f"lease {secrets.token_hex(8)}"  # kept in the row's detail

    def take(self, now: datetime) -> bool:
        """Take or renew the lease at `now`: whether this process holds it now."""
        row = {"name": self.name, "at": now, "host": self.beats.host, "pid": self.beats.pid, "detail": self.token}
        with self.db.session() as session:
            statement = upsert_insert(session, Heartbeat).values(row)
            session.execute(statement.on_conflict_do_update(
                index_elements=["name"],
                set_={k: statement.excluded[k] for k in ("at", "host", "pid", "detail")},
                where=(Heartbeat.at < now - self.stale_after) | (Heartbeat.detail == self.token),
            ))
        holder = self.holder()
        return holder is not None and holder.detail == self.token

    def holder(self) -> Beat | None:
        """Who holds it (or held it last, if that went stale), and when they renewed it."""
        return self.beats.last(self.name)

    def release(self) -> None:
        """Let it go, so a waiting process takes it at its next try; nothing if not ours."""
        with self.db.session() as session:
            session.execute(delete(Heartbeat).where(Heartbeat.name == self.name, Heartbeat.detail == self.token))

"""Heartbeats: the last time a named loop ran, kept in the database.

The scheduler runs in exactly one process (the Procfile's worker), but /healthz is
answered by every web process: the heartbeat row is how a web process can tell whether
the scheduler somewhere else is still ticking.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from store import Database
from store.database import upsert_insert
from store.models import Heartbeat

SCHEDULER = "scheduler"


@dataclass(frozen=True)
class Beat:
    name: str
    at: datetime
    host: str
    pid: int
    detail: str


class Heartbeats:
    def __init__(self, db: Database, host: str | None = None, pid: int | None = None):
        self.db = db
        self.host = host or socket.gethostname()
        self.pid = pid or os.getpid()

    def beat(self, name: str, at: datetime, detail: str = "") -> None:
        row = {"name": name, "at": at, "host": self.host, "pid": self.pid, "detail": detail}
        with self.db.session() as session:
            statement = upsert_insert(session, Heartbeat).values(row)
            session.execute(
                statement.on_conflict_do_update(
                    index_elements=["name"],
                    set_={k: statement.excluded[k] for k in ("at", "host", "pid", "detail")},
                )
            )

    def last(self, name: str) -> Beat | None:
        with self.db.session() as session:
            row = session.scalar(select(Heartbeat).where(Heartbeat.name == name))
            if row is None:
                return None
            return Beat(row.name, row.at, row.host, row.pid, row.detail)

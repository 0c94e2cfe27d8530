"""What /healthz reports: the database, the search index, the scheduler's last tick.

Only an unreachable database makes the process unhealthy (HTTP 503): that is what a
restart can fix. A stale scheduler is reported as "degraded" with its host and age,
because restarting the web process that answers would not revive a worker elsewhere.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from bot.corpus.library import Library
from bot.ops.heartbeats import SCHEDULER, Beat, Heartbeats
from bot.search.engine import SearchBackend
from store import Database
from store.database import as_utc

# Three missed minutes: more than a slow tick, less than an outage anyone should miss.
SCHEDULER_STALE = timedelta(minutes=3)


def health_report(
    db: Database, library: Library, search: SearchBackend, beats: Heartbeats, now: datetime
) -> tuple[bool, dict[str, Any]]:
    """(healthy, the report as JSON-ready data)."""
    report: dict[str, Any] = {"status": "ok"}
    try:
        corpus_revision = library.revision()
        schema = db.current_revision()
        beat = beats.last(SCHEDULER)
    except SQLAlchemyError as problem:
        report.update(status="unhealthy", database=f"unreachable: {type(problem).__name__}")
        return False, report
    report["database"] = {"status": "ok", "schema": schema, "schema_current": schema == db.head_revision()}
    report["index"] = _index(search, corpus_revision)
    report["scheduler"] = _scheduler(beat, now)
    if not report["database"]["schema_current"] or report["scheduler"]["status"] != "ok":
        report["status"] = "degraded"
    return True, report


def _index(search: SearchBackend, corpus_revision: int) -> dict[str, Any]:
    index = search.loaded()
    if index is None:
        return {"status": "not loaded", "corpus_revision": corpus_revision}
    return {
        "status": "ok" if index.revision == corpus_revision else "updating",
        "revision": index.revision,
        "corpus_revision": corpus_revision,
        "papers": index.live_count(),
    }


def _scheduler(beat: Beat | None, now: datetime) -> dict[str, Any]:
    if beat is None:
        return {"status": "never ran"}
    at = as_utc(beat.at)  # SQLite drops zones
    age = now - at
    return {
        "status": "ok" if age <= SCHEDULER_STALE else "stale",
        "last_tick": at.isoformat(),
        "age_seconds": round(age.total_seconds()),
        "host": beat.host,
        "pid": beat.pid,
        "last_result": beat.detail,
    }

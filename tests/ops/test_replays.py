"""A request id is acted on once, across processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select

from bot.ops.replays import KEY_CHARS, PRUNE_EVERY, SeenRequests
from store.models import SeenRequest

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)


def test_the_first_copy_acts_and_every_other_does_not(db):
    seen = SeenRequests(db)
    assert seen.first_time("slack:trigger:1.2.3", NOW)
    assert not seen.first_time("slack:trigger:1.2.3", NOW + timedelta(seconds=5))
    assert seen.first_time("slack:trigger:1.2.4", NOW)


def test_concurrent_copies_make_exactly_one_first(db):
    firsts: list[bool] = []
    start = threading.Barrier(8)

    def copy() -> None:
        seen = SeenRequests(db)  # a process of its own, as far as the record knows
        start.wait()
        firsts.append(seen.first_time("slack:event:Ev123", NOW))

    threads = [threading.Thread(target=copy) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(firsts) == [False] * 7 + [True]


def test_a_long_id_is_hashed_to_fit_and_still_told_apart(db):
    seen = SeenRequests(db)
    a, b = "x" * 500 + "a", "x" * 500 + "b"
    assert seen.first_time(a, NOW) and seen.first_time(b, NOW)
    assert not seen.first_time(a, NOW)
    with db.session() as session:
        assert max(len(k) for k in session.scalars(select(SeenRequest.key))) <= KEY_CHARS


def test_ids_older_than_the_window_are_pruned(db):
    seen = SeenRequests(db, window=timedelta(minutes=10))
    seen.first_time("old", NOW)
    for n in range(PRUNE_EVERY):
        seen.first_time(f"new-{n}", NOW + timedelta(minutes=11))
    with db.session() as session:
        keys = set(session.scalars(select(SeenRequest.key)))
        assert "old" not in keys and session.scalar(select(func.count()).select_from(SeenRequest)) == PRUNE_EVERY

"""One process at a time: a lease kept in the heartbeats table, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bot.ops.leases import Lease
from store.database import as_utc

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)
STALE = timedelta(seconds=45)


def test_one_holder_at_a_time_until_it_lets_go(db):
    first, second = (Lease(db, "slack-socket-mode", STALE, host=h, pid=1) for h in ("web-1", "web-2"))
    assert first.take(NOW)
    assert not second.take(NOW + timedelta(seconds=1))  # held and fresh
    assert first.take(NOW + timedelta(seconds=10))  # the holder renews
    assert not second.take(NOW + timedelta(seconds=50))  # 40 s since the renewal: still fresh
    holder = second.holder()
    assert (holder.host, as_utc(holder.at)) == ("web-1", NOW + timedelta(seconds=10))
    first.release()  # a clean stop
    assert second.take(NOW + timedelta(seconds=51))
    assert not first.take(NOW + timedelta(seconds=52))
    second.release()
    first.release()  # not its lease: nothing happens
    assert Lease(db, "slack-socket-mode", STALE).holder() is None


def test_a_holder_that_stopped_renewing_loses_the_lease(db):
    first, second = Lease(db, "slack-socket-mode", STALE), Lease(db, "slack-socket-mode", STALE)
    assert first.take(NOW)
    assert second.take(NOW + STALE + timedelta(seconds=1))  # killed, or cut off from the database
    assert not first.take(NOW + STALE + timedelta(seconds=2))  # it finds out at its next renewal
    assert Lease(db, "other-thing", STALE).take(NOW)  # leases by name are independent

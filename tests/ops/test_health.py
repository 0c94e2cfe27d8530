"""/healthz: the database, the search index and the scheduler's last tick."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from adapters.wsgi import HEALTH_PATH, HealthServer, json_endpoint
from bot.app import build_services
from bot.ops.health import health_report
from bot.ops.heartbeats import SCHEDULER, Heartbeats
from tests.processes import free_port, get_json

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)


def _report(services, now=NOW):
    return health_report(services.db, services.library, services.search, Heartbeats(services.db), now)


def test_a_fresh_process_reports_its_schema_and_that_no_tick_ran_yet(seeded_copy):
    services = build_services(seeded_copy)
    healthy, report = _report(services)
    assert healthy and report["status"] == "degraded"  # no scheduler has ticked anywhere
    assert report["database"] == {"status": "ok", "schema": services.db.head_revision(), "schema_current": True}
    assert report["index"]["status"] == "not loaded"
    assert report["scheduler"] == {"status": "never ran"}
    services.db.dispose()


def test_a_recent_tick_and_a_loaded_index_are_ok(seeded_copy):
    services = build_services(seeded_copy)
    services.search.current()
    Heartbeats(services.db, host="worker-1", pid=7).beat(SCHEDULER, NOW - timedelta(seconds=40), "posted=2")
    healthy, report = _report(services)
    assert healthy and report["status"] == "ok"
    assert report["index"]["status"] == "ok" and report["index"]["papers"] == 1091
    assert report["scheduler"] == {"status": "ok", "last_tick": (NOW - timedelta(seconds=40)).isoformat(),
                                   "age_seconds": 40, "host": "worker-1", "pid": 7, "last_result": "posted=2"}
    services.db.dispose()


def test_a_scheduler_silent_for_minutes_is_degraded_not_unhealthy(seeded_copy):
    services = build_services(seeded_copy)
    Heartbeats(services.db).beat(SCHEDULER, NOW - timedelta(minutes=10))
    healthy, report = _report(services)
    # Restarting the web process would not revive a worker elsewhere: report, stay up.
    assert healthy and report["status"] == "degraded" and report["scheduler"]["status"] == "stale"
    assert report["scheduler"]["age_seconds"] == 600
    services.db.dispose()


def test_an_unreachable_database_is_unhealthy():
    port = free_port()  # nothing listens there
    services = build_services(f"postgresql+psycopg://nobody@127.0.0.1:{port}/none?connect_timeout=2",
                              ensure_schema=False)
    healthy, report = _report(services)
    assert not healthy and report == {"status": "unhealthy", "database": "unreachable: OperationalError"}
    services.db.dispose()


def test_the_endpoint_answers_200_or_503_as_json(seeded_copy):
    services = build_services(seeded_copy)
    state = {"healthy": True}
    port = free_port()
    server = HealthServer(port, json_endpoint(lambda: (state["healthy"], {"status": "x"})))
    server.start()
    try:
        assert get_json(f"http://127.0.0.1:{port}{HEALTH_PATH}") == (200, {"status": "x"})
        state["healthy"] = False
        assert get_json(f"http://127.0.0.1:{port}{HEALTH_PATH}") == (503, {"status": "x"})
        code, _ = get_json_or_text(f"http://127.0.0.1:{port}/elsewhere")
        assert code == 404
    finally:
        server.stop()
        services.db.dispose()


def get_json_or_text(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()

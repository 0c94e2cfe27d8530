"""`paperclub serve` with a follow whose provider never answers (issue 45): the fetch runs
on a job of its own, so another channel's paper of the day still goes out while the
request is held, and SIGTERM ends the process at once, the follow put off with no wait
for the next process to take."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from adapters.bench.fake_arxiv import FakeArxiv
from adapters.console import ConsoleSession
from bot.app import build_services
from bot.follows.models import Follow
from tests.processes import ServeProcess


def _send(url: str, channel: str, line: str) -> None:
    services = build_services(url)
    try:
        reply = ConsoleSession(services.core, channel=channel, user="alice", manager=True).send(line)
        assert reply.ok, reply.text
    finally:
        services.db.dispose()


def test_a_held_fetch_delays_no_post_and_sigterm_stops_serve_at_once(seeded_copy, tmp_path):
    _send(seeded_copy, "follows", "follow arxiv cs.LG")
    with FakeArxiv() as arxiv:
        arxiv.fail(*["timeout"] * 10)  # every request held until released: only a cut ends it
        server = ServeProcess([], {"PAPERCLUB_DATABASE_URL": seeded_copy, "PAPERCLUB_TICK_SECONDS": "1",
                                   "PAPERCLUB_ARXIV_API_URL": arxiv.url}, tmp_path / "serve.log").start()
        try:
            end = time.monotonic() + 60
            while not arxiv.requests and time.monotonic() < end:
                time.sleep(0.05)
            assert arxiv.requests, server.log()
            # Now another channel's paper comes due; it goes out while the fetch is held.
            due = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%H:%M")
            _send(seeded_copy, "reading", f"schedule {due} UTC daily")
            server.wait_for_log("posted paper")
            assert not arxiv.release.is_set() and len(arxiv.requests) == 1  # still the one held request
            exit_code = server.terminate()
        finally:
            server.kill()
    log = server.log()
    assert exit_code == 0 and "paperclub stopped" in log, log
    assert "Traceback" not in log, log
    services = build_services(seeded_copy)
    with services.db.session() as session:
        follow = session.scalar(select(Follow))
        assert follow.last_status == "waiting", follow.last_message
        assert follow.last_message.startswith("paperclub restarted during the fetch")
        assert follow.wait_until == follow.last_run_at  # no wait: the next process takes it at once
    services.db.dispose()

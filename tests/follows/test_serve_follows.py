"""`paperclub serve` with a follow whose provider misbehaves as issue 45 found them: an
answer held, a `Retry-After: 599`, a body dripped a byte at a time, a page of 58,000
entries, a page of 49.9 MB, an OpenAlex cursor that never ends. The fetches run on a job
of their own, so another channel's paper of the day still goes out (here while the
request is still held or dripping), the log says what became of the follow, and SIGTERM
ends the process at once, a fetch in flight cut and its follow put off with no wait."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from adapters.console import ConsoleSession
from adapters.fakes.arxiv import FakeArxiv
from adapters.fakes.openalex import FakeAuthor, FakeOpenAlex
from bot.app import build_services
from bot.follows.models import Follow
from tests.processes import ServeProcess

AUTHOR = FakeAuthor("A5000000001", "Ada Lovelace", "Analytical Engine Institute", 42)

# fault -> (the follow, what the log says of it, its status after SIGTERM, whether the
# request is still in flight when the post goes out)
CASES = {
    "timeout": ("arxiv", "", "waiting", True),
    "drip": ("arxiv", "", "waiting", True),
    "retry-after=599": ("arxiv", "put off until", "waiting", False),
    "crowd": ("arxiv", "a page of 58,000 entries, more than the 500 a refresh takes", "failed", False),
    "huge": ("arxiv", "the answer is larger than 20,000,000 bytes", "failed", False),
    "endless": ("author", "stopped after 10 pages", "ok", False),
}


def _send(url: str, channel: str, line: str, openalex: str) -> None:
    services = build_services(url, env={"PAPERCLUB_OPENALEX_API_URL": openalex})
    try:
        reply = ConsoleSession(services.core, channel=channel, user="alice", manager=True).send(line)
        assert reply.ok, reply.text
    finally:
        services.db.dispose()


def _follow(url: str) -> Follow:
    services = build_services(url)
    try:
        with services.db.session() as session:
            follow = session.scalar(select(Follow))
            session.expunge(follow)
            return follow
    finally:
        services.db.dispose()


@pytest.mark.parametrize("fault", list(CASES))
def test_a_misbehaving_provider_delays_no_post_and_sigterm_stops_serve_at_once(fault, seeded_copy, tmp_path):
    kind, logged, status, in_flight = CASES[fault]
    with FakeArxiv() as arxiv, FakeOpenAlex([], [AUTHOR]) as openalex:
        _send(seeded_copy, "follows", "follow arxiv cs.LG" if kind == "arxiv" else "follow author A5000000001",
              openalex.base)
        if fault == "endless":
            openalex.endless = True
        else:
            arxiv.fail(*[fault] * 20)
        fake = arxiv if kind == "arxiv" else openalex
        server = ServeProcess([], {"PAPERCLUB_DATABASE_URL": seeded_copy, "PAPERCLUB_TICK_SECONDS": "1",
                                   "PAPERCLUB_ARXIV_API_URL": arxiv.url, "PAPERCLUB_OPENALEX_API_URL": openalex.base},
                              tmp_path / "serve.log").start()
        try:
            end = time.monotonic() + 60
            while not [p for p, _ in fake.requests if p in ("/api/query", "/works")] and time.monotonic() < end:
                time.sleep(0.05)
            # Now another channel's paper comes due; it goes out whatever the provider does.
            due = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%H:%M")
            _send(seeded_copy, "reading", f"schedule {due} UTC daily", openalex.base)
            server.wait_for_log("posted paper")
            if in_flight:  # posted while the one request is still held or dripping
                assert not arxiv.release.is_set() and len(arxiv.requests) == 1
            if logged:
                server.wait_for_log(logged)
            exit_code = server.terminate()
        finally:
            server.kill()
    log = server.log()
    assert exit_code == 0 and "paperclub stopped" in log, log
    assert "Traceback" not in log, log
    follow = _follow(seeded_copy)
    assert follow.last_status == status, follow.last_message
    if in_flight:  # cut by the stop: the next process takes it at once
        assert follow.last_message.startswith("paperclub restarted during the fetch")
        assert follow.wait_until == follow.last_run_at

"""The database goes away for 30 s under a running `paperclub serve`, then comes back.

The outage is real: the test's PostgreSQL database stops accepting connections and every
connection the bot holds is terminated (what a failover or a restart of the server does).
Members get a clear "try again", /healthz says 503, nothing crashes, and once the
database is back the bot answers and posts again without being restarted.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from adapters.bench.slack import post_signed
from adapters.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    TEAM,
    FakeSlack,
    signed_headers,
    slash_command,
)
from bot.app import build_services
from bot.messages import ChannelRef, Incoming, UserRef
from tests.processes import ServeProcess, free_port, get_json

OUTAGE_SECONDS = 30


def _cut(admin, database: str) -> None:
    with admin.connect() as connection:
        connection.execute(text(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false'))
        connection.execute(
            text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"),
            {"name": database},
        )


def _restore(admin, database: str) -> None:
    with admin.connect() as connection:
        connection.execute(text(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true'))


def _search(port: int, slack: FakeSlack) -> tuple[int, str]:
    body = slash_command("search graph biconnectivity", slack.response_url())
    status, answer = post_signed(port, body, signed_headers(body))
    return status, json.loads(answer).get("text", "") if status == 200 else answer


def _schedule_a_slack_channel_due_now(url: str) -> None:
    services = build_services(url)
    due = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%H:%M")
    admin = UserRef("slack", "U0ADMIN", "admin", is_manager=True)
    reply = services.core.handle(Incoming(ChannelRef("slack", TEAM, "C0DAILY"), admin, f"schedule {due} UTC daily"))
    assert reply.ok, reply.text
    services.db.dispose()


@pytest.mark.postgres
@pytest.mark.waits
@pytest.mark.parametrize("seeded_db_url", ["postgresql"], indirect=True)
def test_a_30_second_database_outage_gets_try_again_and_the_bot_recovers_by_itself(
    seeded_db_url, postgres_admin, tmp_path
):
    database = make_url(seeded_db_url).database
    _schedule_a_slack_channel_due_now(seeded_db_url)
    port = free_port()
    with FakeSlack() as slack:
        # The due post cannot go out before the outage (Slack is having trouble of its own,
        # which passes), so it is still due when the database comes back: the scheduler
        # must post it then, once its retry back-off (a minute after the first try) ends.
        slack.failing["chat.postMessage"] = "internal_error"
        env = {
            "PAPERCLUB_DATABASE_URL": seeded_db_url,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
            "PORT": str(port),
            "PAPERCLUB_TICK_SECONDS": "2",
        }
        server = ServeProcess(["slack"], env, tmp_path / "serve.log").start()
        try:
            server.wait_until_listening(port)
            assert _search(port, slack)[1].startswith("Top 5 of")
            slack.wait_for_arrival("chat.postMessage", 1)  # the tick tried the due post
            assert get_json(f"http://127.0.0.1:{port}/healthz")[0] == 200

            _cut(postgres_admin, database)
            try:
                answers, health = [], []
                ends = time.monotonic() + OUTAGE_SECONDS
                while time.monotonic() < ends:
                    answers.append(_search(port, slack))
                    health.append(get_json(f"http://127.0.0.1:{port}/healthz"))
                    assert server.alive(), server.log()
                    time.sleep(2)
            finally:
                _restore(postgres_admin, database)
            slack.failing.clear()

            assert len(answers) >= 10
            assert all(status == 200 and "try again in a minute" in said for status, said in answers), answers
            assert all(code == 503 and body["database"].startswith("unreachable") for code, body in health)

            recovered = _wait_for(lambda: _search(port, slack)[1].startswith("Top 5 of"), 15)
            assert recovered, server.log()
            posted = _wait_for(lambda: [c for c in slack.calls_to("chat.postMessage") if c.answer.get("ok")], 90)
            assert len(posted) == 1 and posted[0].params["channel"] == "C0DAILY"
            code, report = get_json(f"http://127.0.0.1:{port}/healthz")
            assert code == 200 and report["scheduler"]["status"] == "ok"
            assert report["index"]["papers"] == 1091
        finally:
            exit_code = server.terminate()
    log = server.log()
    assert exit_code == 0, log
    assert "tick skipped: the database is unreachable" in log
    assert "Traceback" not in log, log
    # One line per command with its channel and latency; never what was typed, nor a secret.
    assert "command channel=slack:T0PAPERS:C0READING user=U0MEMBER command=search ok=false ms=" in log
    assert "biconnectivity" not in log and "response_url" not in log
    assert BOT_TOKEN not in log and SIGNING_SECRET not in log


def _wait_for(condition, seconds: float):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.5)
    return condition()

"""No 5xx for junk: 1,000 generated junk requests (tests/slack/junk.py) against what
`paperclub serve slack` answers on its port, served by waitress on 127.0.0.1 in this
process: the Slack app behind its edge, /healthz, the archive pages and calendar feeds.
Not one answer is a 5xx, nothing logs a traceback, and each signed request refused as
malformed is one log line."""

from __future__ import annotations

import logging
import re
import socket
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from adapters.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET
from adapters.runtime import Process
from adapters.slack.app import SlackServer
from adapters.slack.config import SlackSettings
from bot.app import build_services
from bot.messages import ChannelRef, Incoming, UserRef
from tests.slack.harness import BOSS, CHANNEL
from tests.slack.junk import Junk, JunkMaker

PUBLIC_URL = "https://paperclub.example.org"
REQUESTS = 1000
SEED = 28


class Records(logging.Handler):
    """Every record, with the thread that logged it."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield handler
    root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture
def served(seeded_copy, slack):
    """`paperclub serve slack` in this process, on a free port: (port, archive token,
    calendar token, the server)."""
    services = build_services(seeded_copy, public_url=PUBLIC_URL)
    boss = UserRef("slack", BOSS, "boss", True)
    channel = ChannelRef("slack", "T0PAPERS", CHANNEL)
    tokens = []
    for kind, line in (("archive", "archive"), ("calendar", "session calendar")):
        reply = services.core.handle(Incoming(channel, boss, line))
        tokens.append(re.search(rf"/{kind}/([A-Za-z0-9_-]+)", reply.text).group(1))
    settings = SlackSettings(SIGNING_SECRET, bot_token=BOT_TOKEN, api_url=slack.api_url, port=0)
    server = SlackServer(services, settings, extra=Process(services, scheduler_on=False).routes())
    server.start()
    yield server._server.effective_port, *tokens, server
    server.stop(5.0)
    services.db.dispose()


def send(port: int, raw: bytes) -> int:
    """The status of the answer to these bytes (0: the server closed without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(raw)
        connection.shutdown(socket.SHUT_WR)
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    status = answer.split(b"\r\n", 1)[0].split(b" ")
    return int(status[1]) if len(status) > 1 and status[1].isdigit() else 0


def answered_by_a_request(record: logging.LogRecord) -> bool:
    """Logged while answering a request, not by an answer after the ack of an earlier one
    (bolt's listener pool, or the pool that answers later and its fetches)."""
    return not record.threadName.startswith(("slack-listener", "slack-later", "add-fetch"))


def unknown_transfer_coding(junk: Junk, status: int) -> bool:
    """waitress answers a Transfer-Encoding it does not implement (gzip, identity, x)
    with 501 Not Implemented, as HTTP asks (RFC 9112, 6.1), before any app runs."""
    head = junk.raw.split(b"\r\n\r\n", 1)[0].lower()
    coding = re.search(rb"\r\ntransfer-encoding: *([^\r]*)", head)
    return status == 501 and coding is not None and coding.group(1).strip() != b"chunked"


def test_a_thousand_junk_requests_get_no_5xx_and_no_traceback(served, slack, records):
    port, archive, calendar, server = served
    junk = JunkMaker(SEED, archive, calendar, slack.response_url()).requests(REQUESTS)
    started = time.monotonic()
    answers: list[tuple[Junk, int, list[logging.LogRecord]]] = []
    for request in junk:
        before = len(records.records)
        status = send(port, request.raw)
        answers.append((request, status, [r for r in records.records[before:] if answered_by_a_request(r)]))
    server.stop(5.0)  # the lazy answers of the well-formed requests have finished
    elapsed = time.monotonic() - started

    failures = [(j.kind, status, j.raw[:200] + b"..." + j.raw[-300:]) for j, status, _ in answers
                if (status >= 500 and not unknown_transfer_coding(j, status)) or status == 0]
    assert failures == [], (Counter(kind for kind, _, _ in failures), *failures[:8])
    tracebacks = [r for r in records.records if r.exc_info or "Traceback" in r.getMessage()]
    assert tracebacks == [], [(r.name, r.getMessage()[:300]) for r in tracebacks[:3]]
    # A signed request refused as malformed is one line, never a traceback.
    refused = [(j, logged) for j, status, logged in answers if j.signed_slack and status == 400]
    assert refused and all(len(logged) == 1 for _, logged in refused), \
        [(j.raw[-300:], [r.getMessage() for r in logged]) for j, logged in refused if len(logged) != 1][:3]
    statuses = Counter(status for _, status, _ in answers)
    assert statuses[400] and statuses[404] and statuses[405] and statuses[200], statuses
    print(f"{REQUESTS} junk requests in {elapsed:.1f} s: {dict(sorted(statuses.items()))}")

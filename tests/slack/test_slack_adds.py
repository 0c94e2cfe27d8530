"""Slow `add` lines never hold up anyone else's command (issue 28, finding 1): through the
real bolt App with the pools `paperclub serve slack` gives it, and SIGTERM through a real
`paperclub serve` process."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from adapters.bench.slack import post_signed
from adapters.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, signed_headers, slash_command
from adapters.slack.app import LATER_THREADS, LISTENER_THREADS, build_app
from adapters.slack.config import SlackSettings
from bot.adding.addresses import any_address
from bot.adding.providers import Providers
from bot.adding.web import ChatFetcher, ChatFetchPolicy
from bot.services.fetching import FETCH_WORKERS
from tests.adding.slow_pages import SlowPages
from tests.processes import ServeProcess, free_port
from tests.slack.harness import MEMBER, command

BUDGET = 2.0
ACK_SECONDS = 1.0  # what other members' commands are acknowledged within


@pytest.fixture
def slow():
    with SlowPages() as pages:
        yield pages


@pytest.fixture
def pooled(services, slack):
    """The App as SlackServer builds it: bolt's listener pool for the acks, a pool of
    its own for the answers after them."""
    listeners = ThreadPoolExecutor(LISTENER_THREADS, "test-listener")
    later = ThreadPoolExecutor(LATER_THREADS, "test-later")
    settings = SlackSettings(SIGNING_SECRET, bot_token=BOT_TOKEN, api_url=slack.api_url)
    app = build_app(services, settings, listeners, later=later)[0]
    fetcher = ChatFetcher(ChatFetchPolicy(timeout=BUDGET, spacing=0.0), addresses=any_address)
    services.feature("adding").providers = Providers(fetcher=fetcher)
    services.search.warm()  # the index and the compiled loops loaded, as `serve` does before it listens
    yield app
    services.core.stop()
    later.shutdown(wait=True)
    listeners.shutdown(wait=True)


def _slow_line(slow: SlowPages, n: int) -> str:
    kinds = ("drip-headers", "drip-headers", "drip-body", "drip-body", "silent")
    return "add " + " ".join(slow.url(kind, n * 10 + i) for i, kind in enumerate(kinds))


def _timed(app, slack, text: str, user: str) -> tuple[int, float, str]:
    started = time.monotonic()
    response = command(app, slack, text, user=user)
    return response.status, time.monotonic() - started, response.body


def _others_meanwhile(app, slack, answers: int) -> list[tuple[int, float, str]]:
    """Other members' help and search, one after another, until the adds have sent
    their `answers` (each through its response_url)."""
    answered: list[tuple[int, float, str]] = []
    deadline = time.monotonic() + 30
    while len(slack.calls_to("response_url")) < answers and time.monotonic() < deadline:
        text = "help" if len(answered) % 2 else "search graph neural networks"
        answered.append(_timed(app, slack, text, user=f"U0OTHER{len(answered) % 5}"))
    return answered


def test_forty_slow_add_lines_from_one_member_hold_up_no_one(pooled, slack, slow):
    with ThreadPoolExecutor(40) as senders:
        adds = [senders.submit(_timed, pooled, slack, _slow_line(slow, n), MEMBER) for n in range(40)]
        others = _others_meanwhile(pooled, slack, 40)
        acks = [add.result() for add in adds]
    assert len(others) > 4 and all(status == 200 for status, _took, _body in acks + others)
    slowest = max(took for _status, took, _body in others)
    assert slowest < ACK_SECONDS, f"another member waited {slowest:.2f} s for an ack"
    assert all(body for _status, _took, body in others)  # answered inside the ack
    answers = [c.params["text"] for c in slack.wait_for("response_url", 40, timeout=30)]
    assert len(answers) == 40
    timed_out = [a for a in answers if "timed out; try again" in a]
    assert timed_out and all(a.count("timed out; try again") == 5 for a in timed_out)
    assert sum("still adding your last links" in a for a in answers) == 40 - len(timed_out) > 0
    assert slow.most_at_once <= 5  # one line of this member's at a time


def test_slow_adds_from_many_members_leave_the_acks_free(pooled, slack, slow):
    """More members adding slow links at once than bolt has listener threads: each is
    acked, the others' commands too, and fetches stay within the global cap."""
    members = LISTENER_THREADS + 4
    with ThreadPoolExecutor(members) as senders:
        adds = [senders.submit(_timed, pooled, slack, f"add {slow.url('silent', n)}", f"U0ADDER{n}")
                for n in range(members)]
        others = _others_meanwhile(pooled, slack, members)
        acks = [add.result() for add in adds]
    assert len(others) > 4 and all(status == 200 for status, _took, _body in acks + others)
    slowest = max(took for _status, took, _body in others)
    assert slowest < ACK_SECONDS, f"another member waited {slowest:.2f} s for an ack"
    assert max(took for _status, took, _body in acks) < 3  # Slack's limit: sent all at once, they queue a bit
    answers = [c.params["text"] for c in slack.wait_for("response_url", members, timeout=30)]
    assert len(answers) == members and all("timed out; try again" in a for a in answers)
    assert slow.most_at_once <= FETCH_WORKERS


def test_sigterm_abandons_adds_in_flight_with_a_reply(seeded_copy, slack, slow, tmp_path):
    port = free_port()
    server = ServeProcess(["slack", "--no-scheduler"], {
        "PAPERCLUB_DATABASE_URL": seeded_copy, "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": slack.api_url, "PORT": str(port),
        "PAPERCLUB_FETCH_ALLOW_PRIVATE": "1", "PAPERCLUB_ADD_TIMEOUT": "60",
    }, tmp_path / "serve.log").start()
    try:
        server.wait_until_listening(port)
        for n in range(3):
            body = slash_command(f"add {slow.url('silent', n)}", slack.response_url(f"m{n}"), user=f"U0ADDER{n}")
            assert post_signed(port, body, signed_headers(body))[0] == 200
        assert slow.wait_for_connections(3) == 3  # three adds waiting on their pages
        started = time.monotonic()
        assert server.terminate() == 0
        took = time.monotonic() - started
    finally:
        server.kill()
    assert took < 10, f"serve took {took:.1f} s to stop:\n{server.log()}"
    answers = [c.params["text"] for c in slack.calls_to("response_url")]
    assert len(answers) == 3 and all("stopped before I could finish" in a for a in answers), answers
    assert "Traceback" not in server.log()

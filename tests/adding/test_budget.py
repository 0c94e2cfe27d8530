"""An `add` line within its time budget whatever the pages do, one line in flight per
member, failed fetches counted, bad link syntax and page charsets (issue 28, findings
1, 2, 4 and 6)."""

from __future__ import annotations

import http.client
import threading
import time
from urllib.parse import urlsplit

import pytest

from bot.adding.web import ChatFetchPolicy, link_problem
from bot.corpus.cutoffs import Cutoffs
from tests.adding.conftest import closed_port, counts, providers_for, say, stored
from tests.adding.slow_pages import SlowPages

BUDGET = 2.0  # seconds for a line in these tests (PAPERCLUB_ADD_TIMEOUT)
DECISION = "Decision Transformer: Reinforcement Learning via Sequence Modeling"


@pytest.fixture(scope="module")
def slow():
    with SlowPages() as pages:
        yield pages


@pytest.fixture
def budgeted(built, fake):
    built.feature("adding").providers = providers_for(fake, policy=ChatFetchPolicy(timeout=BUDGET, spacing=0.0))
    return built


def _slow_links(slow: SlowPages, line: int) -> list[str]:
    kinds = ("drip-headers", "drip-headers", "drip-body", "drip-body", "silent")
    return [slow.url(kind, line * 10 + n) for n, kind in enumerate(kinds)]


def test_five_slow_links_on_one_line_are_answered_within_the_budget(budgeted, slow):
    links = _slow_links(slow, 1)
    before, started = stored(budgeted.db), time.monotonic()
    reply = say(budgeted, "add " + " ".join(links))
    took = time.monotonic() - started
    assert took < BUDGET + 2, f"answered after {took:.1f} s"
    assert not reply.ok
    for link in links:  # each named, with what to do
        assert f"{link}: timed out; try again" in reply.text, reply.text
    assert stored(budgeted.db) == before


def test_a_fast_link_beside_slow_ones_is_still_added(budgeted, fake, slow):
    links = _slow_links(slow, 2)[1:]  # four slow ones: a line takes five links
    started = time.monotonic()
    reply = say(budgeted, "add " + " ".join([*links, "2106.01345"]))
    assert time.monotonic() - started < BUDGET + 2
    assert reply.ok and [c.title for c in reply.cards] == [DECISION], reply.text
    assert all(f"{link}: timed out; try again" in reply.text for link in links), reply.text


def test_a_member_has_one_add_in_flight(budgeted, slow):
    first: list = []
    running = threading.Thread(target=lambda: first.append(say(budgeted, f"add {slow.url('silent', 30)}")))
    seen = slow.accepted
    running.start()
    assert slow.wait_for_connections(seen + 1) > seen  # the first line is fetching now
    started = time.monotonic()
    second = say(budgeted, "add 2106.01345")
    assert time.monotonic() - started < 1
    assert not second.ok and "still adding your last links" in second.text, second.text
    assert say(budgeted, "add 2106.01345", user="bob").ok  # another member is not held up
    running.join()
    assert "timed out; try again" in first[0].text
    assert say(budgeted, "add 1706.03762").ok  # the first line answered: the member may add again


def test_failed_fetches_count_toward_the_hourly_limit(budgeted, fake):
    adding = budgeted.feature("adding")
    adding.per_hour = 2
    assert not say(budgeted, "add 2106.99999").ok  # arXiv has no such paper: a fetch all the same
    assert not say(budgeted, f"add http://127.0.0.1:{closed_port()}/paper").ok  # unreachable
    asked = len(fake.requests)
    reply = say(budgeted, "add 1810.04805")
    assert not reply.ok and "a member may add 2 papers an hour" in reply.text, reply.text
    assert len(fake.requests) == asked  # nothing fetched past the limit


def test_bad_link_syntax_is_refused_for_that_link_only(budgeted):
    bad = ["http://" + "a" * 64 + ".example.org/paper", "http://example.org:99999/paper",
           "http://example.org:abc/paper", "http://xn--a.example.org/paper"]
    before = counts(budgeted.db)
    reply = say(budgeted, "add " + " ".join(bad[:2] + ["2106.01345"] + bad[2:]))
    assert reply.ok and [c.title for c in reply.cards] == [DECISION], reply.text
    for link in bad:
        assert f"{link}: not a link I can read" in reply.text, reply.text
    assert counts(budgeted.db)["papers"] == before["papers"] + 1


def test_a_latin1_page_declaring_its_charset_in_html_is_read_right(budgeted, fake):
    reply = say(budgeted, f"add {fake.url('/pages/latin1/')}")
    assert reply.ok, reply.text
    paper = budgeted.library.find(str(reply.cards[0].paper_id))
    assert paper.title == "Café au lait: Mélange Models for Naïve Readers"
    assert paper.authors == ["Zoë Müller"]


@pytest.mark.parametrize(("link", "readable"), [
    ("https://aclanthology.org/P18-1031/", True),
    ("https://bücher.example/paper", True),  # IDNA: xn--bcher-kva
    ("http://a_b.example.org/paper", True),  # DNS allows underscores
    ("http://example.org.:8080/paper", True),
    ("http://[2001:db8::1]:8080/paper", True),
    ("http://" + "a" * 64 + ".example.org/", False),
    ("http://" + "ü" * 60 + ".example.org/", False),  # 63 characters, but not once encoded
    ("http://" + ("a" * 60 + ".") * 5 + "org/", False),  # over 253 in all
    ("http://xn--a.example.org/", False),
    ("http://a..b.example.org/", False),
    ("http://example.org:0/", False),
    ("http://example.org:99999/", False),
    ("http://example.org:abc/", False),
])
def test_which_links_can_be_read(link, readable):
    assert (link_problem(link) is None) == readable, link_problem(link)


def test_a_fetch_still_connecting_when_the_process_stops_is_cut_once_connected(slow):
    """SIGTERM's cut_all came while this fetch had no socket yet (between its watch and
    its connect): it is cut as soon as it connects, not left to hold the exit until its
    deadline."""
    cutoffs = Cutoffs()
    parts = urlsplit(slow.url("silent", 7))
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    cutoffs.watch(connection, time.monotonic() + 30)
    cutoffs.cut_all()  # the process stops: nothing to shut down yet
    connection.request("GET", parts.path)
    cutoffs.connected(connection)
    started = time.monotonic()
    with pytest.raises((http.client.HTTPException, OSError)):
        connection.getresponse()  # the silent page would hold it for 30 s
    assert time.monotonic() - started < 2
    cutoffs.forget(connection)
    connection.close()

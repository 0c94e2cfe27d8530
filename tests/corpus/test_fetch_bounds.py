"""The polite fetcher held to its bounds against servers that misbehave on 127.0.0.1: a
page cap for a server answering one entry a page forever, a page of more entries than a
refresh takes refused before it is read, a Retry-After past the deadline raised instead
of slept, a dripping answer cut at the deadline, and `stop` cutting a request in flight
and every one after it."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

import pytest

from adapters.fakes.arxiv import ArxivPaper, feed
from adapters.fakes.http import FakeServer
from bot.corpus.fetch import Fetcher, FetchError, FetchPolicy, HostLimiter, OutOfTime

QUERY = "/api/query?search_query=cat:cs.LG"
AT = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def _paper(number: int) -> ArxivPaper:
    return ArxivPaper(f"2611.{number:05d}", f"Paper {number}", "An abstract.", AT, ["cs.LG"])


def _fetcher(**policy) -> Fetcher:
    fetcher = Fetcher(FetchPolicy(**{"max_attempts": 2, "timeout": 10.0, **policy}), limiter=HostLimiter(0.0))
    fetcher.slept = []
    fetcher.sleep = fetcher.slept.append
    return fetcher


def _serve(answer):
    return FakeServer(lambda path, params: (200, "application/atom+xml", answer(params).encode()))


def test_a_server_answering_one_entry_a_page_forever_stops_at_the_page_cap():
    def one_a_page(params):
        start = int(params["start"][0])
        return feed("cat:cs.LG", [_paper(start)], 1_000_000, start, 1)

    with _serve(one_a_page) as server:
        pages = _fetcher(max_pages=7).fetch(server.base + QUERY)
    assert len(pages) == 7 and len(server.requests) == 7


def test_a_page_of_more_entries_than_a_refresh_takes_is_refused_before_it_is_read():
    page = feed("cat:cs.LG", [_paper(n) for n in range(600)], 600, 0, 600)
    with _serve(lambda params: page) as server, pytest.raises(FetchError, match="a page of 600 entries, more than"):
        _fetcher(max_entries=500).fetch(server.base + QUERY)


def test_a_retry_after_past_the_deadline_is_raised_with_the_wait_not_slept():
    with FakeServer(lambda path, params: (200, "text/plain", b"ok")) as server:
        server.fail("retry-after=599")
        fetcher = _fetcher()
        with pytest.raises(OutOfTime) as raised:
            fetcher.get(server.base + "/x", deadline=time.monotonic() + 30)
    assert raised.value.wait == 599 and not raised.value.stopping and fetcher.slept == []
    assert "a retry in 599 s would be past the deadline" in str(raised.value)


def test_a_dripping_answer_is_cut_at_the_deadline():
    with FakeServer(lambda path, params: (200, "text/plain", b"ok")) as server:
        server.fail("drip")
        with pytest.raises(OutOfTime, match="cut short"):
            _fetcher().get(server.base + "/x", deadline=time.monotonic() + 0.5)
        assert len(server.requests) == 1  # cut, not retried


def test_a_request_with_no_deadline_of_its_callers_still_ends_at_its_own():
    with FakeServer(lambda path, params: (200, "text/plain", b"ok")) as server:
        server.fail("drip")
        with pytest.raises(OutOfTime):
            _fetcher(request_seconds=0.5).get(server.base + "/x")


def test_stop_cuts_a_request_in_flight_and_refuses_the_next():
    with FakeServer(lambda path, params: (200, "text/plain", b"ok")) as server:
        server.fail("timeout")  # held until released: the stop must end it
        fetcher = _fetcher()
        raised: list[BaseException] = []

        def get() -> None:
            try:
                fetcher.get(server.base + "/x")
            except BaseException as problem:  # noqa: BLE001 - looked at below
                raised.append(problem)

        thread = threading.Thread(target=get)
        thread.start()
        while not server.requests:
            time.sleep(0.01)
        fetcher.stop()
        thread.join(30)
        assert not thread.is_alive() and not server.release.is_set()
        assert isinstance(raised[0], OutOfTime) and raised[0].stopping
        with pytest.raises(OutOfTime, match="paperclub is stopping"):
            fetcher.get(server.base + "/x")
        assert len(server.requests) == 1

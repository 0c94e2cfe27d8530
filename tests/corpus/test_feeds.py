"""Scheduled corpus feeds (bot.corpus.feeds, adapters.cli.feeds) against recorded arXiv API answers.

A local ThreadingHTTPServer serves tests/data/feeds/ by the query's `start`, with scripted
429/503 answers first when a test asks for them. The fetcher's clock and sleeps are fakes:
nothing here waits 3 s, and every wait the fetcher asked for is recorded.
"""

from __future__ import annotations

import argparse
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from urllib.parse import parse_qsl, urlsplit

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

from adapters.cli import feed_commands
from adapters.cli import feeds as feed_cli
from bot.app import build_services
from bot.corpus.feeds import (
    FEED_MISFIRE_GRACE_SECONDS,
    FeedError,
    Feeds,
    cron_trigger,
    feed_jobs,
    refresh,
    sync_jobs,
)
from bot.corpus.fetch import DEFAULT_LIMITER, Fetcher, FetchError, FetchPolicy, HostLimiter
from bot.search.query import Query
from store.models import Feed
from tests.conftest import DATA

FEEDS = DATA / "feeds"
QUERY = "/api/query?search_query=cat:cs.LG&sortBy=submittedDate&sortOrder=descending"
TWO_PAGES = {0: "cs-lg-page1.atom", 3: "cs-lg-page2.atom"}


# --- the recorded server and the fake time ----------------------------------------------


class FakeTime:
    """A monotonic clock that only moves when someone sleeps; the limiter's sleeps and
    the fetcher's backoff sleeps are recorded apart."""

    def __init__(self):
        self.now = 1000.0
        self.limiter_sleeps: list[float] = []
        self.backoff_sleeps: list[float] = []
        self._lock = threading.Lock()

    def clock(self) -> float:
        return self.now

    def limiter_sleep(self, seconds: float) -> None:
        with self._lock:
            self.limiter_sleeps.append(seconds)
            self.now += seconds

    def backoff_sleep(self, seconds: float) -> None:
        with self._lock:
            self.backoff_sleeps.append(seconds)
            self.now += seconds


@dataclass
class Seen:
    path: str
    params: dict[str, str]
    at: float  # the fake clock when the request arrived
    agent: str


@dataclass
class Recording:
    time: FakeTime
    pages: dict[int, str] = field(default_factory=lambda: dict(TWO_PAGES))
    script: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    base: str = ""

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(path)
        params = dict(parse_qsl(parts.query))
        self.seen.append(Seen(parts.path, params, self.time.now, ""))
        if self.script:
            return self.script.pop(0)
        if parts.path == "/api/query":
            name = self.pages.get(int(params.get("start", 0)), "empty.atom")
            return 200, {"Content-Type": "application/atom+xml; charset=utf-8"}, (FEEDS / name).read_bytes()
        if parts.path.startswith("/files/"):
            target = FEEDS / parts.path.removeprefix("/files/")
            if target.is_file():
                return 200, {"Content-Type": "application/atom+xml"}, target.read_bytes()
        return 404, {"Content-Type": "text/plain"}, b"not found"


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def served(fake_time):
    recording = Recording(fake_time)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            status, headers, body = recording.answer(self.path)
            recording.seen[-1].agent = self.headers.get("User-Agent", "")
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    recording.base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield recording
    finally:
        server.shutdown()
        server.server_close()


def make_fetcher(fake_time: FakeTime, **policy) -> Fetcher:
    limiter = HostLimiter(3.0, clock=fake_time.clock, sleep=fake_time.limiter_sleep)
    options = {"page_size": 3, "timeout": 5.0, **policy}
    return Fetcher(FetchPolicy(**options), limiter=limiter, sleep=fake_time.backoff_sleep)


@pytest.fixture
def services(db):
    built = build_services(db.url)
    yield built
    built.db.dispose()


def arxiv_ids(services) -> set[str]:
    return {p.ids().get("arxiv") for p in services.library.iter_papers()}


# --- paging, importing, re-running ------------------------------------------------------


def test_paging_gathers_both_pages_and_imports_six_papers(services, served, fake_time):
    feeds = Feeds(services.db)
    feeds.add("cs-lg", served.base + QUERY, "0 6 * * *")

    result = refresh(services, "cs-lg", fetcher=make_fetcher(fake_time))

    assert result.ok, result.message
    assert (result.pages, result.added, result.updated, result.unchanged) == (2, 6, 0, 0)
    assert [(s.params["start"], s.params["max_results"]) for s in served.seen] == [("0", "3"), ("3", "3")]
    # The operator's query goes along unchanged on every page.
    assert all(s.params["search_query"] == "cat:cs.LG" and s.params["sortBy"] == "submittedDate" for s in served.seen)
    assert all(s.agent.startswith("paperclub/") for s in served.seen)
    assert services.library.collections() == [("cs-lg", 6)]
    assert arxiv_ids(services) == {"2006.11239", "1707.06347", "1606.08415", "1502.03167", "1412.6980", "1312.6114"}
    feed = feeds.get("cs-lg")
    assert feed.last_status == "ok" and feed.last_run_at is not None
    assert "6 added" in feed.last_message
    # The search index knows the new papers at once.
    hits = services.search.current().search(Query.parse("denoising diffusion"))
    top = hits[0].paper_id
    assert services.library.get_many([top])[top].title == "Denoising Diffusion Probabilistic Models"


def test_a_rerun_changes_nothing(services, served, fake_time):
    Feeds(services.db).add("cs-lg", served.base + QUERY, "0 6 * * *")
    fetcher = make_fetcher(fake_time)
    assert refresh(services, "cs-lg", fetcher=fetcher).added == 6
    revision = services.library.revision()

    again = refresh(services, "cs-lg", fetcher=fetcher)

    assert again.ok
    assert (again.added, again.updated, again.unchanged) == (0, 0, 6)
    assert services.library.revision() == revision
    assert services.library.count() == 6
    assert "6 unchanged" in Feeds(services.db).get("cs-lg").last_message


def test_paging_stops_at_an_empty_page(served, fake_time):
    served.pages = {0: "cs-lg-page1.atom"}  # start=3 answers the empty page
    pages = make_fetcher(fake_time).fetch(served.base + QUERY)
    assert [p.entries for p in pages] == [3, 0]
    assert len(served.seen) == 2


def test_paging_stops_at_the_cap_and_at_the_urls_own_max_results(served, fake_time):
    pages = make_fetcher(fake_time, max_entries=3).fetch(served.base + QUERY)
    assert [p.entries for p in pages] == [3]
    pages = make_fetcher(fake_time, page_size=100).fetch(served.base + QUERY + "&max_results=2")
    assert len(pages) == 1 and served.seen[-1].params["max_results"] == "2"
    assert len(served.seen) == 2


def test_a_plain_feed_url_is_fetched_once_without_paging(services, served, fake_time):
    Feeds(services.db).add("attention", served.base + "/files/cs-lg-page1.atom", "0 6 * * *")
    result = refresh(services, "attention", fetcher=make_fetcher(fake_time))
    assert result.ok and result.added == 3
    assert len(served.seen) == 1 and served.seen[0].params == {}


# --- retries, backoff and the limiter ------------------------------------------------------


def test_503_then_200_retries_with_growing_waits_and_honours_retry_after(services, served, fake_time):
    Feeds(services.db).add("cs-lg", served.base + QUERY, "0 6 * * *")
    served.script = [
        (503, {"Content-Type": "text/plain"}, b"busy"),
        (503, {"Content-Type": "text/plain"}, b"busy"),
        (503, {"Content-Type": "text/plain", "Retry-After": "20"}, b"busy"),
    ]

    result = refresh(services, "cs-lg", fetcher=make_fetcher(fake_time))

    assert result.ok and result.added == 6
    assert fake_time.backoff_sleeps == [3.0, 6.0, 20.0]  # 3, 6, then Retry-After's 20 over 12
    assert len(served.seen) == 5  # 3 refused + 2 pages
    assert served.seen[3].at - served.seen[2].at >= 20


def test_429_five_times_gives_up_and_imports_nothing(services, served, fake_time):
    feeds = Feeds(services.db)
    feeds.add("cs-lg", served.base + QUERY, "0 6 * * *")
    served.script = [(429, {"Content-Type": "text/plain"}, b"slow down")] * 5

    result = refresh(services, "cs-lg", fetcher=make_fetcher(fake_time))

    assert not result.ok
    assert len(served.seen) == 5
    assert fake_time.backoff_sleeps == [3.0, 6.0, 12.0, 24.0]
    assert services.library.count() == 0
    feed = feeds.get("cs-lg")
    assert feed.last_status == "failed"
    assert "gave up after 5 attempts" in feed.last_message and "HTTP 429" in feed.last_message
    assert "rate limiting" in feed.last_message


def test_a_retry_after_beyond_the_limit_fails_at_once(served, fake_time):
    served.script = [(503, {"Retry-After": "3600"}, b"maintenance")]
    with pytest.raises(FetchError, match="retry after 3600 s"):
        make_fetcher(fake_time).get(served.base + "/files/cs-lg-page1.atom")
    assert len(served.seen) == 1 and fake_time.backoff_sleeps == []


def test_a_client_error_is_not_retried_and_quotes_the_arxiv_error(served, fake_time):
    served.script = [(400, {"Content-Type": "application/atom+xml"}, (FEEDS / "api-error.atom").read_bytes())]
    with pytest.raises(FetchError) as caught:
        make_fetcher(fake_time).fetch(served.base + "/api/query?id_list=1234.12345")
    assert "HTTP 400" in str(caught.value)
    assert "the arXiv API reported: incorrect id format for 1234.12345" in str(caught.value)
    assert len(served.seen) == 1 and fake_time.backoff_sleeps == []


def test_network_errors_are_retried_then_reported(fake_time):
    # Nothing listens on port 9 (discard) of localhost here: connection refused each time.
    fetcher = make_fetcher(fake_time, max_attempts=3)
    with pytest.raises(FetchError, match=r"gave up after 3 attempts.*network error"):
        fetcher.get("http://127.0.0.1:9/api/query")
    assert fake_time.backoff_sleeps == [3.0, 6.0]


def test_requests_to_one_host_start_at_least_3_s_apart(services, served, fake_time):
    Feeds(services.db).add("cs-lg", served.base + QUERY, "0 6 * * *")
    served.script = [(503, {}, b"busy")]  # a 3 s backoff: the limiter must still hold
    fetcher = make_fetcher(fake_time)

    refresh(services, "cs-lg", fetcher=fetcher)
    refresh(services, "cs-lg", fetcher=fetcher)  # a second run right after the first

    starts = [s.at for s in served.seen]
    assert len(starts) == 5
    assert all(later - earlier >= 3.0 for earlier, later in pairwise(starts))
    assert fake_time.limiter_sleeps  # the limiter did have to hold requests back


def test_the_limiter_spaces_threads_per_host():
    moments = []
    limiter = HostLimiter(3.0, clock=lambda: 50.0, sleep=lambda s: None)  # time stands still
    threads = [threading.Thread(target=lambda: moments.append(limiter.wait("export.arxiv.org"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(moments) == [50.0 + 3 * n for n in range(8)]
    assert limiter.wait("EXPORT.arxiv.org") == 74.0  # host names are case-insensitive
    assert limiter.wait("example.org") == 50.0  # another host does not queue behind


def test_fetchers_share_one_process_wide_limiter():
    assert Fetcher().limiter is DEFAULT_LIMITER is Fetcher().limiter
    assert DEFAULT_LIMITER.interval >= 3.0


# --- malformed pages ----------------------------------------------------------------------


def test_a_truncated_page_imports_nothing_from_it_and_records_file_and_line(services, served, fake_time):
    feeds = Feeds(services.db)
    feeds.add("cs-lg", served.base + QUERY, "0 6 * * *")
    served.pages = {0: "cs-lg-page1.atom", 3: "truncated-page2.atom"}

    result = refresh(services, "cs-lg", fetcher=make_fetcher(fake_time))

    assert result.status == "failed" and result.failed_pages == [2]
    assert arxiv_ids(services) == {"2006.11239", "1707.06347", "1606.08415"}  # page 1 only
    feed = feeds.get("cs-lg")
    assert feed.last_status == "failed"
    assert "page 2" in feed.last_message
    assert "cs-lg.feed:45: broken XML" in feed.last_message
    assert "start=3" in feed.last_message  # the URL to look at


def test_a_bad_entry_rejects_its_whole_page(services, served, fake_time):
    Feeds(services.db).add("cs-lg", served.base + QUERY, "0 6 * * *")
    served.pages = {0: "cs-lg-page1.atom", 3: "untitled-page2.atom"}

    result = refresh(services, "cs-lg", fetcher=make_fetcher(fake_time))

    assert not result.ok
    assert "cs-lg.feed:32: feed entry without a title" in result.message
    # Batch Normalization, a good entry on the bad page, is not imported either.
    assert "1502.03167" not in arxiv_ids(services)
    assert services.library.count() == 3


def test_a_malformed_single_page_imports_nothing(services, served, fake_time):
    Feeds(services.db).add("broken", served.base + "/files/truncated-page2.atom", "0 6 * * *")
    result = refresh(services, "broken", fetcher=make_fetcher(fake_time))
    assert result.status == "failed" and ":45: broken XML" in result.message
    assert services.library.count() == 0
    assert services.library.revision() == 0


def test_refresh_never_raises(services, served, fake_time, monkeypatch):
    Feeds(services.db).add("cs-lg", served.base + QUERY, "0 6 * * *")

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(services.library, "import_file", explode)
    result = refresh(services, "cs-lg", fetcher=make_fetcher(fake_time))
    assert result.status == "failed" and "RuntimeError: disk on fire" in result.message
    assert Feeds(services.db).get("cs-lg").last_status == "failed"
    assert refresh(services, "gone", fetcher=make_fetcher(fake_time)).message == "no feed for collection 'gone'"


# --- the feeds table ----------------------------------------------------------------------


def test_add_get_list_update_remove(db):
    feeds = Feeds(db)
    first = feeds.add(" cs-lg ", "https://export.arxiv.org" + QUERY, "0 6 * * *")
    feeds.add("stat-ml", "https://export.arxiv.org/api/query?search_query=cat:stat.ML", "30 5 * * 1-5", "arxiv")
    assert first.collection == "cs-lg" and first.enabled and first.format is None
    assert [f.collection for f in feeds.list()] == ["cs-lg", "stat-ml"]

    again = feeds.add("cs-lg", "https://export.arxiv.org/api/query?search_query=cat:cs.AI", "15  7 * * *")
    assert [f.collection for f in feeds.list()] == ["cs-lg", "stat-ml"]  # updated, not doubled
    assert again.id == first.id and again.cron == "15 7 * * *" and again.url.endswith("cat:cs.AI")

    moment = datetime(2026, 11, 23, 6, 0, tzinfo=timezone.utc)
    assert feeds.record("cs-lg", "failed", "HTTP 503", moment)
    row = feeds.get("cs-lg")
    assert (row.last_status, row.last_message) == ("failed", "HTTP 503")
    assert row.last_run_at.replace(tzinfo=timezone.utc) == moment
    with pytest.raises(ValueError, match="status 'maybe': ok or failed"):
        feeds.record("cs-lg", "maybe", "", moment)

    assert feeds.remove("cs-lg") is True
    assert feeds.remove("cs-lg") is False
    assert feeds.get("cs-lg") is None
    assert [f.collection for f in feeds.list()] == ["stat-ml"]


@pytest.mark.parametrize(
    ("collection", "url", "cron", "fmt", "names"),
    [
        ("", "https://export.arxiv.org" + QUERY, "0 6 * * *", None, "collection"),
        ("x", "ftp://export.arxiv.org/api/query", "0 6 * * *", None, "url"),
        ("x", "export.arxiv.org/api/query", "0 6 * * *", None, "url"),
        ("x", "https://export.arxiv.org/api/query?start=abc", "0 6 * * *", None, "url"),
        ("x", "https://export.arxiv.org" + QUERY, "0 6 * *", None, "cron"),
        ("x", "https://export.arxiv.org" + QUERY, "61 6 * * *", None, "cron"),
        ("x", "https://export.arxiv.org" + QUERY, "0 6 * * 8", None, "cron"),
        ("x", "https://export.arxiv.org" + QUERY, "0 6 1 * mon", None, "cron"),
        ("x", "https://export.arxiv.org" + QUERY, "0 6 * * *", "rss", "format"),
    ],
)
def test_add_refuses_bad_settings_naming_the_field(db, collection, url, cron, fmt, names):
    with pytest.raises(FeedError) as caught:
        Feeds(db).add(collection, url, cron, fmt)
    assert str(caught.value).startswith(names)
    assert Feeds(db).list() == []


def test_cron_weekdays_mean_what_crontab_means():
    saturday = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
    assert saturday.weekday() == 5
    weekdays = cron_trigger("0 6 * * 1-5").get_next_fire_time(None, saturday)
    assert weekdays == datetime(2026, 11, 23, 6, 0, tzinfo=timezone.utc)  # Monday, as in cron
    for sunday in ("0 6 * * 0", "0 6 * * 7", "0 6 * * sun", "0 6 * * SUN"):
        next_run = cron_trigger(sunday).get_next_fire_time(None, saturday)
        assert next_run == datetime(2026, 11, 22, 6, 0, tzinfo=timezone.utc)
    assert str(cron_trigger("0 6 * * 0-6").fields[4]) == "*"
    assert str(cron_trigger("0 6 * * */2").fields[4]) == "sun,tue,thu,sat"
    assert str(cron_trigger("*/30 6 * * *").timezone) == "UTC"


# --- scheduling ---------------------------------------------------------------------------


def test_feed_jobs_one_per_enabled_feed_with_its_cron(services, served, fake_time):
    feeds = Feeds(services.db)
    feeds.add("cs-lg", served.base + QUERY, "0 6 * * 1-5")
    feeds.add("attention", served.base + "/files/cs-lg-page1.atom", "30 7 * * *")
    feeds.add("paused", served.base + QUERY, "0 8 * * *")
    feeds.set_enabled("paused", False)
    with services.db.session() as session:  # a row written by hand with a broken cron
        session.add(Feed(collection="hand-made", url=served.base + QUERY, cron="every day", enabled=True))

    jobs = feed_jobs(services, fetcher=make_fetcher(fake_time))

    assert [job.id for job in jobs] == ["feed:attention", "feed:cs-lg"]
    saturday = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
    assert [job.trigger.get_next_fire_time(None, saturday) for job in jobs] == [
        datetime(2026, 11, 22, 7, 30, tzinfo=timezone.utc),
        datetime(2026, 11, 23, 6, 0, tzinfo=timezone.utc),
    ]
    jobs[1].run()  # runs the refresh and records it
    assert services.library.collections() == [("cs-lg", 6)]
    assert feeds.get("cs-lg").last_status == "ok"
    feeds.remove("attention")
    jobs[0].run()  # a feed removed since: logged, never raised


def test_sync_jobs_follows_the_feeds_table(services, served):
    feeds = Feeds(services.db)
    feeds.add("cs-lg", served.base + QUERY, "0 6 * * *")
    feeds.add("attention", served.base + "/files/cs-lg-page1.atom", "30 7 * * *")
    scheduler = BackgroundScheduler(timezone="UTC")
    scheduler.add_job(lambda: None, "interval", minutes=1, id="paperclub-tick")
    scheduler.start(paused=True)
    try:
        assert sync_jobs(scheduler, services) == ["feed:attention", "feed:cs-lg"]
        job = scheduler.get_job("feed:cs-lg")
        assert job.misfire_grace_time == FEED_MISFIRE_GRACE_SECONDS
        assert job.coalesce is True and job.max_instances == 1

        feeds.remove("attention")
        feeds.add("cs-lg", served.base + QUERY, "0 9 * * *")
        sync_jobs(scheduler, services)
        ids = sorted(j.id for j in scheduler.get_jobs())
        assert ids == ["feed:cs-lg", "paperclub-tick"]  # the tick is left alone
        assert str(scheduler.get_job("feed:cs-lg").trigger.fields[5]) == "9"
    finally:
        scheduler.shutdown(wait=False)


# --- the command line ---------------------------------------------------------------------


def cli(url: str, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="paperclub")
    parser.add_argument("--database-url")
    sub = parser.add_subparsers(dest="command", required=True)
    feed_cli.add_commands(sub)
    args = parser.parse_args(["--database-url", url, *argv])
    return args.func(args)


def test_cli_add_list_refresh_remove(db, served, fake_time, capsys, monkeypatch):
    monkeypatch.setattr(feed_commands, "make_fetcher", lambda max_entries=None: make_fetcher(fake_time))

    assert cli(db.url, "feed", "add", "cs-lg", served.base + QUERY, "--cron", "0 6 * * *") == 0
    out = capsys.readouterr().out
    assert "feed cs-lg added" in out and "next run" in out

    assert cli(db.url, "feed", "refresh", "cs-lg") == 0
    captured = capsys.readouterr()
    assert "cs-lg: ok: 6 entries from 2 page(s): 6 added" in captured.out
    assert "search index: 6 papers" in captured.err

    assert cli(db.url, "feed", "list") == 0
    out = capsys.readouterr().out
    assert "cs-lg  [0 6 * * *] UTC" in out and " ok" in out and "6 added" in out

    assert cli(db.url, "feed", "list", "--json") == 0
    row = json.loads(capsys.readouterr().out)
    assert row["collection"] == "cs-lg" and row["last_status"] == "ok" and row["cron"] == "0 6 * * *"

    assert cli(db.url, "feed", "remove", "cs-lg") == 0
    assert "removed" in capsys.readouterr().out
    assert Feeds(db).list() == []


def test_cli_errors_are_clear(db, served, fake_time, capsys, monkeypatch):
    monkeypatch.setattr(feed_commands, "make_fetcher", lambda max_entries=None: make_fetcher(fake_time))

    assert cli(db.url, "feed", "add", "cs-lg", served.base + QUERY, "--cron", "0 25 * * *") == 2
    assert "error: cron '0 25 * * *'" in capsys.readouterr().err
    assert cli(db.url, "feed", "add", "cs-lg", "file:///etc/passwd", "--cron", "0 6 * * *") == 2
    assert "error: url 'file:///etc/passwd'" in capsys.readouterr().err
    assert Feeds(db).list() == []

    assert cli(db.url, "feed", "remove", "nope") == 1
    assert "no feed for collection 'nope'" in capsys.readouterr().err
    assert cli(db.url, "feed", "refresh", "nope") == 1
    assert "no feed for collection 'nope'" in capsys.readouterr().err

    # A refresh of every feed exits 1 when one of them failed, and still runs the others.
    Feeds(db).add("cs-lg", served.base + QUERY, "0 6 * * *")
    Feeds(db).add("broken", served.base + "/files/truncated-page2.atom", "0 6 * * *")
    assert cli(db.url, "feed", "refresh") == 1
    out = capsys.readouterr().out
    assert "broken: failed: page 1" in out and ":45: broken XML" in out
    assert "cs-lg: ok: 6 entries" in out

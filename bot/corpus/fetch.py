"""Fetching feeds politely: the arXiv API's rules for every host paperclub reads from.

`Fetcher` is an HTTP client that keeps the arXiv API's terms of use: one request every
3 seconds per host at most (a process-wide, thread-safe `HostLimiter`), a User-Agent
naming paperclub, timeouts, retries with exponential backoff on 429/503 (Retry-After
honoured), and paging through arXiv API queries (`start`/`max_results`) up to a cap of
entries and of pages. Its sleep is injectable, so tests never wait.

Every request ends by a deadline, not only per socket operation: a server that drips a
byte at a time is cut by a watchdog (bot.corpus.cutoffs) at the request's end, and a
caller's own deadline (the scheduled provider work gives each follow one) bounds the
waits too: a Retry-After longer than the time left is not slept but raised as
`OutOfTime`, saying how long the provider asked for, so the caller can put the work off
to a stored time. `stop()` (the process is shutting down) cuts every request in flight
and ends every wait at once.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.request
import weakref
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bot import __version__
from bot.corpus.cutoffs import Cutoffs, Late, read_until

log = logging.getLogger(__name__)

ATOM = "{http://www.w3.org/2005/Atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ARXIV_API_PATH = "/api/query"


class FeedError(ValueError):
    """A feed setting that cannot be used; the message names the field."""


class FetchError(RuntimeError):
    """A feed that could not be fetched; the message names the URL and what happened."""


class OutOfTime(FetchError):
    """A request that could not be made or finished in the time it had: its deadline came,
    the process is stopping, or the provider asked to wait longer than is left. `wait`:
    the seconds the provider asked for (Retry-After), when that is why; `stopping`:
    whether the process stopping is why."""

    def __init__(self, message: str, wait: float | None = None, stopping: bool = False):
        super().__init__(message)
        self.wait = wait
        self.stopping = stopping


# --- fetching -----------------------------------------------------------------------------


def user_agent(env: Mapping[str, str] = os.environ) -> str:
    """paperclub/VERSION (...); PAPERCLUB_FEED_CONTACT (an e-mail or URL) is added when
    set, as the arXiv API asks heavy users to be reachable."""
    contact = env.get("PAPERCLUB_FEED_CONTACT", "").strip()
    extra = f"; {contact}" if contact else ""
    return f"paperclub/{__version__} (reading-group bot, scheduled corpus feeds{extra})"


class HostLimiter:
    """At most one request start per `interval` seconds for each host, across threads.

    Each caller reserves the next free slot for its host under a lock, then sleeps until
    then outside the lock: concurrent callers queue up 3 s apart instead of all waking
    at once. `wait` returns the reserved start (on `clock`), or None without reserving
    when that start would be after `until` (a member's deadline)."""

    def __init__(
        self,
        interval: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.interval = interval
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def wait(self, host: str, until: float | None = None) -> float | None:
        host = host.lower()
        with self._lock:
            now = self.clock()
            start = max(now, self._next.get(host, now))
            if until is not None and start > until:
                return None
            self._next[host] = start + self.interval
        if start > now:
            self.sleep(start - now)
        return start


# One limiter per process: every feed job and every `feed refresh` shares it.
DEFAULT_LIMITER = HostLimiter()


@dataclass(frozen=True)
class FetchPolicy:
    max_attempts: int = 5  # per request, the first included
    backoff_base: float = 3.0  # waits 3, 6, 12, 24 s ... (or Retry-After when longer)
    max_backoff: float = 120.0
    max_retry_after: float = 600.0  # a longer Retry-After: give up until the next run
    timeout: float = 30.0  # seconds, per connect and per read
    request_seconds: float = 120.0  # one request in all: connect, headers, body (a drip is cut)
    page_size: int = 100  # entries per arXiv API request
    max_entries: int = 500  # entries per refresh at most (arXiv queries)
    max_pages: int = 20  # pages per refresh at most: a server answering one entry a page stops here
    max_bytes: int = 50_000_000  # per response

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> FetchPolicy:
        """PAPERCLUB_FEED_MAX_ENTRIES and PAPERCLUB_FEED_PAGE_SIZE, when set."""
        values: dict[str, int] = {}
        settings = (("max_entries", "PAPERCLUB_FEED_MAX_ENTRIES"), ("page_size", "PAPERCLUB_FEED_PAGE_SIZE"))
        for name, var in settings:
            raw = env.get(var, "").strip()
            if raw:
                values[name] = feed_count(var, raw)
        return cls(**values)


def feed_count(variable: str, raw: str) -> int:
    """A feed setting's number (PAPERCLUB_FEED_PAGE_SIZE, _MAX_ENTRIES): a whole number of at
    least 1; FeedError naming the variable otherwise. Start-up's check (bot.ops.settings)
    and the feeds read it with this one rule."""
    if not raw.strip().isdigit() or int(raw) < 1:
        raise FeedError(f"{variable}={raw!r}: give a whole number of at least 1")
    return int(raw)


RETRY_STATUSES = frozenset({429, 502, 503, 504})


@dataclass
class Page:
    url: str
    body: bytes
    entries: int | None = None  # None: not an Atom feed this could read (the reader will say why)
    total: int | None = None  # opensearch:totalResults, when given


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise urllib.error.HTTPError(newurl, code, f"redirect to {newurl!r} refused", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Fetcher:
    """GET with manners; `fetch(url)` returns the pages of a feed."""

    # Every fetcher of the process, for `stop_all` at shutdown (a feed refresh makes its own).
    _made: ClassVar[weakref.WeakSet[Fetcher]] = weakref.WeakSet()

    def __init__(
        self,
        policy: FetchPolicy | None = None,
        limiter: HostLimiter | None = None,
        sleep: Callable[[float], object] | None = None,
        agent: str | None = None,
    ):
        self.policy = policy or FetchPolicy()
        self.limiter = limiter or DEFAULT_LIMITER
        self._stopped = threading.Event()
        # Waits end the moment the process stops (a test's sleep returns at once).
        self.sleep = sleep or self._stopped.wait
        self.agent = agent or user_agent()
        self.cutoffs = Cutoffs()
        Fetcher._made.add(self)

    @classmethod
    def stop_all(cls) -> None:
        """The process is shutting down: `stop` every fetcher it made."""
        for fetcher in list(cls._made):
            fetcher.stop()

    def stop(self) -> None:
        """The process is shutting down: every request in flight is cut, every wait ends,
        and no request starts; each raises OutOfTime."""
        self._stopped.set()
        self.cutoffs.cut_all()

    # -- one request ---------------------------------------------------------------------

    def get(self, url: str, deadline: float | None = None) -> bytes:
        """The body of a 2xx answer, after up to `max_attempts` tries; else FetchError.
        `deadline` (time.monotonic()): nothing, waits included, goes past it; what would
        is OutOfTime."""
        host = urlsplit(url).hostname or ""
        last = ""
        for attempt in range(1, self.policy.max_attempts + 1):
            self._check(url)
            if self.limiter.wait(host, until=deadline) is None:
                raise OutOfTime(f"{url}: no turn at {host} before the deadline")
            self._check(url)
            retry_after: float | None = None
            try:
                return self._request(url, deadline)
            except urllib.error.HTTPError as answer:
                status = answer.code
                last = f"HTTP {status} {answer.reason}".rstrip()
                if status not in RETRY_STATUSES:
                    raise FetchError(f"{url}: {last}{_detail(answer)}") from None
                retry_after = retry_after_seconds(answer.headers)
                answer.close()
            except FetchError:
                raise
            except (urllib.error.URLError, http.client.HTTPException, OSError) as problem:
                reason = getattr(problem, "reason", None) or problem
                last = f"network error ({reason})"
            if retry_after is not None and retry_after > self.policy.max_retry_after:
                raise OutOfTime(
                    f"{url}: {last} asking to retry after {retry_after:.0f} s, longer than the "
                    f"{self.policy.max_retry_after:.0f} s a refresh waits; "
                    "the next scheduled run will try again", retry_after
                )
            if attempt == self.policy.max_attempts:
                break
            wait = min(self.policy.backoff_base * 2 ** (attempt - 1), self.policy.max_backoff)
            if retry_after is not None:
                wait = max(wait, retry_after)
            if deadline is not None and time.monotonic() + wait > deadline:
                raise OutOfTime(f"{url}: {last}; a retry in {wait:.0f} s would be past the deadline",
                                retry_after)
            log.warning(
                "%s: %s, attempt %d of %d; retrying in %.0f s",
                url, last, attempt, self.policy.max_attempts, wait,
            )
            self.sleep(wait)
        raise FetchError(
            f"{url}: gave up after {self.policy.max_attempts} attempts, the last one answered {last}"
            + (" (the server is rate limiting us)" if last.startswith("HTTP 429") else "")
            + "; the next scheduled run will try again"
        )

    def _check(self, url: str) -> None:
        if self._stopped.is_set():
            raise OutOfTime(f"{url}: not fetched: paperclub is stopping", stopping=True)

    def _request(self, url: str, deadline: float | None) -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": self.agent, "Accept": "*/*"})
        started = time.monotonic()
        end = started + self.policy.request_seconds
        end = end if deadline is None else min(end, deadline)
        try:
            answer = read_until(request, end, self.cutoffs, self.policy.timeout, self.policy.max_bytes,
                                _HttpOnlyRedirects())
        except Late as late:
            if self._stopped.is_set():
                raise OutOfTime(f"{url}: cut short: paperclub is stopping", stopping=True) from None
            raise OutOfTime(f"{url}: cut short: {late}") from None
        except ValueError as problem:  # larger than max_bytes
            raise FetchError(f"{url}: {problem}") from None
        return answer.body

    # -- a whole feed --------------------------------------------------------------------

    def fetch(self, url: str, deadline: float | None = None) -> list[Page]:
        """One page, or for an arXiv API query every page up to `max_entries`: `start`
        moves on by the entries received; paging stops at an empty or unreadable page,
        at opensearch:totalResults, or at the cap (or the URL's own max_results). It also
        stops, keeping the pages it has, at `max_pages` and at `deadline` (OutOfTime only
        when not even the first page came). A page with more entries than a whole refresh
        takes is refused before anything reads them (a recording may ignore max_results;
        58,000 entries on one page is not a listing)."""
        if not is_arxiv_query(url):
            return [_page(url, self.get(url, deadline))]
        parts = urlsplit(url)
        params = [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k not in ("start", "max_results")
        ]
        given = dict(parse_qsl(parts.query))
        try:
            first = int(given.get("start", 0))
            wanted = min(int(given.get("max_results", self.policy.max_entries)), self.policy.max_entries)
        except ValueError:
            raise FetchError(f"{url}: start and max_results must be whole numbers") from None
        pages: list[Page] = []
        got = 0
        while got < wanted and len(pages) < self.policy.max_pages:
            size = min(self.policy.page_size, wanted - got)
            query = urlencode([*params, ("start", first + got), ("max_results", size)], safe=":,")
            page_url = urlunsplit(parts._replace(query=query))
            try:
                page = _page(page_url, self.get(page_url, deadline))
            except OutOfTime:
                if not pages:
                    raise
                log.info("%s: paging stopped after %d pages: out of time", url, len(pages))
                break
            if page.entries is not None and page.entries > self.policy.max_entries:
                raise FetchError(f"{page_url}: a page of {page.entries:,} entries, more than the "
                                 f"{self.policy.max_entries:,} a refresh takes; {size} were asked for")
            pages.append(page)
            if not page.entries:  # None (unreadable: the import reports it) or 0 (the end)
                break
            got += page.entries
            if page.total is not None and first + got >= page.total:
                break
        return pages


def is_arxiv_query(url: str) -> bool:
    """An arXiv API query (export.arxiv.org/api/query, or a recording served at /api/query)."""
    return urlsplit(url).path.rstrip("/").endswith(ARXIV_API_PATH)


def _page(url: str, body: bytes) -> Page:
    entries, total = _atom_counts(body)
    return Page(url, body, entries, total)


def _atom_counts(body: bytes) -> tuple[int | None, int | None]:
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None, None
    if root.tag != f"{ATOM}feed":
        return None, None
    total = root.findtext(f"{OPENSEARCH}totalResults")
    return len(root.findall(f"{ATOM}entry")), int(total) if total and total.strip().isdigit() else None


def retry_after_seconds(headers: Any, most: float = 86_400.0) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date (against the answer's Date); at
    most `most` (a day), so that a number of 400 digits is a day, not inf ("inf s")."""
    raw = (headers.get("Retry-After") if headers else None) or ""
    raw = raw.strip()
    if not raw:
        return None
    if raw.isascii() and raw.isdigit():  # "²" is a digit to str.isdigit, not to float()
        return min(float(raw), most)
    try:
        moment = email.utils.parsedate_to_datetime(raw)
        sent = headers.get("Date")
        base = email.utils.parsedate_to_datetime(sent) if sent else datetime.now(timezone.utc)
        return min(max(0.0, (moment - base).total_seconds()), most)
    except (TypeError, ValueError, OverflowError):
        return None


def json_answer(body: bytes | str) -> object:
    """An answer's JSON, read strictly: UTF-8, no NaN or Infinity, numbers of sane length,
    nesting within the interpreter's reach. ValueError saying why otherwise, never a
    RecursionError: a provider's junk is refused by its client, not met as a bug."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("JSON nested too deep to read") from None
    except ValueError as problem:  # JSONDecodeError, or an integer past Python's digits limit
        raise ValueError(f"not JSON ({str(problem)[:80]})") from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


_API_ERROR_SUMMARY = re.compile(rb"arxiv\.org/api/errors.*?<summary[^>]*>(.*?)</summary>", re.S)


def _detail(answer: urllib.error.HTTPError) -> str:
    """The arXiv API explains a bad query in an Atom entry: quote it."""
    try:
        body = answer.read(100_000)
    except Exception:  # noqa: BLE001 - a courtesy: the status line already says what failed
        return ""
    found = _API_ERROR_SUMMARY.search(body)
    if not found:
        return ""
    return ": the arXiv API reported: " + " ".join(found.group(1).decode("utf-8", "replace").split())

"""Fetching feeds politely: the arXiv API's rules for every host paperclub reads from.

`Fetcher` is an HTTP client that keeps the arXiv API's terms of use: one request every
3 seconds per host at most (a process-wide, thread-safe `HostLimiter`), a User-Agent
naming paperclub, timeouts, retries with exponential backoff on 429/503 (Retry-After
honoured), and paging through arXiv API queries (`start`/`max_results`) up to a cap of
entries. Its clock and sleep are injectable, so tests never wait.
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
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bot import __version__

log = logging.getLogger(__name__)

ATOM = "{http://www.w3.org/2005/Atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ARXIV_API_PATH = "/api/query"


class FeedError(ValueError):
    """A feed setting that cannot be used; the message names the field."""


class FetchError(RuntimeError):
    """A feed that could not be fetched; the message names the URL and what happened."""


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
    page_size: int = 100  # entries per arXiv API request
    max_entries: int = 500  # entries per refresh at most (arXiv queries)
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

    def __init__(
        self,
        policy: FetchPolicy | None = None,
        limiter: HostLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        agent: str | None = None,
    ):
        self.policy = policy or FetchPolicy()
        self.limiter = limiter or DEFAULT_LIMITER
        self.sleep = sleep
        self.agent = agent or user_agent()
        self._opener = urllib.request.build_opener(_HttpOnlyRedirects)

    # -- one request ---------------------------------------------------------------------

    def get(self, url: str) -> bytes:
        """The body of a 2xx answer, after up to `max_attempts` tries; else FetchError."""
        host = urlsplit(url).hostname or ""
        last = ""
        for attempt in range(1, self.policy.max_attempts + 1):
            self.limiter.wait(host)
            retry_after: float | None = None
            try:
                return self._request(url)
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
                raise FetchError(
                    f"{url}: {last} asking to retry after {retry_after:.0f} s, longer than the "
                    f"{self.policy.max_retry_after:.0f} s a refresh waits; "
                    "the next scheduled run will try again"
                )
            if attempt == self.policy.max_attempts:
                break
            wait = min(self.policy.backoff_base * 2 ** (attempt - 1), self.policy.max_backoff)
            if retry_after is not None:
                wait = max(wait, retry_after)
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

    def _request(self, url: str) -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": self.agent, "Accept": "*/*"})
        with self._opener.open(request, timeout=self.policy.timeout) as response:
            body: bytes = response.read(self.policy.max_bytes + 1)  # urllib types the answer as Any
        if len(body) > self.policy.max_bytes:
            raise FetchError(f"{url}: the answer is larger than {self.policy.max_bytes:,} bytes")
        return body

    # -- a whole feed --------------------------------------------------------------------

    def fetch(self, url: str) -> list[Page]:
        """One page, or for an arXiv API query every page up to `max_entries`: `start`
        moves on by the entries received; paging stops at an empty or unreadable page,
        at opensearch:totalResults, or at the cap (or the URL's own max_results)."""
        if not is_arxiv_query(url):
            return [_page(url, self.get(url))]
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
        while got < wanted:
            size = min(self.policy.page_size, wanted - got)
            query = urlencode([*params, ("start", first + got), ("max_results", size)], safe=":,")
            page_url = urlunsplit(parts._replace(query=query))
            page = _page(page_url, self.get(page_url))
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


def json_answer(body: bytes) -> object:
    """An answer's JSON, read strictly: UTF-8, no NaN or Infinity, numbers of sane length,
    nesting within the interpreter's reach. ValueError saying why otherwise, never a
    RecursionError: a provider's junk is refused by its client, not met as a bug."""
    try:
        text = body.decode("utf-8")
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

"""The Zotero Web API v3, spoken directly over HTTP (urllib, as bot.corpus.fetch does).

Why not pyzotero: it fixes its endpoint to api.zotero.org (tests need a fake on
127.0.0.1, and PAPERCLUB_ZOTERO_API_URL must be honoured), it makes a new write token
for every call (a write retried after a lost answer must send the *same* token, stored
before the first try, or it may create the items twice), and it honours Backoff and
Retry-After by sleeping in the caller's thread (the scheduler's minute must not sleep:
a sync that is asked to wait is postponed to a later tick instead).

Every call is one request: no retries here. A refusal or a network failure is a
`ZoteroError` carrying the status and what Zotero asked (Retry-After, Backoff), and the
caller decides when to try again. Backoff and Retry-After are read as seconds of at most
WAIT_MOST whatever they say (a number of any length, a date in year 9999); what is not a
wait is no wait. Bodies are read strictly (bot.corpus.fetch.json_answer) and carried as
they are: bot.zotero.answers checks their shape.

Paging trusts nothing the server says about how much there is (Total-Results, Link): it
stops when a page brings fewer rows than asked or nothing it had not brought before, at
a cap of pages (ZoteroCut, the rows read so far yielded), and at the deadline of
`within` (ZoteroCut too), whose time left also shortens each request's socket timeout.
A server that answers endless pages, a Total-Results of a billion or a page of more
rows than asked costs a bounded number of requests.
"""

from __future__ import annotations

import http.client
import json
import math
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from bot.corpus.cutoffs import Cutoffs, Late, read_until
from bot.corpus.fetch import json_answer, retry_after_seconds, user_agent

API_VERSION = "3"
PAGE = 100  # items per read request: the API's largest `limit`
WRITE_BATCH = 50  # objects per write request: the API's largest
TIMEOUT = 20.0  # seconds, per connect and per read
REQUEST_SECONDS = 60.0  # one request in all, without a caller's deadline: a server that drips is cut
MAX_BYTES = 20_000_000
WAIT_MOST = 86_400.0  # seconds: the longest Backoff or Retry-After a link is deferred by
COLLECTION_PAGES = 10  # 1,000 collections: a group with more is named by a collection's key


class ZoteroError(Exception):
    """A request Zotero refused or that did not get through. `status` None: no answer
    (network, timeout); `retry_after`/`backoff`: seconds Zotero asked us to wait."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None,
                 backoff: float | None = None, body: str = ""):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.backoff = backoff
        self.body = body


class ZoteroJunk(ZoteroError):
    """An answer that came but cannot be used: not JSON, or not the shape it should have."""


class ZoteroCut(ZoteroError):
    """Paging stopped before the end: at its cap of pages (`late` False) or at the
    deadline (`late` True). What was read before it has been yielded."""

    def __init__(self, message: str, late: bool):
        super().__init__(message)
        self.late = late


@dataclass
class Answer:
    status: int
    data: object  # as parsed: bot.zotero.answers checks its shape
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def version(self) -> int | None:
        """Last-Modified-Version: the library's version after this read or write."""
        return _number(self.headers.get("Last-Modified-Version"))

    @property
    def total(self) -> int | None:
        return _number(self.headers.get("Total-Results"))

    @property
    def backoff(self) -> float | None:
        """Backoff: Zotero is busy, send nothing more for this many seconds."""
        return _seconds(self.headers.get("Backoff"))


class ZoteroApi:
    """One API key against one base URL (PAPERCLUB_ZOTERO_API_URL)."""

    def __init__(self, base_url: str, api_key: str, timeout: float = TIMEOUT,
                 clock: Callable[[], float] = time.monotonic):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.clock = clock  # monotonic seconds, for the deadline
        self.deadline: float | None = None  # set by `within`
        # Cuts a request at its end however the server drips, and all of them at a stop
        # (ZoteroConfig hands every client of a process its one).
        self.cutoffs = Cutoffs()
        self._agent = user_agent()
        self.backoff: float | None = None  # the longest Backoff any answer asked for

    @contextmanager
    def within(self, seconds: float) -> Iterator[None]:
        """Requests made inside end `seconds` from now at the latest (one already shorter
        keeps its own): a request that would start later is ZoteroCut, one under way has
        a socket timeout of at most the time left."""
        before = self.deadline
        mine = self.clock() + seconds
        self.deadline = mine if before is None else min(before, mine)
        try:
            yield
        finally:
            self.deadline = before

    # --- what a key and a group are ---------------------------------------------------

    def key_info(self) -> object:
        """GET /keys/current: whose key it is and what it may do (403: no such key)."""
        return self.request("GET", "/keys/current").data

    def group(self, group_id: int) -> object:
        """GET /groups/ID (404: no such group; 403: this key may not read it)."""
        return self.request("GET", f"/groups/{group_id}").data

    def collections(self, group_id: int, pages: int = COLLECTION_PAGES) -> list[object]:
        """The group's collections; ZoteroCut when there are more than `pages` pages of
        them or the deadline came first."""
        return [c for page in self._pages(f"/groups/{group_id}/collections", {}, pages) for c in _rows(page)]

    def collection(self, group_id: int, key: str) -> object:
        """GET one collection by its key (404: no such collection)."""
        return self.request("GET", f"/groups/{group_id}/collections/{quote(key)}").data

    # --- items -----------------------------------------------------------------------

    def items_page(self, group_id: int, collection: str | None, since: int, start: int,
                   limit: int = PAGE) -> Answer:
        """One page of the top-level items of the collection (or the library) changed
        since library version `since`."""
        where = f"/groups/{group_id}" + (f"/collections/{quote(collection)}" if collection else "")
        # Oldest first: items added while a read spans several ticks come after the pages read.
        params = {"format": "json", "since": since, "start": start, "limit": limit, "sort": "dateAdded",
                  "direction": "asc"}
        return self.request("GET", f"{where}/items/top", params)

    def all_items(self, group_id: int, collection: str | None, pages: int) -> Generator[object, None, None]:
        """The top-level items of the collection (or the library), page by page, one page
        held at a time; ZoteroCut after `pages` pages when there are more."""
        where = f"/groups/{group_id}" + (f"/collections/{quote(collection)}" if collection else "")
        for page in self._pages(f"{where}/items/top", {"format": "json"}, pages):
            yield from _rows(page)

    def items_by_key(self, group_id: int, keys: list[str]) -> Answer:
        """The items among `keys` (at most 50) that exist."""
        params = {"format": "json", "itemKey": ",".join(keys), "includeTrashed": 1}
        return self.request("GET", f"/groups/{group_id}/items", params)

    def item(self, group_id: int, key: str) -> object:
        return self.request("GET", f"/groups/{group_id}/items/{quote(key)}").data

    def create(self, group_id: int, objects: list[dict[str, Any]], token: str) -> Answer:
        """POST up to 50 new objects with a write token: Zotero answers 412 to a token it
        has already accepted, so a retry of a write that went through creates nothing."""
        return self.request("POST", f"/groups/{group_id}/items", body=objects,
                            headers={"Zotero-Write-Token": token})

    def patch(self, group_id: int, key: str, data: dict[str, Any], version: int) -> Answer:
        """Change some fields of one item, if it is still at `version` (else 412)."""
        return self.request("PATCH", f"/groups/{group_id}/items/{quote(key)}", body=data,
                            headers={"If-Unmodified-Since-Version": str(version)})

    # --- one request -----------------------------------------------------------------

    def _pages(self, path: str, params: dict[str, Any], most: int) -> Iterator[Answer]:
        """Pages until one brings fewer rows than asked or none it had not brought before
        (Total-Results is not believed: it may be a billion, or too few); ZoteroCut when
        `most` pages came full."""
        start, seen = 0, set[str | None]()
        for _ in range(most):
            page = self.request("GET", path, {**params, "start": start, "limit": PAGE})
            rows = _rows(page, f"GET {path}")
            keys = {_key(row) for row in rows}
            new = bool(keys - seen) or None in keys  # a row without a key: counted, answers.py skips it
            seen |= keys
            yield page
            start += len(rows)
            if len(rows) < PAGE or not new:
                return
        raise ZoteroCut(f"GET {path}: more than {most * PAGE:,} rows, paperclub reads at most that many at once",
                        late=False)

    def request(self, method: str, path: str, params: Mapping[str, Any] | None = None,
                body: Any = None, headers: Mapping[str, str] | None = None) -> Answer:
        url = self.base_url + path + (f"?{urlencode(params)}" if params else "")
        sent = {"Zotero-API-Version": API_VERSION, "Zotero-API-Key": self.api_key,
                "User-Agent": self._agent, "Accept": "application/json", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        timeout = self._time_left(method, path)
        end = time.monotonic() + (timeout if self.deadline is not None else REQUEST_SECONDS)
        try:
            got = read_until(request, end, self.cutoffs, timeout, MAX_BYTES)
            raw, status, answer_headers = got.body, got.status, dict(got.headers.items())
        except Late:
            raise ZoteroCut(f"{method} {path}: Zotero did not answer in time", late=True) from None
        except ValueError:
            raise ZoteroError(f"{method} {path}: the answer is larger than {MAX_BYTES:,} bytes") from None
        except urllib.error.HTTPError as refused:
            error = _refusal(method, path, refused)
            self._slow_down(error.backoff)
            raise error from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as problem:
            if self.deadline is not None and self.clock() >= self.deadline:
                raise ZoteroCut(f"{method} {path}: Zotero did not answer in time", late=True) from None
            raise ZoteroError(f"could not connect to the Zotero API at {self.base_url} "
                              f"({_in_words(problem)})") from None
        try:
            parsed = json_answer(raw) if raw.strip() else None
        except ValueError as problem:
            raise ZoteroJunk(f"{method} {path}: the answer is {problem}", status) from None
        answer = Answer(status, parsed, answer_headers)
        self._slow_down(answer.backoff)
        return answer

    def _time_left(self, method: str, path: str) -> float:
        """The socket timeout of the next request: the client's, or the time left before
        the deadline when that is shorter; ZoteroCut when none is left."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - self.clock()
        if left <= 0:
            raise ZoteroCut(f"{method} {path}: Zotero did not answer in time", late=True)
        return min(self.timeout, left)

    def _slow_down(self, seconds: float | None) -> None:
        if seconds is not None:
            self.backoff = max(self.backoff or 0.0, seconds)


def _refusal(method: str, path: str, refused: urllib.error.HTTPError) -> ZoteroError:
    try:
        text = refused.read(2000).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    headers = refused.headers
    status = refused.code
    first_line = text.splitlines()[0] if text else refused.reason
    return ZoteroError(f"{method} {path}: HTTP {status} {first_line}".rstrip(), status,
                       wait_seconds(retry_after_seconds(headers)),
                       _seconds(headers.get("Backoff") if headers else None), text)


def _in_words(problem: Exception) -> str:
    """Why a request did not get through, in words ("connection refused"), not as
    "[Errno 111] Connection refused"."""
    reason = getattr(problem, "reason", None) or problem
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "no answer in time"
    if isinstance(reason, socket.gaierror):
        return "the host name is not known"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror[:1].lower() + reason.strerror[1:]
    return str(reason) or type(reason).__name__


def _key(row: object) -> str | None:
    key = row.get("key") if isinstance(row, dict) else None
    return key if isinstance(key, str) else None


def _rows(page: Answer, request: str = "") -> list[object]:
    """A page's list (what paging counts); ZoteroJunk when the answer is not one."""
    if not isinstance(page.data, list):
        raise ZoteroJunk(f"{request or 'a page'}: the answer is not a list", page.status)
    return page.data


_DIGITS = re.compile(r"[0-9]{1,18}")
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def wait_seconds(seconds: float | None) -> float | None:
    """A wait Zotero asked for, as at most WAIT_MOST seconds; None for no wait (none, or
    not a positive finite number)."""
    if seconds is None or math.isnan(seconds) or seconds <= 0:
        return None
    return min(seconds, WAIT_MOST)


def _number(raw: str | None) -> int | None:
    text = (raw or "").strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def _seconds(raw: str | None) -> float | None:
    """Backoff: whole or decimal seconds in ASCII digits, of any length (clamped)."""
    text = (raw or "").strip()
    return wait_seconds(float(text)) if _SECONDS.fullmatch(text) else None

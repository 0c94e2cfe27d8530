"""The Zotero Web API v3, spoken directly over HTTP (urllib, as bot.corpus.fetch does).

Why not pyzotero: it fixes its endpoint to api.zotero.org (tests need a fake on
127.0.0.1, and PAPERCLUB_ZOTERO_API_URL must be honoured), it makes a new write token
for every call (a write retried after a lost answer must send the *same* token, stored
before the first try, or it may create the items twice), and it honours Backoff and
Retry-After by sleeping in the caller's thread (the scheduler's minute must not sleep:
a sync that is asked to wait is postponed to a later tick instead).

Every call is one request: no retries here. A refusal or a network failure is a
`ZoteroError` carrying the status and what Zotero asked (Retry-After, Backoff), and the
caller decides when to try again.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from bot.corpus.fetch import retry_after_seconds, user_agent

API_VERSION = "3"
PAGE = 100  # items per read request: the API's largest `limit`
WRITE_BATCH = 50  # objects per write request: the API's largest
TIMEOUT = 20.0  # seconds, per connect and per read
MAX_BYTES = 20_000_000


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


@dataclass
class Answer:
    status: int
    data: Any
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

    def __init__(self, base_url: str, api_key: str, timeout: float = TIMEOUT):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self._agent = user_agent()
        self.backoff: float | None = None  # the longest Backoff any answer asked for


    # --- what a key and a group are ---------------------------------------------------

    def key_info(self) -> dict[str, Any]:
        """GET /keys/current: whose key it is and what it may do (403: no such key)."""
        return _object(self.request("GET", "/keys/current"), "GET /keys/current")

    def group(self, group_id: int) -> dict[str, Any]:
        """GET /groups/ID (404: no such group; 403: this key may not read it)."""
        path = f"/groups/{group_id}"
        return _object(self.request("GET", path), f"GET {path}")

    def collections(self, group_id: int) -> list[dict[str, Any]]:
        return [c for page in self._pages(f"/groups/{group_id}/collections", {}) for c in page.data]

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

    def all_items(self, group_id: int, collection: str | None) -> Iterator[dict[str, Any]]:
        """Every top-level item of the collection (or the library), page by page."""
        where = f"/groups/{group_id}" + (f"/collections/{quote(collection)}" if collection else "")
        for page in self._pages(f"{where}/items/top", {"format": "json"}):
            yield from page.data

    def items_by_key(self, group_id: int, keys: list[str]) -> list[dict[str, Any]]:
        """The items among `keys` (at most 50) that exist."""
        params = {"format": "json", "itemKey": ",".join(keys), "includeTrashed": 1}
        path = f"/groups/{group_id}/items"
        return _objects(self.request("GET", path, params), f"GET {path}")

    def item(self, group_id: int, key: str) -> dict[str, Any]:
        path = f"/groups/{group_id}/items/{quote(key)}"
        return _object(self.request("GET", path), f"GET {path}")

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

    def _pages(self, path: str, params: dict[str, Any]) -> Iterator[Answer]:
        start = 0
        while True:
            page = self.request("GET", path, {**params, "start": start, "limit": PAGE})
            yield page
            start += len(page.data)
            if not page.data or (page.total is not None and start >= page.total):
                return

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
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read(MAX_BYTES + 1)
                status, answer_headers = response.status, dict(response.headers.items())
        except urllib.error.HTTPError as refused:
            error = _refusal(method, path, refused)
            self._slow_down(error.backoff)
            raise error from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as problem:
            reason = getattr(problem, "reason", None) or problem
            raise ZoteroError(f"could not reach the Zotero API ({reason})") from None
        if len(raw) > MAX_BYTES:
            raise ZoteroError(f"{method} {path}: the answer is larger than {MAX_BYTES:,} bytes")
        try:
            parsed = json.loads(raw) if raw.strip() else None
        except ValueError:
            raise ZoteroError(f"{method} {path}: the answer is not JSON", status) from None
        answer = Answer(status, parsed, answer_headers)
        self._slow_down(answer.backoff)
        return answer

    def _slow_down(self, seconds: float | None) -> None:
        if seconds is not None:
            self.backoff = max(self.backoff or 0.0, seconds)


def _object(answer: Answer, request: str) -> dict[str, Any]:
    """The answer's JSON object, as the API answers a read of one thing."""
    if not isinstance(answer.data, dict):
        raise ZoteroError(f"{request}: the answer is not a JSON object", answer.status)
    return answer.data


def _objects(answer: Answer, request: str) -> list[dict[str, Any]]:
    """The answer's list of JSON objects, as the API answers a read of several."""
    if not isinstance(answer.data, list) or not all(isinstance(o, dict) for o in answer.data):
        raise ZoteroError(f"{request}: the answer is not a list of JSON objects", answer.status)
    return answer.data


def _refusal(method: str, path: str, refused: urllib.error.HTTPError) -> ZoteroError:
    try:
        text = refused.read(2000).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    headers = refused.headers
    status = refused.code
    first_line = text.splitlines()[0] if text else refused.reason
    return ZoteroError(f"{method} {path}: HTTP {status} {first_line}".rstrip(), status,
                       retry_after_seconds(headers), _seconds(headers.get("Backoff") if headers else None), text)


def _number(raw: str | None) -> int | None:
    return int(raw) if raw and raw.strip().isdigit() else None


def _seconds(raw: str | None) -> float | None:
    return float(raw) if raw and raw.strip().isdigit() else None

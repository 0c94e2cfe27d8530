"""A fake Zotero Web API v3 on 127.0.0.1 that speaks the real format (what bot/zotero
sends and reads): API keys (GET /keys/current, 403 for a wrong one), groups (404 for a
wrong one), collections, items as {key, version, library, meta, data} with library
versions (`Last-Modified-Version`, `since=`), paging (`start`, `limit`, `Total-Results`),
multi-object writes (POST, up to 50, answered with successful/success/unchanged/failed
by index), write tokens (a token already accepted: 412, and nothing is written), PATCH
with `If-Unmodified-Since-Version` (412 when the item changed since), and on demand 429
or 503 with Retry-After, a Backoff header (any text), an answer lost after the write was
done, a body of junk in place of the next answer, or items answered spoilt (`spoilt`: the
item as it is listed, whatever the library holds). And as a server that pages badly can:
`endless` (every list read answers a full page of new rows, at any `start`, `padding`
characters of abstract each), `total_results` (a Total-Results header that lies), and
`page_rows` (pages of that many rows, more than the `limit` asked), `same_page` (the first
page again at every `start`).

Item fields are checked against the item types' fields, as the real API refuses a
field its type does not have (400 in `failed`).

`sample_zotero()` is the one `paperclub sandbox` starts: a key that may write to a group,
whose collection "Reading group" holds a few items plainly marked as samples."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from adapters.fakes.http import QuietHandler

COMMON = {"key", "version", "itemType", "title", "creators", "tags", "collections", "relations", "abstractNote",
          "date", "url", "accessDate", "language", "shortTitle", "rights", "extra", "archive", "archiveLocation",
          "libraryCatalog", "callNumber", "DOI", "dateAdded", "dateModified"}
FIELDS = {
    "journalArticle": COMMON | {"publicationTitle", "volume", "issue", "pages", "series", "seriesTitle",
                                "seriesText", "journalAbbreviation", "ISSN"},
    "conferencePaper": COMMON | {"proceedingsTitle", "conferenceName", "place", "publisher", "volume", "pages",
                                 "series", "ISBN"},
    "preprint": COMMON | {"genre", "repository", "archiveID", "place", "series", "seriesNumber", "citationKey"},
    "note": {"key", "version", "itemType", "note", "parentItem", "tags", "collections", "relations",
             "dateAdded", "dateModified"},
}
ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
KEY = re.compile(r"[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}")

# The sandbox's library (sample_zotero): what `zotero link SAMPLE_GROUP Reading group` finds.
SAMPLE_KEY = "SandboxKeyForTheFakeZoteroOnly"  # the operator's key (PAPERCLUB_ZOTERO_API_KEY) there
SAMPLE_GROUP = 1000001
SAMPLE_GROUP_NAME = "Sandbox Lab"
SAMPLE_COLLECTION = ("SNDBX234", "Reading group")  # key, name
SAMPLE_ITEMS: tuple[dict[str, Any], ...] = (
    {"itemType": "journalArticle", "title": "Sandbox: A Sample Article the Group Filed Before",
     "creators": [{"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}],
     "abstractNote": "A sample item of the sandbox's fake Zotero library.", "date": "2024",
     "publicationTitle": "Journal of Sample Studies", "DOI": "10.5555/sandbox.1"},
    {"itemType": "conferencePaper", "title": "Sandbox: A Sample Conference Paper",
     "creators": [{"creatorType": "author", "firstName": "Alan", "lastName": "Turing"}],
     "abstractNote": "A sample item of the sandbox's fake Zotero library.", "date": "2025",
     "proceedingsTitle": "Proceedings of the Sample Conference", "DOI": "10.5555/sandbox.2"},
    {"itemType": "preprint", "title": "Sandbox: A Sample Preprint",
     "creators": [{"creatorType": "author", "firstName": "Grace", "lastName": "Hopper"}],
     "abstractNote": "A sample item of the sandbox's fake Zotero library.", "date": "2025",
     "repository": "arXiv", "archiveID": "arXiv:2501.99999", "url": "https://arxiv.org/abs/2501.99999"},
)


@dataclass
class Group:
    id: int
    name: str
    version: int = 1
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> the whole object
    collections: dict[str, str] = field(default_factory=dict)  # key -> name


class FakeZotero:
    """Start with `with FakeZotero() as zotero:`; `zotero.url` is the base URL."""

    def __init__(self) -> None:
        self.keys: dict[str, dict[str, Any]] = {}  # api key -> {"userID", "username", "groups": {id: write}}
        self.groups: dict[int, Group] = {}
        self.tokens: set[tuple[str, str]] = set()  # (api key, write token) accepted
        # (method, path?query, headers by lower-case name: urllib sends "Zotero-api-key")
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.planned: list[tuple[int, dict[str, str]]] = []  # refusals for the next requests
        self.backoff: int | str | None = None  # a Backoff header on the next answer
        self.junk_next: bytes | None = None  # the next answer's body, as given (200, application/json)
        self.spoilt: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}  # key -> the item as answered
        self.lose_next_write = False  # do the next POST, then close without answering
        self.change_before_patch: str | None = None  # a member edits this item as our PATCH arrives
        self.endless = False  # list reads never end: each page full of rows not seen before
        self.padding = 0  # characters of abstract in each endless item
        self.total_results: str | None = None  # Total-Results as given, in place of the true count
        self.page_rows: int | None = None  # rows per page whatever `limit` asked
        self.same_page = False  # every `start` answered with the first page again
        self.lock = threading.Lock()
        self._next_key = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # --- set-up -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeZotero:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_key(self, key: str, groups: dict[int, bool], user_id: int = 7) -> None:
        self.keys[key] = {"userID": user_id, "username": "reader", "groups": groups}

    def add_group(self, group_id: int, name: str, collections: dict[str, str] | None = None) -> Group:
        group = self.groups[group_id] = Group(group_id, name, collections=dict(collections or {}))
        return group

    def add_item(self, group_id: int, data: dict[str, Any]) -> str:
        """An item someone else put in the library (not through the API under test)."""
        group = self.groups[group_id]
        group.version += 1
        key = data.get("key") or self.new_key()
        group.items[key] = self._object(group, key, {**data, "key": key})
        return key

    def new_key(self) -> str:
        """Keys the server makes, from Zotero's alphabet, starting with Z (ours are random)."""
        self._next_key += 1
        number, digits = self._next_key, ""
        for _ in range(7):
            number, digit = divmod(number, len(ALPHABET))
            digits = ALPHABET[digit] + digits
        return "Z" + digits

    def refuse_next(self, status: int, headers: dict[str, str] | None = None, times: int = 1) -> None:
        self.planned += [(status, headers or {})] * times

    # --- what is there ----------------------------------------------------------------

    def top_items(self, group_id: int, collection: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.groups[group_id].items.values()
                if o["data"]["itemType"] != "note" and (collection is None or collection in o["data"]["collections"])]

    def notes(self, group_id: int, parent: str) -> list[dict[str, Any]]:
        return [o for o in self.groups[group_id].items.values() if o["data"].get("parentItem") == parent]

    def writes(self) -> list[tuple[str, str, dict[str, str]]]:
        return [r for r in self.requests if r[0] in ("POST", "PATCH")]

    def _object(self, group: Group, key: str, data: dict[str, Any]) -> dict[str, Any]:
        data = {"tags": [], "collections": [], "relations": {}, **data, "key": key, "version": group.version}
        if data["itemType"] == "note":
            data.pop("collections", None)
        return {"key": key, "version": group.version,
                "library": {"type": "group", "id": group.id, "name": group.name},
                "meta": {"numChildren": 0}, "data": data}


def sample_zotero() -> FakeZotero:
    """The sandbox's fake (not started): SAMPLE_KEY may write to group SAMPLE_GROUP, whose
    collection "Reading group" holds SAMPLE_ITEMS."""
    fake = FakeZotero()
    fake.add_key(SAMPLE_KEY, {SAMPLE_GROUP: True})
    key, name = SAMPLE_COLLECTION
    fake.add_group(SAMPLE_GROUP, SAMPLE_GROUP_NAME, {key: name})
    for data in SAMPLE_ITEMS:
        fake.add_item(SAMPLE_GROUP, {**data, "collections": [key]})
    return fake


def _handler(fake: FakeZotero):
    class Handler(QuietHandler):

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self._serve("GET")

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self._serve("POST")

        def do_PATCH(self) -> None:  # noqa: N802 - http.server's name
            self._serve("PATCH")

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with fake.lock:
                fake.requests.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}))
                if fake.planned:
                    status, headers = fake.planned.pop(0)
                    return self._answer(status, f"planned {status}", headers)
                if fake.junk_next is not None:
                    junk, fake.junk_next = fake.junk_next, None
                    return self._answer(200, junk, {})
                try:
                    answer = _route(fake, method, self.path, self.headers, body)
                except _Refusal as refusal:
                    return self._answer(refusal.status, refusal.text, refusal.headers)
            if answer is None:  # the write was done and its answer lost
                self.close_connection = True
                self.connection.shutdown(2)
                return
            status, data, headers = answer
            self._answer(status, data, headers)

        def _answer(self, status: int, data: Any, headers: dict[str, str]) -> None:
            """`data` as JSON (text as text/plain, bytes as they are), with a Backoff header
            when one is set for the next answer."""
            if isinstance(data, bytes):
                raw = data
            else:
                raw = b"" if data is None else (data.encode() if isinstance(data, str) else json.dumps(data).encode())
            extra = list(headers.items())
            if fake.backoff is not None:
                extra.insert(0, ("Backoff", str(fake.backoff)))
                fake.backoff = None
            self._send(status, "text/plain" if isinstance(data, str) else "application/json", raw, extra)

    return Handler


class _Refusal(Exception):
    def __init__(self, status: int, text: str, headers: dict[str, str] | None = None):
        super().__init__(text)
        self.status, self.text, self.headers = status, text, headers or {}


def _route(fake: FakeZotero, method: str, target: str, headers, body: bytes):
    parts = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    path = parts.path.strip("/").split("/")
    if headers.get("Zotero-API-Version") != "3":
        raise _Refusal(400, "Zotero-API-Version 3 expected by this fake")
    api_key = headers.get("Zotero-API-Key") or ""
    key = fake.keys.get(api_key)
    if path == ["keys", "current"]:
        if key is None:
            raise _Refusal(403, "Invalid key")
        access = {"groups": {str(g): {"library": True, "write": w} for g, w in key["groups"].items()}}
        return 200, {"key": api_key, "userID": key["userID"], "username": key["username"], "access": access}, {}
    if path[0] != "groups" or len(path) < 2 or not path[1].isdigit():
        raise _Refusal(404, "Not found")
    group = fake.groups.get(int(path[1]))
    if group is None:
        raise _Refusal(404, "Group not found")
    if key is None or group.id not in key["groups"]:
        raise _Refusal(403, "Forbidden")
    rest = path[2:]
    version = {"Last-Modified-Version": str(group.version)}
    if method == "GET":
        return _read(fake, group, rest, query, version)
    if not key["groups"][group.id]:
        raise _Refusal(403, "Write access denied")
    if method == "POST" and rest == ["items"]:
        return _create(fake, group, api_key, headers, body)
    if method == "PATCH" and len(rest) == 2 and rest[0] == "items":
        return _patch(fake, group, rest[1], headers, body)
    raise _Refusal(405, "Method not allowed")


def _read(fake: FakeZotero, group: Group, rest: list[str], query: dict[str, str], version: dict[str, str]):
    if not rest:
        return 200, {"id": group.id, "version": group.version, "data": {"id": group.id, "name": group.name}}, version
    if rest == ["collections"]:
        found = [{"key": k, "version": 1, "data": {"key": k, "name": n, "parentCollection": False}}
                 for k, n in sorted(group.collections.items())]
        return _paged(fake, found, query, version, lambda n: {"key": _endless_key(n), "version": 1, "data": {
            "key": _endless_key(n), "name": f"Collection {n}", "parentCollection": False}})
    collection = None
    if rest[0] == "collections":
        if len(rest) < 2 or rest[1] not in group.collections:
            raise _Refusal(404, "Collection not found")
        collection, rest = rest[1], rest[2:]
        if not rest:
            return 200, {"key": collection, "data": {"name": group.collections[collection]}}, version
    if rest == ["items", "top"] or rest == ["items"]:
        since = int(query.get("since", 0))
        wanted = set(query["itemKey"].split(",")) if "itemKey" in query else None
        found = [o for o in group.items.values()
                 if o["version"] > since and (wanted is None or o["key"] in wanted)
                 and (rest == ["items"] or o["data"]["itemType"] != "note")
                 and (collection is None or collection in o["data"].get("collections", []))]
        if query.get("sort") != "dateAdded":  # else: the order they were added in
            found.sort(key=lambda o: (o["version"], o["key"]))
        found = [spoilt(o) if (spoilt := fake.spoilt.get(o["key"])) else o for o in found]
        return _paged(fake, found, query, version, lambda n: fake._object(group, _endless_key(n), {
            "itemType": "journalArticle", "title": f"Endless Paper {n}", "abstractNote": "x" * fake.padding,
            "collections": [collection] if collection else []}))
    if len(rest) == 2 and rest[0] == "items":
        item = group.items.get(rest[1])
        if item is None:
            raise _Refusal(404, "Item not found")
        return 200, item, {"Last-Modified-Version": str(item["version"])}
    raise _Refusal(404, "Not found")


def _paged(fake: FakeZotero, found: list, query: dict[str, str], version: dict[str, str],
           endless: Callable[[int], dict[str, Any]]):
    start, limit = int(query.get("start", 0)), min(int(query.get("limit", 25)), 100)
    start = 0 if fake.same_page else start
    count = fake.page_rows or limit
    rows = [endless(n) for n in range(start, start + count)] if fake.endless else found[start : start + count]
    total = fake.total_results if fake.total_results is not None else str(len(found))
    return 200, rows, {**version, "Total-Results": total}


def _endless_key(number: int) -> str:
    """The `number`th key of an endless list: Zotero's alphabet, starting with E."""
    digits = ""
    for _ in range(7):
        number, digit = divmod(number, len(ALPHABET))
        digits = ALPHABET[digit] + digits
    return "E" + digits


def _create(fake: FakeZotero, group: Group, api_key: str, headers, body: bytes):
    token = headers.get("Zotero-Write-Token")
    if token and (api_key, token) in fake.tokens:
        raise _Refusal(412, "Write token already used")
    objects = json.loads(body)
    if not isinstance(objects, list):
        raise _Refusal(400, "Uploaded data must be a JSON array")
    if len(objects) > 50:
        raise _Refusal(413, "Only 50 objects can be saved in a single request")
    group.version += 1
    answer: dict[str, dict] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
    for index, data in enumerate(objects):
        problem = _problem(group, data)
        if problem:
            answer["failed"][str(index)] = {"key": data.get("key", ""), "code": 400, "message": problem}
            continue
        key = data.get("key") or fake.new_key()
        group.items[key] = fake._object(group, key, data)
        answer["successful"][str(index)] = group.items[key]
        answer["success"][str(index)] = key
    if not answer["successful"]:
        group.version -= 1
    if token:
        fake.tokens.add((api_key, token))
    if fake.lose_next_write:
        fake.lose_next_write = False
        return None
    return 200, answer, {"Last-Modified-Version": str(group.version)}


def _problem(group: Group, data: dict[str, Any]) -> str | None:
    kind = data.get("itemType")
    if kind not in FIELDS:
        return f"'{kind}' is not a valid itemType"
    unknown = sorted(set(data) - FIELDS[kind])
    if unknown:
        return f"'{unknown[0]}' is not a valid field for type '{kind}'"
    if "key" in data and (not KEY.fullmatch(data["key"]) or data["key"] in group.items):
        return f"Item key {data['key']!r} is not valid or already exists"
    if kind == "note" and data.get("parentItem") not in group.items:
        return f"Parent item {data.get('parentItem')} not found"
    if kind != "note" and any(c not in group.collections for c in data.get("collections", [])):
        return "Collection not found"
    for creator in data.get("creators", []):
        if "creatorType" not in creator or not ({"name"} <= set(creator) or {"lastName"} <= set(creator)):
            return "Invalid creator"
    return None


def _patch(fake: FakeZotero, group: Group, key: str, headers, body: bytes):
    item = group.items.get(key)
    if item is None:
        raise _Refusal(404, "Item not found")
    if fake.change_before_patch == key:
        fake.change_before_patch = None
        group.version += 1
        item["data"]["tags"] = [*item["data"]["tags"], {"tag": "someone else's"}]
        item["version"] = item["data"]["version"] = group.version
    given = headers.get("If-Unmodified-Since-Version")
    if given is None:
        raise _Refusal(428, "If-Unmodified-Since-Version not provided")
    if item["version"] > int(given):
        raise _Refusal(412, f"Item has been modified since specified version (expected {given}, found "
                            f"{item['version']})")
    changes = json.loads(body)
    unknown = sorted(set(changes) - FIELDS[item["data"]["itemType"]])
    if unknown:
        raise _Refusal(400, f"'{unknown[0]}' is not a valid field")
    group.version += 1
    item["data"].update(changes)
    item["version"] = item["data"]["version"] = group.version
    return 204, None, {"Last-Modified-Version": str(group.version)}

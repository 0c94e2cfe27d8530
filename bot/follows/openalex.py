"""OpenAlex's works and authors API, as the follows read it.

Works come back as JSON pages (`results`, and `meta.next_cursor` for cursor paging);
ids are URLs (https://openalex.org/W...), DOIs are https://doi.org/... URLs, and the
abstract is an inverted index (word -> positions) that `abstract_text` turns back into
text. OpenAlex asks for a contact in `mailto` (its polite pool): PAPERCLUB_FEED_CONTACT,
when it is an e-mail address. Every request goes through the polite fetcher
(bot.corpus.fetch): User-Agent, per-host spacing, Retry-After on 429/503, time and size
caps. Nothing here touches the database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urlencode

from bot.corpus import identifiers
from bot.corpus.display_safe import safe_line
from bot.corpus.fetch import Fetcher, FetchError
from bot.corpus.records import PaperRecord, clean_space

PER_PAGE = 200  # OpenAlex's largest page
OR_MAX = 50  # values joined with | in one filter
PAGE_PAGING_MAX = 10_000  # works basic paging reaches without a key
AUTHORS_SHOWN = 8
_AUTHOR_ID = re.compile(r"(?:https?://openalex\.org/)?(A\d{1,12})", re.I)
_WORK_ID = re.compile(r"(?:https?://openalex\.org/)?(W\d{1,12})", re.I)


class OpenAlexError(FetchError):
    """An answer OpenAlex gave that cannot be read; the message says which and why."""


@dataclass(frozen=True)
class Author:
    id: str  # A5023888391
    name: str
    affiliation: str
    works: int

    def line(self) -> str:
        where = f", {self.affiliation}" if self.affiliation else ""
        return f"{self.id}: {self.name}{where} ({self.works:,} works)"


@dataclass
class Work:
    """One work: its record for the library, its OpenAlex id, its publication date and
    the works it cites (OpenAlex ids)."""

    id: str
    record: PaperRecord
    published: date | None
    cites: list[str] = field(default_factory=list)


def author_id(text: str) -> str | None:
    """A5023888391 from "A5023888391" or "https://openalex.org/A5023888391"."""
    found = _AUTHOR_ID.fullmatch(text.strip())
    return found.group(1).upper() if found else None


def work_id(text: str | None) -> str | None:
    found = _WORK_ID.fullmatch((text or "").strip())
    return found.group(1).upper() if found else None


def abstract_text(inverted: object) -> str:
    """The abstract from OpenAlex's inverted index: each word put back at its positions."""
    if not isinstance(inverted, dict):
        return ""
    placed: dict[int, str] = {}
    for word, positions in inverted.items():
        for position in positions if isinstance(positions, list) else ():
            if isinstance(position, int) and 0 <= position < 100_000:
                placed[position] = word
    return clean_space(" ".join(placed[p] for p in sorted(placed)))


class OpenAlex:
    def __init__(self, base: str, fetcher: Fetcher, contact: str | None = None):
        self.base = base.rstrip("/")
        self.fetcher = fetcher
        self.mailto = contact if contact and "@" in contact else None

    # --- authors --------------------------------------------------------------------------

    def authors(self, name: str) -> list[Author]:
        """The people OpenAlex has under this name, most works first."""
        body = self._json(self._url("/authors", search=name, **{"per-page": AUTHORS_SHOWN}))
        return [_author(row) for row in _results(body, "/authors")]

    def author(self, author: str) -> Author | None:
        """One author by id; None when OpenAlex does not know it (404)."""
        try:
            return _author(self._json(self._url(f"/authors/{author}")))
        except FetchError as problem:
            if "HTTP 404" in str(problem):
                return None
            raise

    # --- works ----------------------------------------------------------------------------

    def works(self, filters: str, limit: int) -> Iterator[Work]:
        """Every work matching `filters` (OpenAlex's filter syntax), page by page with the
        cursor, up to `limit`. Should OpenAlex refuse cursor paging without an API key
        (401), the rest is read by page number (keyless, up to PAGE_PAGING_MAX works)."""
        cursor: str | None = "*"
        seen = 0
        while cursor and seen < limit:
            try:
                body = self._json(self._url("/works", filter=filters, cursor=cursor, **{"per-page": PER_PAGE}))
            except FetchError as problem:
                if "HTTP 401" not in str(problem):
                    raise
                yield from self._numbered(filters, seen, min(limit, PAGE_PAGING_MAX))
                return
            rows = _results(body, "/works")
            for row in rows[: limit - seen]:
                work = _work(row)
                if work is not None:
                    yield work
            seen += len(rows)
            meta = body.get("meta") if isinstance(body, dict) else None
            following = meta.get("next_cursor") if isinstance(meta, dict) and rows else None
            cursor = following if isinstance(following, str) else None

    def _numbered(self, filters: str, seen: int, limit: int) -> Iterator[Work]:
        """Basic paging (page=1, 2 ...) from the `seen`-th work on."""
        page = seen // PER_PAGE + 1
        while seen < limit:
            rows = _results(self._json(self._url("/works", filter=filters, page=page, **{"per-page": PER_PAGE})),
                            "/works")
            for row in rows[: limit - seen]:
                work = _work(row)
                if work is not None:
                    yield work
            seen += len(rows)
            if len(rows) < PER_PAGE:
                return
            page += 1

    def by_author(self, author: str, since: date, limit: int) -> Iterator[Work]:
        return self.works(f"authorships.author.id:{author},from_publication_date:{since.isoformat()}", limit)

    def citing(self, cited: list[str], since: date, limit: int) -> Iterator[Work]:
        """Works citing any of `cited` (OpenAlex ids), OR_MAX ids a request."""
        for start in range(0, len(cited), OR_MAX):
            chunk = "|".join(cited[start : start + OR_MAX])
            yield from self.works(f"cites:{chunk},from_publication_date:{since.isoformat()}", limit)

    def resolve(self, dois: list[str]) -> dict[str, str]:
        """{doi (lower case): OpenAlex work id} for the DOIs OpenAlex knows (an arXiv
        paper is known by its DataCite DOI, 10.48550/arxiv.ID)."""
        found: dict[str, str] = {}
        for start in range(0, len(dois), OR_MAX):
            chunk = "|".join(dois[start : start + OR_MAX])
            url = self._url("/works", filter=f"doi:{chunk}", select="id,doi", **{"per-page": OR_MAX})
            for row in _results(self._json(url), "/works"):
                doi, wid = _doi(row.get("doi")), work_id(row.get("id"))
                if doi and wid:
                    found[doi] = wid
        return found

    # --- plumbing -------------------------------------------------------------------------

    def _url(self, path: str, **params: str | int) -> str:
        if self.mailto:
            params["mailto"] = self.mailto
        return f"{self.base}{path}?{urlencode(params, safe=':,|*')}"

    def _json(self, url: str) -> object:
        """The answer as parsed JSON, of whatever shape OpenAlex gave it: the readers check."""
        body = self.fetcher.get(url)
        try:
            return json.loads(body)
        except (UnicodeDecodeError, ValueError):
            raise OpenAlexError(f"{url}: OpenAlex answered something that is not JSON ({body[:60]!r})") from None


def _results(body: object, what: str) -> list[dict[str, Any]]:
    rows = body.get("results") if isinstance(body, dict) else None
    if not isinstance(rows, list):
        raise OpenAlexError(f"OpenAlex {what}: the answer has no list of results")
    return [row for row in rows if isinstance(row, dict)]


def _author(row: object) -> Author:
    if not isinstance(row, dict) or (found := author_id(str(row.get("id", "")))) is None:
        raise OpenAlexError("OpenAlex /authors: an author without an id")
    places = row.get("last_known_institutions") or []
    place = places[0].get("display_name", "") if places and isinstance(places[0], dict) else ""
    # A follow's label is the author's name: display-safe, as a paper's authors are (the
    # id, should nothing else be left of it).
    name = safe_line(clean_space(str(row.get("display_name") or ""))) or found
    return Author(found, name, safe_line(clean_space(str(place or ""))), int(row.get("works_count") or 0))


def _work(row: dict[str, Any]) -> Work | None:
    """A work as a record; None for one without an id or a title (nothing to show)."""
    wid = work_id(row.get("id"))
    title = clean_space(str(row.get("title") or row.get("display_name") or ""))
    if not wid or not title:
        return None
    given = identifiers.parse(row["doi"]) if isinstance(row.get("doi"), str) else None
    ids = dict([given]) if given else {}  # an arXiv DOI is the arxiv id (bot.corpus.identifiers)
    arxiv = _arxiv_location(row)
    if arxiv:
        ids.setdefault(identifiers.ARXIV, arxiv)
    source = ((row.get("primary_location") or {}).get("source") or {})
    published = _date(row.get("publication_date"))
    record = PaperRecord(
        title=title,
        authors=[clean_space(str((a.get("author") or {}).get("display_name") or ""))
                 for a in row.get("authorships") or [] if isinstance(a, dict)],
        abstract=abstract_text(row.get("abstract_inverted_index")),
        url=row.get("doi") or (row.get("primary_location") or {}).get("landing_page_url") or row.get("id"),
        external_ids=identifiers.normalise_ids(ids),
        venue=clean_space(str(source.get("display_name") or "")) or None,
        year=row.get("publication_year") if isinstance(row.get("publication_year"), int) else None,
    )
    record.authors = [a for a in record.authors if a]
    cites = [w for w in map(work_id, row.get("referenced_works") or []) if w]
    return Work(wid, record, published, cites)


def _doi(url: str | None) -> str | None:
    parsed = identifiers.parse(url) if url else None
    if parsed is None:
        return None
    scheme, value = parsed
    return value if scheme == identifiers.DOI else f"10.48550/arxiv.{value}"


def _arxiv_location(row: dict[str, Any]) -> str | None:
    """The arXiv id of the work's arXiv copy, when one of its locations is on arXiv: the
    preprint and the published paper are then one paper in the library too."""
    for location in row.get("locations") or []:
        for key in ("landing_page_url", "pdf_url"):
            url = (location or {}).get(key) if isinstance(location, dict) else None
            parsed = identifiers.parse(url) if url and "arxiv.org" in url else None
            if parsed and parsed[0] == identifiers.ARXIV:
                return parsed[1]
    return None


def _date(text: object) -> date | None:
    try:
        return date.fromisoformat(str(text)) if text else None
    except ValueError:
        return None

"""OpenAlex's works and authors API, as the follows read it.

Works come back as JSON pages (`results`, and `meta.next_cursor` for cursor paging);
ids are URLs (https://openalex.org/W...), DOIs are https://doi.org/... URLs, and the
abstract is an inverted index (word -> positions) that bot.follows.answers turns back
into text. OpenAlex asks for a contact in `mailto` (its polite pool): PAPERCLUB_FEED_CONTACT,
when it is an e-mail address. Every request goes through the polite fetcher
(bot.corpus.fetch): User-Agent, per-host spacing, Retry-After on 429/503, time and size
caps. Every answer is read by bot.follows.answers, which checks its shape: a bad work
comes out as a `Skip`, a bad answer as an `OpenAlexError`. Nothing here touches the
database.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import date
from urllib.parse import urlencode

from bot.corpus.fetch import Fetcher, FetchError, OutOfTime, json_answer
from bot.follows import answers
from bot.follows.answers import Author, OpenAlexError, Skip, Work

log = logging.getLogger(__name__)

PER_PAGE = 200  # OpenAlex's largest page
OR_MAX = 50  # values joined with | in one filter
PAGE_PAGING_MAX = 10_000  # works basic paging reaches without a key
PAGES_MAX = 10  # pages per request at most: a cursor that never ends, or pages of one work, stop here
OLDEST_FIRST = "publication_date:asc"  # so a fetch cut short can resume from the last day it read
AUTHORS_SHOWN = 8


class OpenAlex:
    def __init__(self, base: str, fetcher: Fetcher, contact: str | None = None):
        self.base = base.rstrip("/")
        self.fetcher = fetcher
        self.mailto = contact if contact and "@" in contact else None

    # --- authors --------------------------------------------------------------------------

    def authors(self, name: str) -> list[Author]:
        """The people OpenAlex has under this name, most works first. One it answered
        badly is left out (and logged); if all were, OpenAlexError says why."""
        found: list[Author] = []
        problem: OpenAlexError | None = None
        for row in answers.results(self._json(self._url("/authors", search=name, **{"per-page": AUTHORS_SHOWN})),
                                   "/authors"):
            try:
                found.append(answers.author(row))
            except OpenAlexError as bad:
                log.warning("OpenAlex /authors?search: left out an author: %s", bad.reason)
                problem = problem or bad
        if problem and not found:
            raise problem
        return found

    def author(self, author: str) -> Author | None:
        """One author by id; None when OpenAlex does not know it (404)."""
        try:
            return answers.author(self._json(self._url(f"/authors/{author}")))
        except OpenAlexError:
            raise
        except FetchError as problem:
            if "HTTP 404" in str(problem):
                return None
            raise

    # --- works ----------------------------------------------------------------------------

    def works(self, filters: str, limit: int, deadline: float | None = None) -> Iterator[Work | Skip]:
        """Every work matching `filters` (OpenAlex's filter syntax), oldest first, page by
        page with the cursor, up to `limit`, each a Work or a Skip (why it was left out).
        After PAGES_MAX pages, or when `deadline` (time.monotonic()) comes, OutOfTime is
        raised after the works read so far. Should OpenAlex refuse cursor paging without
        an API key (401), the rest is read by page number (keyless, up to PAGE_PAGING_MAX
        works)."""
        cursor: str | None = "*"
        seen = 0
        for _page in range(PAGES_MAX):
            if not cursor or seen >= limit:
                return
            try:
                body = self._json(self._url("/works", filter=filters, sort=OLDEST_FIRST, cursor=cursor,
                                            **{"per-page": PER_PAGE}), deadline)
            except OpenAlexError:
                raise
            except OutOfTime:
                raise
            except FetchError as problem:
                if "HTTP 401" not in str(problem):
                    raise
                yield from self._numbered(filters, seen, min(limit, PAGE_PAGING_MAX), deadline)
                return
            rows = _page_rows(body)
            yield from _works(rows[: limit - seen], seen)
            seen += len(rows)
            cursor = answers.next_cursor(body) if rows else None
        if cursor and seen < limit:
            raise OutOfTime(f"OpenAlex /works?filter={filters[:80]}: stopped after {PAGES_MAX} pages")

    def _numbered(self, filters: str, seen: int, limit: int, deadline: float | None) -> Iterator[Work | Skip]:
        """Basic paging (page=1, 2 ...) from the `seen`-th work on."""
        page = seen // PER_PAGE + 1
        for _page in range(PAGES_MAX):
            if seen >= limit:
                return
            rows = _page_rows(self._json(self._url("/works", filter=filters, sort=OLDEST_FIRST, page=page,
                                                   **{"per-page": PER_PAGE}), deadline))
            yield from _works(rows[: limit - seen], seen)
            seen += len(rows)
            if len(rows) < PER_PAGE:
                return
            page += 1
        if seen < limit:
            raise OutOfTime(f"OpenAlex /works?filter={filters[:80]}: stopped after {PAGES_MAX} pages")

    def by_author(self, author: str, since: date, limit: int, deadline: float | None = None) -> Iterator[Work | Skip]:
        return self.works(f"authorships.author.id:{author},from_publication_date:{since.isoformat()}", limit,
                          deadline)

    def citing(self, cited: list[str], since: date, limit: int,
               deadline: float | None = None) -> Iterator[Work | Skip]:
        """Works citing any of `cited` (OpenAlex ids), OR_MAX ids a request."""
        for start in range(0, len(cited), OR_MAX):
            chunk = "|".join(cited[start : start + OR_MAX])
            yield from self.works(f"cites:{chunk},from_publication_date:{since.isoformat()}", limit, deadline)

    def resolve(self, dois: list[str]) -> dict[str, str]:
        """{doi (lower case): OpenAlex work id} for the DOIs OpenAlex knows (an arXiv
        paper is known by its DataCite DOI, 10.48550/arxiv.ID)."""
        found: dict[str, str] = {}
        for start in range(0, len(dois), OR_MAX):
            chunk = "|".join(dois[start : start + OR_MAX])
            url = self._url("/works", filter=f"doi:{chunk}", select="id,doi", **{"per-page": OR_MAX})
            for row in answers.results(self._json(url), "/works"):
                pair = answers.resolved(row)
                if pair:
                    found[pair[0]] = pair[1]
        return found

    # --- plumbing -------------------------------------------------------------------------

    def _url(self, path: str, **params: str | int) -> str:
        if self.mailto:
            params["mailto"] = self.mailto
        return f"{self.base}{path}?{urlencode(params, safe=':,|*')}"

    def _json(self, url: str, deadline: float | None = None) -> object:
        """The answer as parsed JSON, of whatever shape OpenAlex gave it: bot.follows.answers checks."""
        body = self.fetcher.get(url, deadline)
        try:
            return json_answer(body)
        except ValueError as problem:
            reason = f"the answer is {problem}" if str(problem).startswith("not ") else str(problem)
            raise OpenAlexError(f"{url}: OpenAlex answered something that is not JSON it can read: {problem} "
                                f"({body[:60]!r})", reason) from None


def _page_rows(body: object) -> list[object]:
    """A page's works; more than a page holds is not a page (refused before reading one)."""
    rows = answers.results(body, "/works")
    if len(rows) > PER_PAGE:
        raise OpenAlexError(f"OpenAlex answered a page of {len(rows):,} works, when {PER_PAGE} were asked for",
                            f"a page of {len(rows):,} works")
    return rows


def _works(rows: list[object], seen: int) -> Iterator[Work | Skip]:
    for place, row in enumerate(rows, seen + 1):
        found = answers.work(row, place)
        if found is not None:
            yield found

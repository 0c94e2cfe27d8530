"""OpenAlex's works, asked for by title: several papers' titles in one request, and each
work read by shape before anything uses it.

One request asks for up to TITLES_MOST titles at once, each as a quoted phrase of its
normalised words, joined by OR in a `title.search` filter
(`filter=title.search:"net dnf effective deep modeling of tabular data" OR "..."`), with
only the fields the enrichment reads (`select`) and a page of PER_PAGE works: ten times
fewer requests than one a paper, and a list request rather than one search each, as
OpenAlex asks of heavy users. A request URL stays within URL_MOST characters (OpenAlex
refuses one past about 4,000). An answer that holds fewer works than OpenAlex counted
(`meta.count`) was cut at the page: a title that found nothing in it is asked alone
later, not taken as unknown. Requests go through the polite fetcher (User-Agent,
spacing, Retry-After, deadlines, size caps, stop()); OpenAlex's `mailto` is
PAPERCLUB_FEED_CONTACT when it is an e-mail address.

A work with a field of the wrong shape is skipped with why (`Answer.skipped`); an answer
that is not a page of works at all is an `AnswerError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from bot.corpus import answer_fields as fields
from bot.corpus import identifiers
from bot.corpus.answer_fields import Junk
from bot.corpus.fetch import Fetcher, FetchError, json_answer
from bot.corpus.records import title_key

PER_PAGE = 200  # OpenAlex's largest page
TITLES_MOST = 25  # titles a request asks for
URL_MOST = 3_500  # characters of a request URL
TITLE_MAX = 2_000
NAME_MAX = 1_000
URL_MAX = 2_000
AUTHORS_MAX = 500
LOCATIONS_MAX = 200
SELECT = ("id,doi,display_name,publication_year,authorships,primary_location,best_oa_location,locations,"
          "cited_by_count")
_WORK_ID = re.compile(r"(?:https?://openalex\.org/)?(W\d{1,12})", re.I)
# A source a paper is published in (its venue); a repository (arXiv, Zenodo) is none.
VENUE_TYPES = ("conference", "journal", "book series", "ebook platform")


class AnswerError(FetchError):
    """An answer that is not a page of works; str() says where and why."""


@dataclass(frozen=True)
class Found:
    """One work, as the enrichment reads it."""

    id: str  # W2741809807
    title: str
    key: str  # its normalised title (bot.corpus.records.title_key)
    authors: tuple[str, ...]
    year: int | None
    doi: str | None  # 10.1000/x, lower case
    arxiv: str | None  # 2401.00996: its arXiv DOI (10.48550/arXiv.ID) or an arXiv landing page says it
    link: str | None  # the landing page, else the DOI's URL
    pdf: str | None
    venue: str | None  # the conference or journal, "arXiv" for an arXiv preprint, else None
    cited_by: int | None


@dataclass
class Answer:
    works: list[Found] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (work id or place, why)
    cut: bool = False  # OpenAlex counted more works than the page holds


class TitleSearch:
    def __init__(self, base: str, fetcher: Fetcher, contact: str | None = None):
        self.base = base.rstrip("/")
        self.fetcher = fetcher
        self.mailto = contact if contact and "@" in contact else None

    def url(self, keys: list[str]) -> str:
        """The request for these normalised titles."""
        phrases = " OR ".join(f'"{key}"' for key in keys)
        params: dict[str, str | int] = {"filter": f"title.search:{phrases}", "select": SELECT,
                                        "per-page": PER_PAGE}
        if self.mailto:
            params["mailto"] = self.mailto
        return f"{self.base}/works?{urlencode(params, safe=':,')}"

    def batches(self, keys: list[str], most: int = TITLES_MOST) -> list[list[str]]:
        """The titles cut into requests: at most `most` a request, each URL within URL_MOST."""
        out: list[list[str]] = []
        for key in keys:
            if out and len(out[-1]) < most and len(self.url([*out[-1], key])) <= URL_MOST:
                out[-1].append(key)
            else:
                out.append([key])
        return out

    def ask(self, keys: list[str], deadline: float | None = None) -> Answer:
        """The works whose titles hold any of these phrases (FetchError, OutOfTime or
        AnswerError otherwise)."""
        url = self.url(keys)
        body = self.fetcher.get(url, deadline)
        try:
            page = json_answer(body)
        except ValueError as problem:
            raise AnswerError(f"OpenAlex /works?filter=title.search: {problem} ({body[:60]!r})") from None
        return read_page(page)


def read_page(page: object) -> Answer:
    """A page of works: each read (or skipped, with why), and whether it was cut."""
    if not isinstance(page, dict) or not isinstance(page.get("results"), list):
        raise AnswerError(f"OpenAlex /works answered {fields.kind(page)} without a list of results")
    rows = page["results"]
    if len(rows) > PER_PAGE:
        raise AnswerError(f"OpenAlex /works answered a page of {len(rows):,} works, when {PER_PAGE} were asked for")
    answer = Answer()
    meta = page.get("meta")
    count = meta.get("count") if isinstance(meta, dict) else None
    answer.cut = isinstance(count, int) and fields.is_whole(count) and count > len(rows)
    for place, row in enumerate(rows, 1):
        try:
            answer.works.append(read_work(row))
        except Junk as junk:
            work = _WORK_ID.search(str(row.get("id"))) if isinstance(row, dict) else None
            answer.skipped.append((work.group(1) if work else f"work {place}", str(junk)))
    return answer


def read_work(row: object) -> Found:
    """One work, or Junk naming the field that was wrong."""
    if not isinstance(row, dict):
        raise Junk(f"the work is {fields.kind(row)}, not an object")
    found = _WORK_ID.fullmatch((fields.text(row, "id", 100) or "").strip())
    if found is None:
        raise Junk("id is not an OpenAlex work id")
    title = " ".join((fields.text(row, "display_name", TITLE_MAX) or "").split())
    if not title:
        raise Junk("display_name (the title) is empty")
    year = fields.whole(row, "publication_year")
    if year is not None and not 1000 <= year <= 2200:
        raise Junk(f"publication_year {year} is not a year")
    cited = fields.whole(row, "cited_by_count", least=0)
    doi_text = fields.text(row, "doi", URL_MAX)
    parsed = identifiers.parse(doi_text) if doi_text else None
    doi = parsed[1] if parsed and parsed[0] == "doi" else None
    primary = _location(row, "primary_location")
    best = _location(row, "best_oa_location")
    places = [p for p in (primary, *(_location({"l": x}, "l") for x in _listed(row, "locations", LOCATIONS_MAX)))
              if p is not None]
    arxiv = parsed[1] if parsed and parsed[0] == "arxiv" else _arxiv(places)
    link = (_url(primary, "landing_page_url") if primary else None) or (f"https://doi.org/{doi}" if doi else None)
    pdf = (_url(best, "pdf_url") if best else None) or (_url(primary, "pdf_url") if primary else None)
    return Found(found.group(1).upper(), title, title_key(title), _authors(row), year, doi, arxiv, link, pdf,
                 _venue(places), cited)


def _arxiv(places: list[dict[str, Any]]) -> str | None:
    """The arXiv id an arXiv landing page among the work's places names."""
    for place in places:
        url = _url(place, "landing_page_url")
        parsed = identifiers.parse(url) if url and "arxiv.org/" in url.lower() else None
        if parsed and parsed[0] == "arxiv":
            return parsed[1]
    return None


def _listed(row: dict[str, Any], name: str, most: int) -> list[Any]:
    values = fields.listed(row, name)
    if len(values) > most:
        raise Junk(f"{name} lists {len(values):,}, at most {most:,} are read")
    return values


def _location(row: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = row.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise Junk(f"{name} is {fields.kind(value)}, not an object")
    return value


def _url(location: dict[str, Any], name: str) -> str | None:
    url = fields.text(location, name, URL_MAX, "a location's ")
    return url.strip() if url and url.strip().lower().startswith(("https://", "http://")) else None


def _venue(places: list[dict[str, Any]]) -> str | None:
    """The first place's conference or journal; "arXiv" when the work is only on arXiv."""
    on_arxiv = False
    for place in places:
        source = _location(place, "source")
        if source is None:
            continue
        name = " ".join((fields.text(source, "display_name", NAME_MAX, "a source's ") or "").split())
        kind = (fields.text(source, "type", 100, "a source's ") or "").lower()
        if name and kind in VENUE_TYPES:
            return name
        on_arxiv = on_arxiv or name.lower().startswith("arxiv")
    return "arXiv" if on_arxiv else None


def _authors(row: dict[str, Any]) -> tuple[str, ...]:
    names = []
    for ship in _listed(row, "authorships", AUTHORS_MAX):
        if not isinstance(ship, dict):
            raise Junk(f"an authorship is {fields.kind(ship)}, not an object")
        author = _location(ship, "author")
        name = (fields.text(author, "display_name", NAME_MAX, "an author's ") if author else None) or \
            fields.text(ship, "raw_author_name", NAME_MAX)
        if name and name.strip():
            names.append(" ".join(name.split()))
    return tuple(names)

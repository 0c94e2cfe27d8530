"""A fake OpenAlex API on 127.0.0.1, in its JSON: /works with the filters the follows
and the enrichment send (authorships.author.id, cites, doi, from_publication_date; values
joined by |; title.search with quoted phrases joined by OR),
cursor paging (cursor=*, then meta.next_cursor, null at the end; per-page), select;
/authors?search=NAME and /authors/A...; ids as https://openalex.org/... URLs, DOIs as
https://doi.org/... URLs, abstracts as inverted indexes. `mailtos` lists the mailto
parameters received. A work's or an author's `changes` replace fields of its JSON, for
the junk a bad day brings (a string where an object belongs, a NUL in a title).

`demo_works()` are the works of the bundled demo corpus (bot/demo_corpus, bot/demo_extras)
as OpenAlex would know them: landing pages, PDFs, DOIs, years, venues, citation counts,
with decoys beside them (the same title by other people) and titles written in another
case and punctuation, so that what matches them is really tested. `paperclub sandbox`
serves them."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from adapters.fakes.http import Answer, FakeServer
from bot.corpus.records import title_key

OPENALEX = "https://openalex.org/"


@dataclass
class FakeAuthor:
    id: str  # A5023888391
    name: str
    institution: str = ""
    works_count: int = 10
    changes: dict[str, Any] = field(default_factory=dict)  # fields answered as given (a bad day's junk)

    def json(self) -> dict:
        places = [{"id": f"{OPENALEX}I1", "display_name": self.institution}] if self.institution else []
        return {"id": OPENALEX + self.id, "display_name": self.name, "works_count": self.works_count,
                "cited_by_count": 100, "last_known_institutions": places, "orcid": None, **self.changes}


@dataclass
class FakeWork:
    id: str  # W2741809807
    title: str
    abstract: str = ""
    published: str = "2026-11-25"
    authors: list[FakeAuthor] = field(default_factory=list)
    doi: str | None = None  # 10.1000/x (an arXiv paper: 10.48550/arxiv.ID)
    arxiv: str | None = None  # an arXiv location: 2611.01234
    cites: list[str] = field(default_factory=list)  # W ids
    changes: dict[str, Any] = field(default_factory=dict)  # fields answered as given (a bad day's junk)
    # Where it is published (its primary location, before an arXiv one): a venue with its
    # source type ("conference", "journal"), a landing page and a PDF.
    venue: str | None = None
    venue_type: str = "conference"
    landing: str | None = None
    pdf: str | None = None
    cited_by: int = 0

    def json(self) -> dict:
        locations = [{"is_oa": True, "landing_page_url": f"https://arxiv.org/abs/{self.arxiv}",
                      "pdf_url": f"https://arxiv.org/pdf/{self.arxiv}",
                      "source": {"display_name": "arXiv (Cornell University)", "type": "repository"}}
                     ] if self.arxiv else []
        if self.venue or self.landing:
            source = {"display_name": self.venue, "type": self.venue_type} if self.venue else None
            locations.insert(0, {"is_oa": bool(self.pdf), "landing_page_url": self.landing, "pdf_url": self.pdf,
                                 "source": source})
        best = next((place for place in locations if place["pdf_url"]), None)
        return {
            "id": OPENALEX + self.id,
            "doi": f"https://doi.org/{self.doi}" if self.doi else None,
            "title": self.title,
            "display_name": self.title,
            "publication_year": int(self.published[:4]),
            "publication_date": self.published,
            "ids": {"openalex": OPENALEX + self.id, **({"doi": f"https://doi.org/{self.doi}"} if self.doi else {})},
            "type": "article",
            "authorships": [{"author_position": "first" if i == 0 else "middle",
                             "author": {"id": OPENALEX + a.id, "display_name": a.name, "orcid": None},
                             "institutions": [], "raw_author_name": a.name} for i, a in enumerate(self.authors)],
            "primary_location": locations[0] if locations else {"landing_page_url": None, "source": None},
            "best_oa_location": best,
            "locations": locations,
            "abstract_inverted_index": inverted(self.abstract) if self.abstract else None,
            "referenced_works": [OPENALEX + w for w in self.cites],
            "cited_by_count": self.cited_by,
            **self.changes,
        }


def inverted(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


class FakeOpenAlex(FakeServer):
    def __init__(self, works: list[FakeWork] | None = None, authors: list[FakeAuthor] | None = None):
        self.works = list(works or [])
        self.authors = list(authors or [])
        self.cursor_needs_key = False  # answer cursor paging with 401, as OpenAlex may without an API key
        self.page_most: int | None = None  # answer at most this many works a page, whatever was asked
        self.endless = False  # cursor paging never ends: one new work a page, a next cursor every time
        super().__init__(self.answer)

    @property
    def mailtos(self) -> list[str]:
        return [params["mailto"][0] for _, params in self.requests if "mailto" in params]

    def filters(self) -> list[str]:
        return [params["filter"][0] for path, params in self.requests if path == "/works" and "filter" in params]

    def answer(self, path: str, params: dict[str, list[str]]) -> Answer:
        if path == "/works":
            return self._works(params)
        if path == "/authors":
            words = params.get("search", [""])[0].lower().split()
            found = [a for a in self.authors if all(w in a.name.lower() for w in words)]
            found.sort(key=lambda a: -a.works_count)
            per_page = int(params.get("per-page", ["25"])[0])
            return _json({"meta": {"count": len(found), "page": 1, "per_page": per_page},
                          "results": [a.json() for a in found[:per_page]], "group_by": []})
        if path.startswith("/authors/"):
            key = path.rsplit("/", 1)[1].upper()
            author = next((a for a in self.authors if a.id == key), None)
            if author is None:
                return 404, "application/json", json.dumps({"error": "Not Found"}).encode()
            return _json(author.json())
        return 404, "application/json", b'{"error": "Not Found"}'

    def _works(self, params: dict[str, list[str]]) -> Answer:
        try:
            found = [w for w in self.works if _matches(w, params.get("filter", [""])[0])]
        except ValueError as problem:  # OpenAlex refuses a filter it does not know
            return 403, "application/json", json.dumps({"error": str(problem)}).encode()
        sort = params.get("sort", [""])[0]
        if sort:  # publication_date or publication_date:asc / :desc, as OpenAlex takes it
            field_name, _, order = sort.partition(":")
            if field_name != "publication_date" or order not in ("", "asc", "desc"):
                return 403, "application/json", json.dumps({"error": f"{sort} is not a valid sort"}).encode()
            found.sort(key=lambda w: w.published, reverse=order == "desc")
        per_page = int(params.get("per-page", ["25"])[0])
        if not 1 <= per_page <= 200:
            return 400, "application/json", b'{"error": "per-page must be between 1 and 200"}'
        cursor = params.get("cursor", [None])[0]
        if cursor is not None and self.endless:
            return self._endless(cursor)
        if cursor is not None and self.cursor_needs_key:
            return 401, "application/json", b'{"error": "Cursor paging requires an API key"}'
        per_page = min(per_page, self.page_most or per_page)
        page_number = int(params.get("page", ["1"])[0])
        if cursor is None:  # basic paging
            offset = (page_number - 1) * per_page
        else:
            offset = 0 if cursor == "*" else int(base64.urlsafe_b64decode(cursor.encode()).decode())
        page = found[offset:offset + per_page]
        more = cursor is not None and offset + per_page < len(found)
        next_cursor = base64.urlsafe_b64encode(str(offset + per_page).encode()).decode() if more else None
        rows = [w.json() for w in page]
        if "select" in params:
            keep = params["select"][0].split(",")
            rows = [{k: row[k] for k in keep if k in row} for row in rows]
        return _json({"meta": {"count": len(found), "db_response_time_ms": 3,
                               "page": None if cursor is not None else page_number,
                               "per_page": per_page, "next_cursor": next_cursor, "groups_count": None},
                      "results": rows, "group_by": []})


    def _endless(self, cursor: str) -> Answer:
        step = 0 if cursor == "*" else int(base64.urlsafe_b64decode(cursor.encode()).decode())
        work = FakeWork(f"W8{step:09d}", f"Endless work {step}", "x", "2026-11-25", self.authors[:1])
        next_cursor = base64.urlsafe_b64encode(str(step + 1).encode()).decode()
        return _json({"meta": {"count": 10**9, "db_response_time_ms": 3, "page": None, "per_page": 1,
                               "next_cursor": next_cursor, "groups_count": None},
                      "results": [work.json()], "group_by": []})


def _matches(work: FakeWork, filters: str) -> bool:
    for part in filter(None, filters.split(",")):
        key, _, value = part.partition(":")
        options = value.split("|")
        if key in ("authorships.author.id", "author.id"):
            if not {a.id for a in work.authors} & {o.rsplit("/", 1)[-1].upper() for o in options}:
                return False
        elif key == "cites":
            if not set(work.cites) & {o.rsplit("/", 1)[-1].upper() for o in options}:
                return False
        elif key == "doi":
            wanted = {o.lower().removeprefix("https://doi.org/") for o in options}
            if not work.doi or work.doi.lower() not in wanted:
                return False
        elif key == "from_publication_date":
            if work.published < value:
                return False
        elif key in ("title.search", "display_name.search"):
            if not _title_holds(work.title, value):
                return False
        else:
            raise ValueError(f"the fake does not know the filter {key!r}")
    return True


def _title_holds(title: str, query: str) -> bool:
    """OpenAlex's title.search, as far as the enrichment asks it: "a phrase" OR "another",
    each phrase's words one after another in the title (case and punctuation aside)."""
    words = f" {_key(title)} "
    return any(f" {phrase} " in words for phrase in _phrases(query))


_key = lru_cache(maxsize=100_000)(title_key)  # a fake of a thousand works asked fifty times


@lru_cache(maxsize=1_000)
def _phrases(query: str) -> tuple[str, ...]:
    return tuple(filter(None, map(_key, re.findall(r'"([^"]*)"', query) or [query])))


# --- the demo corpus as OpenAlex knows it ---------------------------------------------------

ICLR = "International Conference on Learning Representations"
DECOY_EVERY = 5  # every fifth paper with authors has a decoy: its title, by other people
RESPELT_EVERY = 7  # every seventh work's title is written in another case and punctuation


def demo_works() -> list[FakeWork]:
    """Every paper of the bundled demo corpus as OpenAlex would know it, and its decoys."""
    from adapters.cli.commands import DEMO_COLLECTIONS, DEMO_EXTRAS, demo_listing
    from bot.corpus.readers import read_path

    bundled = resources.files("bot")
    files = [(bundled / "demo_corpus", name, collection) for name, collection in DEMO_COLLECTIONS.items()]
    files += [(bundled / "demo_extras", name, collection) for name, collection in DEMO_EXTRAS.items()]
    works: list[FakeWork] = []
    seen: set[str] = set()
    for folder, name, collection in files:
        with resources.as_file(folder / name) as path:
            _fmt, records = read_path(path)
        listing = demo_listing(name)
        if listing:
            listing.fill(records)
        for record in records:
            key = title_key(record.title)
            if record.title_derived or not key or key in seen:
                continue
            seen.add(key)
            works += _demo_work(len(seen), record, collection)
    return works


def _demo_work(n: int, record, collection: str) -> list[FakeWork]:
    """The work of the demo's n-th paper, and a decoy when it is one of every DECOY_EVERY."""
    authors = [FakeAuthor(f"A9{n:05d}{i:02d}", name) for i, name in enumerate(record.authors)]
    title = record.title
    if n % RESPELT_EVERY == 0:  # "How Do Vision Transformers Work?" -> "HOW DO VISION TRANSFORMERS WORK"
        title = re.sub(r"[?:!.]", " ", title).upper()
    year = record.year or 2024
    if collection == "trending":  # arXiv preprints: a repository, no conference
        arxiv = f"{year % 100:02d}{(n % 12) + 1:02d}.{n:05d}"
        work = FakeWork(f"W41{n:08d}", title, published=f"{year}-03-01", authors=authors,
                        doi=f"10.48550/arxiv.{arxiv}", arxiv=arxiv, cited_by=(n * 37) % 400)
        return [work]
    venue = record.venue if collection == "reading-list" and record.venue else ICLR
    forum = f"demo{n:05d}"
    work = FakeWork(f"W41{n:08d}", title, published=f"{year}-05-04", authors=authors, doi=f"10.5555/paperclub.{n}",
                    venue=venue, landing=f"https://openreview.net/forum?id={forum}",
                    pdf=f"https://openreview.net/pdf?id={forum}", cited_by=(n * 37) % 900)
    if not record.authors or n % DECOY_EVERY:
        return [work]
    others = [FakeAuthor(f"A8{n:05d}{i:02d}", f"{first} Decoy{n}") for i, first in enumerate(("Alex", "Sam"))]
    decoy = FakeWork(f"W42{n:08d}", record.title, published=f"{year}-01-10", authors=others,
                     doi=f"10.5555/decoy.{n}", venue="Journal of Decoys", venue_type="journal",
                     landing=f"https://example.org/decoy/{n}", cited_by=100_000)
    return [work, decoy]


def _json(body) -> Answer:
    return 200, "application/json", json.dumps(body).encode()

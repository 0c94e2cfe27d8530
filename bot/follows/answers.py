"""OpenAlex's answers, checked by shape before anything uses them: the one place that reads
OpenAlex's JSON.

Each field a follow uses is checked for its type (a string, a whole number, an object, a
list of strings) and its size, and a work becomes a clean record (one the library can
store: bot.corpus.records.check_record) or a `Skip` saying which field was wrong and why.
One bad work is skipped, not fatal: a NUL in a title, a string where an object belongs or
a title of millions of characters costs that work, not the follow's day. An answer that
is wrong as a whole (no list of results, an author without an id) is an `OpenAlexError`
whose `reason` a member can read. Absent fields and nulls are what OpenAlex sends for
what it does not know, and read as nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from bot.corpus import answer_fields as fields
from bot.corpus import identifiers
from bot.corpus.answer_fields import Junk
from bot.corpus.display_safe import safe_line
from bot.corpus.fetch import FetchError
from bot.corpus.records import CorpusFormatError, PaperRecord, check_record, clean_space

TITLE_MAX = 2_000  # characters; a longer "title" is an abstract or junk (the library keeps 512 of its key)
NAME_MAX = 1_000  # an author's or a venue's name
URL_MAX = 2_000
ABSTRACT_MAX = 100_000  # characters of the rebuilt abstract
POSITIONS_MAX = 100_000  # words of an inverted abstract
_AUTHOR_ID = re.compile(r"(?:https?://openalex\.org/)?(A\d{1,12})", re.I)
_WORK_ID = re.compile(r"(?:https?://openalex\.org/)?(W\d{1,12})", re.I)


class OpenAlexError(FetchError):
    """An answer OpenAlex gave that cannot be read. str(): where and why, for the log;
    `reason`: why, for a member."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or message



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


@dataclass(frozen=True)
class Skip:
    """A work left out: its id (or its place in the answer) and why."""

    id: str
    reason: str


def author_id(text: str) -> str | None:
    """A5023888391 from "A5023888391" or "https://openalex.org/A5023888391"."""
    found = _AUTHOR_ID.fullmatch(text.strip())
    return found.group(1).upper() if found else None


def work_id(text: str | None) -> str | None:
    found = _WORK_ID.fullmatch((text or "").strip())
    return found.group(1).upper() if found else None


# --- whole answers --------------------------------------------------------------------------


def results(body: object, what: str) -> list[object]:
    """The `results` of a list answer (/works, /authors): each still to be checked."""
    rows = body.get("results") if isinstance(body, dict) else None
    if not isinstance(rows, list):
        raise OpenAlexError(f"OpenAlex {what}: the answer has no list of results", "the answer has no list of results")
    return rows


def next_cursor(body: object) -> str | None:
    meta = body.get("meta") if isinstance(body, dict) else None
    following = meta.get("next_cursor") if isinstance(meta, dict) else None
    return following if isinstance(following, str) and 0 < len(following) <= URL_MAX else None


# --- authors --------------------------------------------------------------------------------


def author(row: object) -> Author:
    """One author of /authors or /authors/A...; OpenAlexError naming the bad field."""
    try:
        return _author(row)
    except Junk as problem:
        given = row.get("id") if isinstance(row, dict) else None
        who = author_id(given) if isinstance(given, str) else None
        reason = f"{who}: {problem}" if who else str(problem)
        raise OpenAlexError(f"OpenAlex /authors: {reason}", reason) from None


def _author(row: object) -> Author:
    if not isinstance(row, dict):
        raise Junk(f"an author is {fields.kind(row)}, not an object")
    found = author_id(fields.text(row, "id", URL_MAX) or "")
    if found is None:
        raise Junk("an author without an id")
    places = fields.listed(row, "last_known_institutions")
    first = _object_in(places[0], "last_known_institutions") if places else None
    place = fields.text(first, "display_name", NAME_MAX, "last_known_institutions.") if first else None
    works = fields.whole(row, "works_count")
    # A follow's label is the author's name: display-safe, as a paper's authors are.
    # (the id, should nothing else be left of it).
    name = safe_line(clean_space(fields.text(row, "display_name", NAME_MAX) or "")) or found
    return Author(found, name, safe_line(clean_space(place or "")), max(works or 0, 0))


# --- works ----------------------------------------------------------------------------------


def work(row: object, place: int) -> Work | Skip | None:
    """The `place`-th result of a /works page as a work, a skip (why), or None for a work
    with nothing to show (OpenAlex knows no title for it)."""
    if not isinstance(row, dict):
        return Skip(f"result {place}", f"a result is {fields.kind(row)}, not an object")
    given = row.get("id")
    wid = work_id(given) if isinstance(given, str) else None
    if wid is None:
        return Skip(f"result {place}", "a work without an OpenAlex id")
    try:
        return _work(row, wid)
    except Junk as problem:
        return Skip(wid, str(problem))


def resolved(row: object) -> tuple[str, str] | None:
    """(DOI, work id) of a row of a `doi:` look-up (select=id,doi); None for junk."""
    if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("doi"), str):
        return None
    doi, wid = _doi(row["doi"][:URL_MAX]), work_id(row["id"][:URL_MAX])
    return (doi, wid) if doi and wid else None


def _work(row: dict[str, Any], wid: str) -> Work | None:
    title = clean_space(fields.text(row, "title", TITLE_MAX) or fields.text(row, "display_name", TITLE_MAX) or "")
    if not title:
        return None
    doi = fields.text(row, "doi", URL_MAX)
    given = identifiers.parse(doi) if doi else None
    ids = dict([given]) if given else {}  # an arXiv DOI is the arxiv id (bot.corpus.identifiers)
    arxiv = _arxiv_location(row)
    if arxiv:
        ids.setdefault(identifiers.ARXIV, arxiv)
    primary = _object(row, "primary_location")
    source = _object(primary, "source", "primary_location.") if primary else None
    venue = fields.text(source, "display_name", NAME_MAX, "primary_location.source.") if source else None
    landing = fields.text(primary, "landing_page_url", URL_MAX, "primary_location.") if primary else None
    authors = []
    for authorship in fields.listed(row, "authorships"):
        if (entry := _object_in(authorship, "authorships")) is None:
            continue
        person = _object(entry, "author", "authorships.")
        name = fields.text(person, "display_name", NAME_MAX, "authorships.author.") if person else None
        if name and (name := clean_space(name)):
            authors.append(name)
    cites = [w for w in map(work_id, _strings(row, "referenced_works")) if w]
    record = PaperRecord(
        title=title,
        authors=authors,
        abstract=_abstract(row.get("abstract_inverted_index")),
        url=doi or landing or row["id"],
        external_ids=identifiers.normalise_ids(ids),
        venue=clean_space(venue or "") or None,
        year=fields.whole(row, "publication_year"),
    )
    try:
        check_record(record, "OpenAlex")
    except CorpusFormatError as problem:
        raise Junk(problem.message.partition(": ")[2] or problem.message) from None
    return Work(wid, record, _date(fields.text(row, "publication_date", 40)), cites)


def _abstract(inverted: object) -> str:
    """The abstract from OpenAlex's inverted index: each word put back at its positions."""
    if inverted is None:
        return ""
    if not isinstance(inverted, dict):
        raise Junk(f"abstract_inverted_index is {fields.kind(inverted)}, not an object")
    placed: dict[int, str] = {}
    for word, positions in inverted.items():
        if not isinstance(positions, list):
            raise Junk(f"abstract_inverted_index holds {fields.kind(positions)}, not a list of positions")
        for position in positions:
            if not fields.is_whole(position):
                raise Junk(f"abstract_inverted_index holds a position that is {fields.kind(position)}")
            if 0 <= position < POSITIONS_MAX:
                placed[position] = word
    text = clean_space(" ".join(placed[p] for p in sorted(placed)))
    if len(text) > ABSTRACT_MAX:
        raise Junk(f"the abstract is {len(text):,} characters long, at most {ABSTRACT_MAX:,} are read")
    return text


def _arxiv_location(row: dict[str, Any]) -> str | None:
    """The arXiv id of the work's arXiv copy, when one of its locations is on arXiv: the
    preprint and the published paper are then one paper in the library too."""
    for location in fields.listed(row, "locations"):
        if (where := _object_in(location, "locations")) is None:
            continue
        for key in ("landing_page_url", "pdf_url"):
            url = fields.text(where, key, URL_MAX, "locations.")
            parsed = identifiers.parse(url) if url and "arxiv.org" in url else None
            if parsed and parsed[0] == identifiers.ARXIV:
                return parsed[1]
    return None


def _doi(url: str) -> str | None:
    parsed = identifiers.parse(url) if url else None
    if parsed is None:
        return None
    scheme, value = parsed
    return value if scheme == identifiers.DOI else f"10.48550/arxiv.{value}"


def _date(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


# --- fields ---------------------------------------------------------------------------------


def _object(row: dict[str, Any], name: str, where: str = "") -> dict[str, Any] | None:
    value = row.get(name)
    if value is not None and not isinstance(value, dict):
        raise Junk(f"{where}{name} is {fields.kind(value)}, not an object")
    return value


def _object_in(value: object, name: str) -> dict[str, Any] | None:
    """An element of the list `name` that should be an object (null: nothing)."""
    if value is not None and not isinstance(value, dict):
        raise Junk(f"{name} holds {fields.kind(value)}, not an object")
    return value


def _strings(row: dict[str, Any], name: str) -> list[str]:
    values = fields.listed(row, name)
    for value in values:
        if not isinstance(value, str):
            raise Junk(f"{name} holds {fields.kind(value)}, not a string")
        if len(value) > URL_MAX:
            raise Junk(f"{name} holds a string of {len(value):,} characters")
    return values

"""What every corpus reader produces: plain paper records and the one error type.

Readers are pure functions from text to records; storing them is the library's job
(`bot.corpus.importing`). Keeping readers free of the database makes each format testable on
its own and lets a whole file be rejected before anything from it is written.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, String

from bot.corpus.folding import fold
from store.models import Paper, PaperExternalId, PaperSource


@dataclass
class PaperRecord:
    """One paper as a source describes it.

    `line` is the 1-based line where the record starts in its file, so that later
    problems (a duplicate, a bad field) can still be reported as FILE:LINE.
    """

    title: str
    line: int = 1
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    url: str | None = None
    # Identifiers exactly as the source gave them: {"beir": "4983", "arxiv": "2101.00001",
    # "doi": "10.1000/xyz", "openreview": "..."}; the scheme names are lower case.
    external_ids: dict[str, str] = field(default_factory=dict)
    track: str | None = None  # Oral / Spotlight / Poster, or a decision such as "top 5%"
    presentation: str | None = None  # e.g. "In-Person Poster presentation"
    award: str | None = None  # e.g. "Outstanding Paper", "Honorable Mention"
    venue: str | None = None
    year: int | None = None
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # True when the source had no title and a display title was derived from the text.
    title_derived: bool = False
    # Only in a record read back from `paperclub export`: the sources the paper was stored
    # from, each with what it said. Importing restores them, instead of filing the paper
    # under the exported file's name.
    sources: list[RestoredSource] = field(default_factory=list)
    # The paper's vector when the source brings one (JSON Lines' `vector`, made elsewhere):
    # stored with the paper, so that it is not embedded again.
    vector: GivenVector | None = None


@dataclass
class GivenVector:
    """A paper's vector as its source gave it: the model that made it, and its values
    scaled to unit length (float32, as a model's own are). The import checks the model and
    the dimension against the library's (bot.corpus.importing)."""

    model: str
    values: array[float]


@dataclass
class RestoredSource:
    """One source of an exported paper: where it was read, and that source's own record."""

    collection: str
    source: str
    line: int
    format: str
    record: PaperRecord


class CorpusFormatError(ValueError):
    """A corpus file that cannot be read; str() is `FILE:LINE: what is wrong`."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


def clean_space(text: str) -> str:
    """Collapse runs of whitespace (including newlines and NBSP) to one space.

    str.split() cuts at exactly the characters a regex's \\s matches (both ask
    Py_UNICODE_ISSPACE), at a quarter of re.sub's cost: an import cleans every
    abstract. Most are ASCII with single spaces already and come back as they are:
    str.isascii() reads a flag, and the ten scans for other spaces cost a quarter of
    what split and join do."""
    if (
        text.isascii()
        and text[:1] != " "
        and text[-1:] != " "
        and not any(space in text for space in _ASCII_SPACE)
    ):
        return text
    return " ".join(text.split())


# What str.split() cuts at in ASCII text, besides a single space.
_ASCII_SPACE = ("  ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def title_key(title: str) -> str:
    """The normalised title used to recognise the same paper from two sources.

    Case, accents, punctuation and spacing are ignored: "How Do Vision Transformers
    Work?" and "how do vision transformers work" are one paper.
    """
    return " ".join(re.findall(r"\w+", fold(title)))


# --- what the database can store ---------------------------------------------------------
#
# PostgreSQL refuses a string longer than its column, a NUL character or an unpaired
# surrogate, and an integer past 32 bits; SQLite stores them all. Every record is checked
# against the columns (store/models.py, bot/services/models.py) before either database sees it, so that both accept
# or refuse a file alike, with FILE:LINE instead of a DataError quoting the corpus text.


def _length(column: ColumnElement[Any]) -> int:
    """A String column's length, in characters."""
    type_ = column.type
    if not isinstance(type_, String) or type_.length is None:
        raise TypeError(f"{column} is not a string column of a given length")
    return type_.length


_COLUMNS = Paper.__table__.c
LIMITS = {name: _length(_COLUMNS[name]) for name in ("track", "presentation", "award", "venue")}
TITLE_KEY_MAX = _length(_COLUMNS.title_key)
SCHEME_MAX = _length(PaperExternalId.__table__.c.scheme)
ID_MAX = _length(PaperExternalId.__table__.c.value)
COLLECTION_MAX = _length(PaperSource.__table__.c.collection)
SOURCE_MAX = _length(PaperSource.__table__.c.source)
FORMAT_MAX = _length(PaperSource.__table__.c.format)
# Line numbers go into a 32-bit integer column.
LINE_NUMBER_MAX = 2**31 - 1
# Years a paper can carry: a typo (20211) or an overflow (3000000000) is refused rather
# than stored. Well inside the 32-bit integer column.
YEARS = range(1000, 2201)

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def check_record(record: PaperRecord, path: str, line: int | None = None) -> None:
    """Refuse, at FILE:LINE (the record's own line unless `line` is given), a value one of
    the databases would refuse."""
    problem = _character_problem(record) or _length_problem(record) or _year_problem(record)
    if problem:
        where = record.line if line is None else line
        raise CorpusFormatError(path, where, f"paper {_short(record.title)!r}: {problem}")


def check_name(what: str, value: str, limit: int, path: str, fix: str, line: int = 1) -> None:
    """The same check for a name the import gives its rows (collection, source file)."""
    problem = _unstorable(what, value) or _too_long(what, value, limit)
    if problem:
        raise CorpusFormatError(path, line, f"{problem}: {fix}")


def _texts(record: PaperRecord) -> list[tuple[str, str]]:
    """(what, value) of every string the record would store."""
    fields = ["title", "abstract", "url", *LIMITS]
    found = [(name, getattr(record, name)) for name in fields if getattr(record, name)]
    found += [("an author", a) for a in record.authors] + [("a tag", t) for t in record.tags]
    found += [("a note", n) for n in record.notes]
    for scheme, value in record.external_ids.items():
        found += [("an id scheme", scheme), (f"the {scheme} id", value)]
    return found


def _character_problem(record: PaperRecord) -> str | None:
    texts = _texts(record)
    whole = "\x01".join(value for _what, value in texts)
    if _unstorable("", whole) is None:  # nearly every record: one look at all its text
        return None
    return next(filter(None, (_unstorable(what, value) for what, value in texts)), None)


def _unstorable(what: str, value: str) -> str | None:
    if value.isascii() and "\0" not in value:  # most text: a flag and a memchr, no regex
        return None
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    code = f"\\u{ord(found.group()):04x}"
    character = "a NUL character" if found.group() == "\0" else "an unpaired surrogate"
    return f"{_the(what)} contains {character} ({code}), which cannot be stored: remove it"


def title_too_long(title: str) -> int | None:
    """The length to report of a title too long to store (at most TITLE_KEY_MAX fit), or
    None. The title column has no width, but its normalised key (title_key) has one. An
    ASCII title's key is never longer than the title: most titles need no key made here."""
    short = title.isascii() and len(title) <= TITLE_KEY_MAX
    key = "" if short else title_key(title)
    return max(len(title), len(key)) if len(key) > TITLE_KEY_MAX else None


def _length_problem(record: PaperRecord) -> str | None:
    if (length := title_too_long(record.title)) is not None:
        return (
            f"the title is {length:,} characters long, at most {TITLE_KEY_MAX} fit: "
            "shorten it, or check that the abstract is not in the title field"
        )
    for name, limit in LIMITS.items():
        if problem := _too_long(name, getattr(record, name) or "", limit):
            return f"{problem}: shorten it"
    for scheme, value in record.external_ids.items():
        problem = _too_long("the id scheme", scheme, SCHEME_MAX)
        problem = problem or _too_long(f"the {scheme} id", value, ID_MAX)
        if problem:
            return f"{problem}: is it an identifier?"
    return None


def _too_long(what: str, value: str, limit: int) -> str | None:
    if len(value) <= limit:
        return None
    return f"{_the(what)} is {len(value):,} characters long, at most {limit} fit"


def _year_problem(record: PaperRecord) -> str | None:
    if record.year is None or record.year in YEARS:
        return None
    plausible = f"{YEARS.start}-{YEARS[-1]}"
    return f"the year {record.year} is outside {plausible}: correct it or leave it out"


def _the(what: str) -> str:
    return what if what.startswith(("the ", "a ", "an ")) else f"the {what}"


def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"

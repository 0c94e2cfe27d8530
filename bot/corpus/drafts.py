"""New papers of an import, written in bulk, and told to the search index as it will read
them back.

Nearly every paper of a large import is new, and its only change is being created: it
is held as a Draft (no ORM object to make, track and flush) and written with the other
drafts a table at a time, by COPY on PostgreSQL and one executemany on SQLite.
`index_form` is the one form in which the search index reads a paper, whether read back
from the database (bot.corpus.library) or just written here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Table, func, insert, select
from sqlalchemy.orm import Session

from bot.corpus.indexed import IndexedPaper
from bot.corpus.merge import SHOWN
from store.database import dml_result, table_of
from store.models import Paper, PaperExternalId, PaperSource, utcnow


class Written(Protocol):
    """What an import tells the search index as it goes (SearchBackend.ahead): the new
    papers of each flush, as `index_form` gives them, then at each commit the revision
    it moved the corpus to and the papers written before (by earlier imports, or
    earlier in this one) that it changed. A paper told and not reopened by a commit
    is, once committed, as it was told; one told by an import that rolled back is
    either told again with its id or never committed."""

    def __call__(self, papers: list[IndexedPaper]) -> None: ...

    def committed(self, revision: int, reopened: Collection[int]) -> None: ...


class Draft:
    """A paper this import creates, not written yet: the same attributes as a Paper that
    the merge reads and writes (its shown fields, sources and ids), without the ORM's
    bookkeeping. Drafts are written together, a table at a time (write_drafts): nearly
    every paper of a large import is new, and its only change is being created.
    Should a later paper of the import be the same paper, it merges into the draft just
    as into a stored Paper (bot.corpus.importing's functions take either)."""

    # updated_at: set as on a Paper when a later paper merges into the draft; the row
    # written takes the moment it is written, which is later.
    __slots__ = ("sources", "external_ids", "title_key", "updated_at", *SHOWN)
    title_key: str | None
    updated_at: datetime | None
    # SHOWN, typed as a Paper's columns: None until the merge sets them (_show_merged in
    # bot.corpus.importing), which it does before anything reads them.
    title: str
    title_derived: bool
    authors: list[str]
    abstract: str
    url: str | None
    track: str | None
    presentation: str | None
    award: str | None
    venue: str | None
    year: int | None
    tags: list[str]
    notes: list[str]

    def __init__(self) -> None:
        self.sources: list[DraftSource] = []
        self.external_ids: list[DraftId] = []
        self.title_key = self.updated_at = None
        for name in SHOWN:
            setattr(self, name, None)  # as a new Paper reads before anything is set


class DraftSource:
    """A draft's PaperSource."""

    __slots__ = ("collection", "fields", "format", "line", "source", "title_key")
    collection: str
    source: str
    line: int
    format: str
    title_key: str
    fields: dict[str, Any]  # as PaperSource.fields

    def __init__(self, collection: str, source: str, **values: Any) -> None:
        self.collection, self.source = collection, source
        for name, value in values.items():
            setattr(self, name, value)


@dataclass(slots=True, eq=False)  # compared by identity, as the rows it stands in for
class DraftId:
    """A draft's PaperExternalId."""

    scheme: str
    value: str


def as_indexed(paper_id: int, draft: Draft) -> IndexedPaper:
    """A new paper as the library's reading (`Library.papers`) will give it once written."""
    return index_form(
        paper_id,
        draft.title,
        draft.abstract,
        draft.notes,
        draft.authors,
        draft.track,
        draft.award,
        draft.tags,
        {s.collection for s in draft.sources},
        draft.year,
    )


def index_form(
    paper_id: int,
    title: str,
    abstract: str,
    notes: list[str],
    authors: list[str],
    track: str | None,
    award: str | None,
    tags: list[str],
    collections: Iterable[str],
    year: int | None = None,
) -> IndexedPaper:
    """What the search index reads of a paper, its text being the title, abstract and
    reviewer notes: one form for a paper read back and one just written, whose content
    hashes must agree (TokenisedAhead)."""
    return IndexedPaper(
        paper_id=paper_id,
        title=title,
        text="\n".join([title, abstract, *notes]),
        authors=authors,
        track=track,
        award=award,
        collections=sorted(collections),  # as Paper.collections
        tags=tags,
        year=year,
    )


def write_drafts(session: Session, drafts: list[Draft], revision: int) -> list[int]:
    """Insert the drafts, their sources and their ids, each table's rows in one go (no
    ORM objects to make, track and flush); the papers' new ids, in the drafts' order.

    Each paper's row holds what a new Paper's would: every shown field as the merge set
    it, created_at and updated_at the moment of writing (after any merge into the draft:
    its updated_at is not older), and changed_revision the revision the import expects
    to move the corpus to (it stamps them again should another import take that one)."""
    if not drafts:
        return []
    now = utcnow()
    rows = [
        [*(getattr(d, name) for name in SHOWN), d.title_key, now, now, revision] for d in drafts
    ]
    ids = _insert_papers(session, rows)
    pairs = list(zip(ids, drafts, strict=True))
    _bulk_insert(
        session,
        table_of(PaperSource),
        ("paper_id", "collection", "source", "line", "format", "title_key", "fields"),
        [
            (pid, s.collection, s.source, s.line, s.format, s.title_key, s.fields)
            for pid, draft in pairs
            for s in draft.sources
        ],
    )
    _bulk_insert(
        session,
        table_of(PaperExternalId),
        ("paper_id", "scheme", "value"),
        [(pid, x.scheme, x.value) for pid, draft in pairs for x in draft.external_ids],
    )
    return ids


# As write_drafts lists them.
_PAPER_COLUMNS = (*SHOWN, "title_key", "created_at", "updated_at", "changed_revision")


def _insert_papers(session: Session, rows: list[list[Any]]) -> list[int]:
    """Insert papers' rows (values in _PAPER_COLUMNS order); their ids, which are those
    the database gives rows inserted one by one in this order.

    The ids are given explicitly, so that the rows go in together rather than by one
    INSERT ... RETURNING each (SQLite does not promise RETURNING's order, so SQLAlchemy
    sends those one row at a time). PostgreSQL: the next values of the papers' id
    sequence, which no concurrent import can take too. SQLite gives a new row the largest
    id plus one; once this transaction has written a row no one else writes before it
    ends, so the first row goes in alone and the next ids count on from its id."""
    papers = table_of(Paper)
    if session.get_bind().dialect.name == "postgresql":
        sequence = func.pg_get_serial_sequence(papers.name, papers.c.id.name)
        numbers = select(func.nextval(sequence)).select_from(func.generate_series(1, len(rows)))
        ids = sorted(session.scalars(numbers))
        rest = 0
    else:
        inserted = dml_result(
            session.execute(insert(papers), dict(zip(_PAPER_COLUMNS, rows[0], strict=True)))
        )
        key = inserted.inserted_primary_key  # by RETURNING, or the cursor's lastrowid
        if key is None:  # only for an INSERT of no rows
            raise RuntimeError("the first new paper was given no id")
        first = key[0]
        ids = list(range(first, first + len(rows)))
        rest = 1
    numbered = [[paper_id, *row] for paper_id, row in zip(ids[rest:], rows[rest:], strict=True)]
    _bulk_insert(session, papers, ("id", *_PAPER_COLUMNS), numbered)
    return ids


def _bulk_insert(
    session: Session, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert rows (values in `columns` order) as SQLAlchemy's INSERT would store them,
    without its work per row: each value goes through its column type's bind processor
    (JSON, dates), then the rows go to the driver together, by COPY on PostgreSQL and
    one executemany on SQLite. Columns left out take their defaults."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    types = [table.c[name].type.dialect_impl(dialect) for name in columns]
    processors = [
        (place, processor)
        for place, type_ in enumerate(types)
        if (processor := type_.bind_processor(dialect)) is not None
    ]
    if processors:
        processed = [list(row) for row in rows]
        for place, processor in processors:
            first = processed[0][place]
            if all(row[place] is first for row in processed):  # a timestamp: processed once
                value = processor(first)
                for row in processed:
                    row[place] = value
                continue
            for row in processed:
                row[place] = processor(row[place])
        rows = processed
    quote = dialect.identifier_preparer.quote
    into = f"{quote(table.name)} ({', '.join(quote(name) for name in columns)})"
    if dialect.name == "postgresql":
        import psycopg  # loaded already: the dialect's driver

        driver = connection.connection.driver_connection
        if not isinstance(driver, psycopg.Connection):  # the only PostgreSQL driver we install
            raise TypeError(f"COPY needs a psycopg connection, not {driver!r}")
        with (
            driver.cursor() as cursor,
            cursor.copy(f"COPY {into} FROM STDIN") as copy,
        ):
            for values in rows:
                copy.write_row(values)
    else:
        marks = ", ".join("?" * len(columns))
        connection.exec_driver_sql(f"INSERT INTO {into} VALUES ({marks})", list(map(tuple, rows)))

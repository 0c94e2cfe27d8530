"""The paper library: the papers in the database, read back; importing and exporting
through the same handle, `Library(db)`.

Reading is here: a paper by its number or any spelling of an id (`find`), papers by
number (`get_many`), every paper a page at a time as the search index reads them
(`papers`, `papers_changed`), the collections. The rest lives beside it:
bot.corpus.importing matches records to papers and merges their sources,
bot.corpus.drafts writes new papers in bulk, bot.corpus.revisions moves and reads the
corpus revision, bot.corpus.export gives each paper's exported form.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sqlalchemy import Text, bindparam, cast, func, select
from sqlalchemy.orm import Session, joinedload

from bot.corpus import identifiers, revisions
from bot.corpus.drafts import index_form
from bot.corpus.indexed import IndexedPaper
from bot.corpus.revisions import CHUNK
from bot.grammar import UsageError, looks_like_number, number
from store import Database
from store.models import Paper, PaperExternalId, PaperSource

# The papers of a search's cards, their sources and ids joined in (one query, not three:
# 1.5 ms against 2.1 ms at 100k papers), built once: constructing the statement and its
# cache key on every command cost as much again as running it (0.8 against 0.5 ms).
_PAPERS_WITH_IDS = (
    select(Paper)
    .where(Paper.id.in_(bindparam("ids", expanding=True)))
    .options(joinedload(Paper.sources), joinedload(Paper.external_ids))
)

if TYPE_CHECKING:  # importing loads the readers of every format: not for a search
    from bot.corpus.drafts import Written
    from bot.corpus.embedded import VectorRules
    from bot.corpus.importing import ImportSummary
    from bot.corpus.listing import ListingFacts
    from bot.corpus.records import PaperRecord, RestoredSource


@dataclass(eq=False)  # a service: compared and hashed by identity, as before
class Library:
    """The corpus behind one handle: what the commands, the search index and the CLI use.
    `vectors`: the precomputed vectors an import may bring (the deployment's model, as
    bot.app and the command line wire it; without, a record with a vector is refused)."""

    db: Database
    vectors: VectorRules | None = None

    # --- importing (bot.corpus.importing) ---------------------------------------------

    def import_file(
        self,
        path: str | Path,
        collection: str | None = None,
        fmt: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        written: Written | None = None,
        listing: ListingFacts | None = None,
    ) -> ImportSummary:
        """Read and store one file; a malformed file raises before anything is written.
        `listing`: the venue and year for its records that leave them out."""
        from bot.corpus import importing

        return importing.import_file(self.db, path, collection, fmt, progress, written, self.vectors, listing)

    def import_records(
        self,
        records: list[PaperRecord],
        *,
        collection: str,
        source: str,
        fmt: str,
        progress: Callable[[int, int], None] | None = None,
        path: str | None = None,
        written: Written | None = None,
    ) -> ImportSummary:
        """Store records, all or none (bot.corpus.importing.import_records)."""
        from bot.corpus import importing

        return importing.import_records(
            self.db,
            records,
            collection=collection,
            source=source,
            fmt=fmt,
            progress=progress,
            path=path,
            written=written,
            vectors=self.vectors,
        )

    def fill(self, filled: Sequence[tuple[int, RestoredSource]]) -> list[int]:
        """Put what a provider filled in on the papers of those ids, all or none
        (bot.corpus.importing.fill_sources); the ids of the papers that changed."""
        from bot.corpus import importing

        return importing.fill_sources(self.db, filled)

    # --- the revision (bot.corpus.revisions) ------------------------------------------

    def revision(self) -> int:
        with self.db.connection() as connection:
            return revisions.current_revision(connection)

    def identity(self) -> str:
        """This database's random id (bot.corpus.revisions.corpus_identity)."""
        return revisions.corpus_identity(self.db)

    def stamp(self) -> str:
        """The revision and the moment it was reached (bot.corpus.revisions.stamp)."""
        with self.db.session() as session:
            return revisions.stamp(session)

    # --- reading ----------------------------------------------------------------------

    def count(self) -> int:
        with self.db.session() as session:
            return session.scalar(select(func.count(Paper.id))) or 0

    def papers(self) -> Iterator[IndexedPaper]:
        """Every paper in id order, as the search index wants it."""
        return self._indexed()

    def papers_changed(self, since: int) -> Iterator[IndexedPaper]:
        """The papers added or changed by the imports after revision `since`, in id order,
        as `papers` gives them: `papers_changed(0)` is every paper, and
        `papers_changed(self.revision())` none (until the next import).

        Their ids come first, from the changed_revision index (`changes`), sorted after:
        asked for in id order, SQLite walks every paper by id to skip the sort (a day's 1,000 new
        papers read the whole table: 70 ms at 100k papers, seconds at all of arXiv)."""
        return self.papers_with(self.changes(since)[0])

    def papers_with(self, ids: Sequence[int]) -> Iterator[IndexedPaper]:
        """The papers of these ids (ascending), as `papers` gives them, CHUNK at a time."""
        for start in range(0, len(ids), CHUNK):
            yield from self._index_rows(Paper.__table__.c.id.in_(ids[start : start + CHUNK]))

    def changes(self, since: int | None) -> tuple[array[int], array[int]]:
        """The ids of the papers changed after revision `since` (None: every paper), in
        id order, and the revision that last changed each: what the search index needs
        to tell a paper an import told it (SearchBackend.ahead) from one changed since.
        Two flat arrays of 64-bit integers, not 2.6 million pairs."""
        table = Paper.__table__
        query = select(table.c.id, table.c.changed_revision)
        ids, changed = array("q"), array("q")
        rows: Iterable[Sequence[int]]  # (id, changed_revision)
        with self.db.connection() as connection:
            if since is None:  # the table in its own order
                rows = connection.execute(query.order_by(table.c.id))
            else:  # read on the index, sorted here (see papers_changed)
                rows = sorted(map(tuple, connection.execute(query.where(revisions.changed_since(since)))))
            for paper_id, revision in rows:
                ids.append(paper_id)
                changed.append(revision)
        return ids, changed

    def changed_count(self, since: int) -> int:
        """How many papers `papers_changed(since)` yields (counted on the index)."""
        with self.db.session() as session:
            return revisions.changed_count(session, since)

    def iter_papers(self) -> Iterator[Paper]:
        return self._paged()

    def papers_in(self, collection: str) -> Iterator[Paper]:
        """The papers any source filed under `collection`, in id order."""
        held = select(PaperSource.paper_id).where(PaperSource.collection == collection)
        return self._paged(Paper.id.in_(held))

    def _paged(self, *conditions: Any) -> Iterator[Paper]:
        """The papers meeting `conditions` in id order, CHUNK at a time, each chunk read in
        a short transaction of its own (keyset pagination on the id)."""
        last = 0
        while True:
            with self.db.session() as session:
                query = select(Paper).where(Paper.id > last, *conditions).order_by(Paper.id).limit(CHUNK)
                chunk = session.scalars(query).all()
            if not chunk:
                return
            yield from chunk
            last = chunk[-1].id

    def _indexed(self) -> Iterator[IndexedPaper]:
        """Every paper as the search index takes it, CHUNK at a time by id."""
        last = 0
        while chunk := self._index_rows(Paper.__table__.c.id > last, limit=CHUNK):
            yield from chunk
            last = chunk[-1].paper_id

    def _index_rows(self, condition: Any, limit: int | None = None) -> list[IndexedPaper]:
        """The papers meeting `condition` in id order, as the search index takes them, read
        as plain rows in one short transaction: the columns the index wants and each
        paper's collections, two queries, rather than Paper objects with their sources'
        fields (an abstract each) and ids."""
        papers, sources = Paper.__table__, PaperSource.__table__
        names = ("id", "title", "abstract", "track", "award", "year")
        # The three JSON lists as their text, decoded by one json.loads a row: a third of
        # the calls, which cost more than the decoding itself (a list is mostly short).
        lists = [cast(papers.c[name], Text) for name in ("authors", "tags", "notes")]
        columns = [*(papers.c[name] for name in names), *lists]
        with self.db.session() as session:
            query = select(*columns).where(condition).order_by(papers.c.id).limit(limit)
            rows = session.execute(query).all()
            if not rows:
                return []
            held: dict[int, set[str]] = {}
            held_query = select(sources.c.paper_id, sources.c.collection).distinct()
            held_query = held_query.where(sources.c.paper_id.in_([row.id for row in rows]))
            for paper_id, collection in session.execute(held_query):
                held.setdefault(paper_id, set()).add(collection)
        found = []
        for paper_id, title, abstract, track, award, year, *texts in rows:
            authors, tags, notes = json.loads(f"[{','.join(texts)}]")
            found.append(index_form(
                paper_id, title, abstract, notes, authors, track, award, tags, held.get(paper_id, ()), year,
            ))
        return found

    def get_many(self, paper_ids: Iterable[int]) -> dict[int, Paper]:
        ids = list(paper_ids)
        if not ids:
            return {}
        with self.db.session() as session:
            papers = session.scalars(_PAPERS_WITH_IDS, {"ids": ids}).unique().all()
        return {p.id: p for p in papers}

    def find(self, ref: str) -> Paper | None:
        """A paper by its number, or by an identifier in any spelling a member types
        (arXiv:1706.03762, an arXiv or doi.org link, a DOI in any case: see
        bot.corpus.identifiers), or by an id exactly as a source gave it (a BibTeX key)."""
        ref = ref.strip()
        paper_number = number(ref)  # ASCII digits in the id column's range, or None
        if paper_number is None and looks_like_number(ref):
            return None  # ², ①, 10**30: no paper has that number, and no query is needed
        parsed = identifiers.parse(ref)
        with self.db.session() as session:
            found = session.get(Paper, paper_number) if paper_number is not None else None
            if found is None and parsed is not None:
                scheme, value = parsed
                found = _holding(session, PaperExternalId.scheme == scheme, PaperExternalId.value == value)
            return found or _holding(session, PaperExternalId.value == ref.lstrip("#"))

    def named(self, args: str) -> Paper:
        """The one paper a command's arguments name (`show`, `similar`, `discuss`), or a
        UsageError saying what was wrong: not one word, or no such paper."""
        words = args.split()
        if len(words) != 1:
            raise UsageError("Give one paper ID (the number on its card).")
        paper = self.find(words[0])
        if paper is None:
            raise UsageError(f"No paper with ID `{words[0]}`; `search` shows IDs on each card.")
        return paper

    def collections(self) -> list[tuple[str, int]]:
        with self.db.session() as session:
            rows = session.execute(
                select(PaperSource.collection, func.count(func.distinct(PaperSource.paper_id)))
                .group_by(PaperSource.collection)
                .order_by(PaperSource.collection)
            ).all()
        return [(name, count) for name, count in rows]

    def export(self, out: IO[str]) -> int:
        """Write every paper as one JSON line (the schema `paperclub import` reads back)."""
        from bot.corpus.export import write_jsonl

        return write_jsonl(self.iter_papers(), out)


def _holding(session: Session, *conditions: Any) -> Paper | None:
    """The paper (the oldest, should several) holding an external id that meets the conditions."""
    query = select(Paper).join(PaperExternalId).where(*conditions).order_by(Paper.id).limit(1)
    return session.scalar(query)

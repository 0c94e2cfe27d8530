"""Importing: storing read records once each, matched to the papers already stored.

Identity rule: a record is the paper that holds one of its external ids; failing that,
the paper one of whose sources has the same normalised title, unless the two carry
different ids of the same scheme (two BEIR documents can share a title and still be two
documents).

Each source keeps its own fields (paper_sources.fields); the paper shows the values the
merge rule picks from all of them (bot.corpus.merge), so no import order decides them.
A record read back from `paperclub export` brings its sources with it and is stored
under them, as it was; any other record is filed under the imported file.

Here: the matcher (_Incoming, _Titles, _Existing) and the merge into stored papers and
drafts; new papers are written in bulk by bot.corpus.drafts, and an import that changes
papers moves the corpus revision (bot.corpus.revisions).

A record may bring the paper's vector, made elsewhere (GivenVector): checked against the
library's model and dimension before anything is written (VectorRules), and stored in the
import's transaction with the hash of the paper's text as the import left it
(bot.corpus.embedded.store_given). A paper named by several records of one file takes the
first record's vector; a record merged into a stored paper gives that paper its vector.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from bot.collector import give_back_free_memory, without_cycle_collection
from bot.corpus import identifiers
from bot.corpus.display_safe import make_display_safe
from bot.corpus.drafts import Draft, DraftId, DraftSource, Written, as_indexed, write_drafts
from bot.corpus.embedded import StoredVectors, VectorRules, store_given
from bot.corpus.listing import ListingFacts
from bot.corpus.merge import SHOWN, in_merge_order, merged, source_fields
from bot.corpus.readers import read_path, truncation_warnings
from bot.corpus.records import (
    COLLECTION_MAX,
    FORMAT_MAX,
    SOURCE_MAX,
    CorpusFormatError,
    GivenVector,
    PaperRecord,
    RestoredSource,
    check_name,
    check_record,
    title_key,
)
from bot.corpus.revisions import CHUNK, bump_revision, current_revision, mark_changed
from store import Database
from store.database import table_of
from store.models import FILLED_PREFIX, Paper, PaperExternalId, PaperSource, utcnow

# PostgreSQL takes 65,535 parameters: its lookups go in fewer, larger chunks (where it
# scans a table for each, 500 values at a time cost ten times as much).
PG_CHUNK = 5_000
# New papers from which an import on PostgreSQL updates the tables' statistics (ANALYZE).
ANALYZE_AFTER = 5_000
# New papers per flush: their rows go to the database together, three INSERTs each time.
BATCH = 5_000
_FIELDS = ("abstract", "url", "track", "presentation", "award", "venue", "year")

Pair = tuple[str, str]  # (scheme, value) of an external id
Place = tuple[str, str]  # (collection, source file): one source of a paper


@dataclass
class ImportSummary:
    path: str
    format: str = ""
    collection: str = ""
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    vectors: int = 0  # precomputed vectors stored (new, or of another text or value)
    error: str | None = None
    # FILE:LINE notes on an import that went through but looks wrong (a prose file whose
    # last abstract stops mid-sentence, as a cut file does).
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


@dataclass
class _Incoming:
    """One paper as this import names it: each of its sources with that source's record
    (one source for a plain record; an exported paper's own sources)."""

    sources: dict[Place, RestoredSource]
    # The paper's vector, when a record of it brought one (the first that did).
    vector: GivenVector | None = None
    # Each source's normalised title, and the ids, worked out once (an import asks for
    # them often; absorbing another record forgets the ids).
    keys: dict[Place, str] = field(default_factory=dict)
    _pairs: list[Pair] | None = field(default=None, init=False, repr=False, compare=False)
    _ids: dict[str, set[str]] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for place, restored in self.sources.items():
            if place not in self.keys:
                self.keys[place] = title_key(restored.record.title)

    @classmethod
    def of(cls, record: PaperRecord, collection: str, source: str, fmt: str) -> _Incoming:
        restored = record.sources or [RestoredSource(collection, source, record.line, fmt, record)]
        return cls({(s.collection, s.source): s for s in restored}, record.vector)

    def records(self) -> list[PaperRecord]:
        return [s.record for s in self.sources.values()]

    def id_pairs(self) -> list[Pair]:
        if self._pairs is None:
            given = {pair for record in self.records() for pair in record.external_ids.items()}
            self._pairs = sorted(given)
        return self._pairs

    def ids(self) -> dict[str, set[str]]:
        if self._ids is None:
            self._ids = _grouped(self.id_pairs())
        return self._ids

    def title_keys(self) -> list[str]:
        return sorted(set(self.keys.values()))

    def identity(self) -> list[Pair]:
        return [*self.id_pairs(), *(("title", key) for key in self.title_keys())]

    def absorb(self, other: _Incoming) -> None:
        """The same paper named again in the same file: one record per source."""
        self._pairs = self._ids = None
        self.vector = self.vector or other.vector
        for place, restored in other.sources.items():
            if place in self.sources:
                _merge_records(self.sources[place].record, restored.record)  # its title stays
            else:
                self.sources[place] = restored
                self.keys[place] = other.keys[place]


class _Titles:
    """Papers by normalised title, in the order they became known (the database's oldest
    first, then this import's), grouped by the id schemes they hold.

    A paper matches the first paper of its title whose ids do not conflict with its own.
    One holding any of its ids would have matched by that id already (_Existing.by_external
    is asked first), so the papers sharing one of its schemes all hold another id there:
    they conflict. The rest never do, and the first of each group of schemes is at hand.
    No scan of the papers that share a title, however many (a corpus where a tenth of the
    titles repeat made that quadratic); a title only one paper has costs one entry.
    """

    def __init__(self) -> None:
        self.single: dict[str, int] = {}  # title key -> its only paper (most titles)
        self.order: dict[str, list[int]] = {}  # title key -> its papers, first known first
        self.position: dict[str, dict[int, int]] = {}  # title key -> paper -> place
        self.groups: dict[str, dict[frozenset[str], list[int]]] = {}  # -> sorted places
        self.keys_of: dict[int, list[str]] = {}  # paper -> its titles with several papers
        self.schemes_of: dict[int, frozenset[str]] = {}
        self._interned: dict[frozenset[str], frozenset[str]] = {}

    def add(self, key: str, paper: int) -> None:
        only = self.single.get(key)
        if only == paper or paper in self.position.get(key, ()):
            return
        if only is None and key not in self.order:
            self.single[key] = paper
            return
        if only is not None:  # a second paper: the title gets its groups
            del self.single[key]
            self.order[key], self.position[key], self.groups[key] = [], {}, {}
            self._place(key, only)
        self._place(key, paper)

    def _place(self, key: str, paper: int) -> None:
        order = self.order[key]
        self.position[key][paper] = len(order)
        group = self.groups[key].setdefault(self.schemes_of.get(paper, frozenset()), [])
        group.append(len(order))  # the newest place: the group stays sorted
        order.append(paper)
        self.keys_of.setdefault(paper, []).append(key)

    def set_schemes(self, paper: int, schemes: Iterable[str]) -> None:
        schemes = frozenset(schemes)
        schemes = self._interned.setdefault(schemes, schemes)  # a few sets for all papers
        old = self.schemes_of.get(paper, frozenset())
        self.schemes_of[paper] = schemes
        if old == schemes:
            return
        for key in self.keys_of.get(paper, ()):
            place = self.position[key][paper]
            groups = self.groups[key]
            groups[old].pop(bisect_left(groups[old], place))
            insort(groups.setdefault(schemes, []), place)

    def first(self, key: str, schemes: set[str]) -> int | None:
        """The first paper under `key` holding none of `schemes`."""
        if (only := self.single.get(key)) is not None:
            return None if self.schemes_of.get(only, frozenset()) & schemes else only
        groups = self.groups.get(key, {})
        places = [group[0] for held, group in groups.items() if group and not held & schemes]
        return self.order[key][min(places)] if places else None


@dataclass
class _Existing:
    """What the database already knows about the identities in one import.

    Papers are named by keys: a stored paper by its id, a paper this import creates by a
    negative number until the end (its id exists only once it is flushed, and flushes
    are batched)."""

    by_external: dict[Pair, int] = field(default_factory=dict)
    titles: _Titles = field(default_factory=_Titles)
    unowned: set[Pair] = field(default_factory=set)  # ids known to belong to no paper
    created: dict[int, Draft] = field(default_factory=dict)  # new papers not written yet
    flushed: list[int] = field(default_factory=list)  # the ids of new papers, by -key - 1
    changed: set[int] = field(default_factory=set)  # the keys of papers added or updated
    # The ids of papers written before (stored, or flushed by this import) that it
    # changed through the ORM: what the search index was told of them is out of date.
    reopened: set[int] = field(default_factory=set)
    # The stored papers the next papers of the import match, read ahead (_load_matched)
    # and held here: the session itself keeps only the papers it has to write back.
    loaded: list[Paper] = field(default_factory=list)
    # Told the new papers of each flush as the search index reads them (Written).
    written: Written | None = None
    # The revision this import expects to move the corpus to: its new papers are written
    # with it, so that the common case (no other import commits meanwhile) needs no
    # second pass over their rows (unstamped_ids).
    expected: int = 0

    def owners(self, session: Session, pairs: Iterable[Pair]) -> dict[Pair, int | None]:
        """The paper holding each id, or None; asks the database only for unknown ones."""
        pairs = list(dict.fromkeys(pairs))
        unknown = [p for p in pairs if p not in self.by_external and p not in self.unowned]
        # Asked a scheme at a time (scheme = ? AND value IN (...)): both databases find
        # those in the (scheme, value) index, where (scheme, value) IN ((?, ?), ...) made
        # PostgreSQL check every row found against every pair asked.
        size = _lookup_chunk(session)
        for scheme, values in _grouped_in_order(unknown).items():
            values.sort()  # see _load_existing
            for start in range(0, len(values), size):
                chunk = values[start : start + size]
                rows = session.execute(
                    select(PaperExternalId.value, PaperExternalId.paper_id).where(
                        PaperExternalId.scheme == scheme, PaperExternalId.value.in_(chunk)
                    )
                )
                self.by_external.update({(scheme, value): pid for value, pid in rows})
                held = self.by_external
                self.unowned.update((scheme, v) for v in chunk if (scheme, v) not in held)
        return {pair: self.by_external.get(pair) for pair in pairs}

    def paper_id(self, key: int) -> int:
        """The id of a paper by its key, once it is written (after the last flush)."""
        return key if key > 0 else self.flushed[-key - 1]

    def new_key(self, paper: Draft) -> int:
        key = -(len(self.flushed) + len(self.created) + 1)
        self.created[key] = paper
        return key

    def paper(self, session: Session, key: int) -> Paper | Draft:
        if key in self.created:
            return self.created[key]
        # A paper of this import written since, or a stored one: the ORM's from here on.
        return session.get_one(Paper, self.flushed[-key - 1] if key < 0 else key)

    def flush(self, session: Session) -> None:
        """Write the pending changes to stored papers, then the drafts, in one go; only
        the drafts' ids are kept, not the drafts: an import can hold a million papers.
        The session goes first: an id a stored paper let go of may be a draft's now."""
        session.flush()
        drafts = list(self.created.values())  # keys in order
        ids = write_drafts(session, drafts, self.expected)
        self.flushed.extend(ids)
        self.created.clear()
        if self.written is not None and ids:
            self.written([as_indexed(pid, draft) for pid, draft in zip(ids, drafts, strict=True)])

    def unstamped_ids(self, revision: int) -> list[int]:
        """The ids of the papers this import added or updated (once all are flushed) whose
        rows do not say `revision` yet: the stored papers it updated, and its new papers
        too unless it moved the corpus to the revision it expected."""
        keys = self.changed if revision != self.expected else (k for k in self.changed if k > 0)
        return sorted(key if key > 0 else self.flushed[-key - 1] for key in keys)


def import_file(
    db: Database,
    path: str | Path,
    collection: str | None = None,
    fmt: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    written: Written | None = None,
    vectors: VectorRules | None = None,
    listing: ListingFacts | None = None,
) -> ImportSummary:
    """Read and store one file; a malformed file raises before anything is written.
    `vectors` says which precomputed vectors the file may bring (none without);
    `listing` the venue and year for the records that do not say theirs."""
    path = Path(path)
    collection = collection or default_collection(path)
    _check_names(collection, path.name, str(path))  # before reading: a wrong name fails fast
    records: list[PaperRecord] = []
    try:
        with without_cycle_collection():
            detected, records = read_path(path, fmt)
            if listing:
                listing.fill(records)
            return import_records(
                db,
                records,
                collection=collection,
                source=path.name,
                fmt=detected,
                progress=progress,
                path=str(path),
                written=written,
                vectors=vectors,
            )
    finally:
        records = []  # gone before the heap's free pages are given back
        give_back_free_memory()


def import_records(
    db: Database,
    records: list[PaperRecord],
    *,
    collection: str,
    source: str,
    fmt: str,
    progress: Callable[[int, int], None] | None = None,
    path: str | None = None,
    written: Written | None = None,
    vectors: VectorRules | None = None,
) -> ImportSummary:
    """Store records, all or none; `path` names the file in errors (default: `source`).

    A record without sources of its own goes into `collection` as a line of `source`;
    a record read back from an export goes back into the sources it names.
    Every record is checked against the columns first, so that a value PostgreSQL
    would refuse (and SQLite store) refuses the whole import on both, at its FILE:LINE.
    `written` is told the new papers as they are written, before the import commits
    (or rolls back): the search index tokenises them meanwhile (SearchBackend.ahead).
    Records' vectors are checked against `vectors` and stored with their papers; a record
    with a vector is refused where no `vectors` are given.
    """
    with without_cycle_collection():
        return _import_records(db, records, collection, source, fmt, progress, path, written, vectors)


def _import_records(
    db: Database,
    records: list[PaperRecord],
    collection: str,
    source: str,
    fmt: str,
    progress: Callable[[int, int], None] | None,
    path: str | None,
    written: Written | None,
    vectors: VectorRules | None,
) -> ImportSummary:
    path = path or source
    _check_names(collection, source, path)
    for record in records:
        _normalise_and_check(record, path)
    _check_vectors(db, records, path, vectors)
    papers = _incoming(records, collection, source, fmt)
    summary = ImportSummary(path=path, format=fmt, collection=_collections(papers) or collection)
    summary.warnings = truncation_warnings(fmt, records, path)
    with db.session() as session:
        existing = _load_existing(session, papers)
        existing.written = written
        existing.expected = current_revision(session) + 1
        given: dict[int, array[float]] = {}  # paper key -> its vector, from the file
        for done, paper in enumerate(papers, 1):
            if (done - 1) % CHUNK == 0:
                ahead = papers[done - 1 : done - 1 + CHUNK]
                existing.loaded = _load_matched(session, existing, ahead)
            outcome, key = _store(session, existing, paper)
            setattr(summary, outcome, getattr(summary, outcome) + 1)
            if paper.vector is not None:
                given.setdefault(key, paper.vector.values)
            if progress and (done % 200 == 0 or done == len(papers)):
                progress(done, len(papers))
        existing.flush(session)
        if vectors is not None and given:
            by_id = {existing.paper_id(key): values for key, values in given.items()}
            summary.vectors = store_given(session, vectors.model, by_id, vectors.quantise)
        revision = None
        if summary.added or summary.updated:
            revision = bump_revision(session)
            mark_changed(session, existing.unstamped_ids(revision), revision)
    if written is not None and revision is not None:  # committed
        written.committed(revision, existing.reopened)
    if len(existing.flushed) >= ANALYZE_AFTER and db.engine.dialect.name == "postgresql":
        _analyze(db)
    return summary


def fill_sources(db: Database, filled: Sequence[tuple[int, RestoredSource]], path: str = "filled") -> list[int]:
    """Put each source on the paper of that id, as what a provider filled in (its
    collection starts with store.models.FILLED_PREFIX: the merge reads it last), in one
    transaction: all or none. Not matched by ids or title like an import's records: the
    caller says which paper each is. A paper gone meanwhile is passed over. The ids of the
    papers that changed (each source replaces what it said before)."""
    for _paper_id, restored in filled:
        if not restored.collection.startswith(FILLED_PREFIX):
            raise ValueError(f"{restored.collection!r} is not a filled-in collection ({FILLED_PREFIX}...)")
        _normalise_and_check(restored.record, path)
    changed: list[int] = []
    with db.session() as session:
        existing = _Existing()
        ids = sorted({paper_id for paper_id, _ in filled})
        papers = {p.id: p for p in session.scalars(select(Paper).where(Paper.id.in_(ids)))} if ids else {}
        existing.owners(session, [pair for paper in papers.values() for s in paper.sources
                                  for pair in s.fields["external_ids"].items()]
                        + [pair for _, restored in filled for pair in restored.record.external_ids.items()])
        for paper_id, restored in filled:
            paper = papers.get(paper_id)
            if paper is None:
                continue
            before = _snapshot(paper)
            _put_source(paper, restored, title_key(restored.record.title))
            _show_merged(paper)
            if _hold_ids(session, existing, paper, paper_id):
                session.flush()  # an id one paper lets go of is gone before the next takes it
            if _snapshot(paper) != before:
                paper.updated_at = utcnow()
                changed.append(paper_id)
        if changed:
            mark_changed(session, changed, bump_revision(session))
    return changed


def _analyze(db: Database) -> None:
    """Bring PostgreSQL's statistics on the corpus tables up to date, in a transaction
    of its own. Tables that were empty, or much smaller, before a large import are
    otherwise planned as such until autovacuum gets to them (a minute or more):
    the next import's lookups ran as table scans, a hundred times as long."""
    tables = (table_of(Paper), table_of(PaperSource), table_of(PaperExternalId))
    quote = db.engine.dialect.identifier_preparer.quote
    with db.session() as session:
        session.execute(text(f"ANALYZE {', '.join(quote(table.name) for table in tables)}"))


def default_collection(path: Path) -> str:
    return path.stem


def _check_names(collection: str, source: str, path: str) -> None:
    if collection.startswith(FILLED_PREFIX):  # what a provider fills in is put by fill_sources alone
        raise CorpusFormatError(path, 1, f"the collection name {collection!r} is kept for what providers fill in "
                                         f"(names starting {FILLED_PREFIX!r}): pass another --collection")
    fix = "pass a shorter --collection"
    check_name("the collection name", collection, COLLECTION_MAX, path, fix)
    check_name("the file name", source, SOURCE_MAX, path, "rename the file")


def _normalise_and_check(record: PaperRecord, path: str) -> None:
    """The record's values, and an exported record's sources, against the columns; a
    source's problem is reported at the exported record's line. Ids are normalised here
    too, for records that come from code rather than a reader, and every text is made
    display-safe (bot.corpus.display_safe): the one place feeds, adds and imports pass."""
    record.external_ids = identifiers.normalise_ids(record.external_ids)
    _display_safe(record, path, record.line)
    check_record(record, path)
    for restored in record.sources:
        restored.record.external_ids = identifiers.normalise_ids(restored.record.external_ids)
        _display_safe(restored.record, path, record.line)
        check_record(restored.record, path, line=record.line)
        for what, value, limit in (
            ("the source's collection", restored.collection, COLLECTION_MAX),
            ("the source's file name", restored.source, SOURCE_MAX),
            ("the source's format", restored.format, FORMAT_MAX),
        ):
            check_name(what, value, limit, path, "shorten it", line=record.line)


def _display_safe(record: PaperRecord, path: str, line: int) -> None:
    """Clean the record's texts; refuse a title that held nothing else."""
    titled = record.title
    make_display_safe(record)
    if titled and not record.title:
        shown = ascii(titled[:20]) + ("..." if len(titled) > 20 else "")
        raise CorpusFormatError(path, line, (
            f"the title {shown} is only invisible format or control characters: give the paper its title"))


def _check_vectors(db: Database, records: list[PaperRecord], path: str, rules: VectorRules | None) -> None:
    """Refuse, at its record's line, a vector of another model than the library's or of
    another dimension: that of the vectors stored under the model, else the model's in
    its catalogue, else the file's first vector's."""
    given = [record for record in records if record.vector is not None]
    if not given:
        return
    if rules is None:
        raise CorpusFormatError(path, given[0].line, "'vector': this import takes no precomputed vectors")
    dimension, known = StoredVectors(db).dimension(rules.model), "as the vectors already stored under it"
    if dimension is None:
        dimension, known = rules.catalogue_dimension(), "in the model's catalogue"
    for record in given:
        assert record.vector is not None  # given: those with one
        if record.vector.model != rules.model:
            raise CorpusFormatError(path, record.line, (
                f"'vector.model' is {record.vector.model!r}, but this library's vectors are of "
                f"{rules.model!r} (PAPERCLUB_EMBEDDING_MODEL): make the vectors with that model, "
                "or configure this one"))
        if dimension is None:
            dimension, known = len(record.vector.values), f"as the file's first vector, at line {record.line}"
        if len(record.vector.values) != dimension:
            raise CorpusFormatError(path, record.line, (
                f"'vector.values' holds {len(record.vector.values)} numbers, but the vectors of "
                f"{rules.model} have {dimension} ({known})"))


# --- identity ------------------------------------------------------------------------


def _incoming(records: list[PaperRecord], collection: str, source: str, fmt: str) -> list[_Incoming]:
    """One entry per paper within a file (a review that names a paper twice is one)."""
    papers: list[_Incoming] = []
    seen: dict[Pair, _Incoming] = {}
    for record in records:
        here = _Incoming.of(record, collection, source, fmt)
        identity = here.identity()  # absorbing `here` changes the other paper's, not its
        first = next((seen[key] for key in identity if key in seen), None)
        if first is None or _conflicting(first.ids(), here.ids()):
            papers.append(here)
            first = here
        else:
            first.absorb(here)
        for key in identity:
            seen.setdefault(key, first)
    return papers


def _collections(papers: list[_Incoming]) -> str:
    return ", ".join(sorted({c for paper in papers for c, _ in paper.sources}))


def _grouped(pairs: Iterable[Pair]) -> dict[str, set[str]]:
    ids: dict[str, set[str]] = {}
    for scheme, value in pairs:
        ids.setdefault(scheme, set()).add(value)
    return ids


def _grouped_in_order(pairs: Iterable[Pair]) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for scheme, value in pairs:
        ids.setdefault(scheme, []).append(value)
    return ids


def _conflicting(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    """Two sets of ids that cannot be one paper's: a scheme both have, with no value in common."""
    return any(scheme in b and not values & b[scheme] for scheme, values in a.items())


def _merge_records(into: PaperRecord, other: PaperRecord) -> None:
    for name in _FIELDS:
        if not getattr(into, name) and getattr(other, name):
            setattr(into, name, getattr(other, name))
    into.authors = into.authors or other.authors
    into.external_ids = {**other.external_ids, **into.external_ids}
    into.tags = _union(into.tags, other.tags)
    into.notes = _union(into.notes, other.notes)


def _union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _load_existing(session: Session, papers: list[_Incoming]) -> _Existing:
    existing = _Existing()
    existing.owners(session, [pair for paper in papers for pair in paper.id_pairs()])
    by_title: dict[str, list[int]] = {}
    # Asked in order, chunk after chunk: each chunk reads the index pages next to the
    # last one's, which the database has at hand, rather than pages all over an index
    # of millions of titles.
    keys = sorted({key for paper in papers for key in paper.title_keys()})
    size = _lookup_chunk(session)
    for start in range(0, len(keys), size):
        rows = session.execute(
            select(PaperSource.title_key, PaperSource.paper_id)
            .where(PaperSource.title_key.in_(keys[start : start + size]))
            .distinct()
        )
        for key, pid in rows:
            by_title.setdefault(key, []).append(pid)
    candidates = sorted({pid for pids in by_title.values() for pid in pids})
    schemes: dict[int, set[str]] = {}
    for start in range(0, len(candidates), size):
        held_rows = session.execute(
            select(PaperExternalId.paper_id, PaperExternalId.scheme)
            .where(PaperExternalId.paper_id.in_(candidates[start : start + size]))
            .distinct()
        )
        for pid, scheme in held_rows:
            schemes.setdefault(pid, set()).add(scheme)
    for pid, held in schemes.items():
        existing.titles.set_schemes(pid, held)
    for key, pids in by_title.items():
        for pid in sorted(pids):  # the oldest paper first, whatever order the database returns
            existing.titles.add(key, pid)
    return existing


def _load_matched(session: Session, existing: _Existing, papers: list[_Incoming]) -> list[Paper]:
    """The stored papers these incoming ones match as things stand, read in one query
    (and one for their sources, one for their ids) rather than one each by
    _Existing.paper: the session's identity map has them at hand. A match that changes
    meanwhile (a paper before it in the import took its id) is read when asked for."""
    matched = (_match(existing, paper) for paper in papers)
    keys = {key for key in matched if key is not None and key not in existing.created}
    ids = [key if key > 0 else existing.flushed[-key - 1] for key in keys]
    return list(session.scalars(select(Paper).where(Paper.id.in_(ids)))) if ids else []


def _lookup_chunk(session: Session) -> int:
    return PG_CHUNK if session.get_bind().dialect.name == "postgresql" else CHUNK


def _match(existing: _Existing, paper: _Incoming) -> int | None:
    for pair in paper.id_pairs():
        if (owner := existing.by_external.get(pair)) is not None:
            return owner
    schemes = set(paper.ids())
    for title in paper.title_keys():
        if (found := existing.titles.first(title, schemes)) is not None:
            return found
    return None


def _remember(existing: _Existing, key: int, paper: Paper | Draft) -> None:
    pairs = [(x.scheme, x.value) for x in paper.external_ids]
    existing.titles.set_schemes(key, (scheme for scheme, _value in pairs))
    for source in paper.sources:
        existing.titles.add(source.title_key, key)
    existing.by_external.update(dict.fromkeys(pairs, key))
    existing.unowned.difference_update(pairs)


# --- storing and merging ---------------------------------------------------------------


def _store(session: Session, existing: _Existing, incoming: _Incoming) -> tuple[str, int]:
    """Store one paper's sources: "added", "updated" or "unchanged", and the paper's key."""
    key = _match(existing, incoming)
    paper = Draft() if key is None else existing.paper(session, key)
    if key is not None and _already_stored(paper, incoming):
        return "unchanged", key  # the usual re-import: nothing to merge again
    before = None if key is None else _snapshot(paper)
    for place, restored in incoming.sources.items():
        _put_source(paper, restored, incoming.keys[place])
    _show_merged(paper)
    if key is None:
        assert isinstance(paper, Draft)  # made above
        key = existing.new_key(paper)
    released = _hold_ids(session, existing, paper, key)
    if before is not None:
        if _snapshot(paper) == before:
            return "unchanged", key
        paper.updated_at = utcnow()
    if isinstance(paper, Paper):
        session.add(paper)
        existing.reopened.add(paper.id)
    existing.changed.add(key)
    if released or len(existing.created) >= BATCH:
        # An id a paper lets go of may be taken by the next one: its row must be gone
        # first (one flush could insert the new row before deleting the old).
        existing.flush(session)
    _remember(existing, key, paper)
    return ("added" if before is None else "updated"), key


def _already_stored(paper: Paper | Draft, incoming: _Incoming) -> bool:
    stored = {(s.collection, s.source): s for s in paper.sources}
    for place, restored in incoming.sources.items():
        row = stored.get(place)
        if row is None or (row.line, row.format) != (restored.line, restored.format):
            return False
        if row.fields != source_fields(restored.record):
            return False
    return True


def _put_source(paper: Paper | Draft, restored: RestoredSource, key: str) -> None:
    """Add the source, or replace what it said before (a file imported again); `key` is
    its title's title_key."""
    values = {
        "line": restored.line,
        "format": restored.format,
        "title_key": key,
        "fields": source_fields(restored.record),
    }
    place = (restored.collection, restored.source)
    row = next((s for s in paper.sources if (s.collection, s.source) == place), None)
    if row is None:
        if isinstance(paper, Draft):
            paper.sources.append(DraftSource(restored.collection, restored.source, **values))
        else:
            added = PaperSource(collection=restored.collection, source=restored.source, **values)
            paper.sources.append(added)
        return
    for name, value in values.items():
        if getattr(row, name) != value:
            setattr(row, name, value)


def _show_merged(paper: Paper | Draft) -> None:
    values = merged(((s.collection, s.source, s.line), s.fields) for s in paper.sources)
    shown = None
    if isinstance(paper, Draft):  # its title is one of its sources', keyed by this import
        title = values["title"]
        shown = next((s.title_key for s in paper.sources if s.fields["title"] == title), None)
    values["title_key"] = title_key(values["title"]) if shown is None else shown
    for name, value in values.items():
        if getattr(paper, name) != value:  # an equal value is not written back
            setattr(paper, name, value)


def _hold_ids(session: Session, existing: _Existing, paper: Paper | Draft, key: int) -> bool:
    """The paper holds every id its sources give, but those another paper holds already;
    True when it let go of one."""
    sources: Sequence[PaperSource | DraftSource] = paper.sources
    given = [pair for s in in_merge_order(sources) for pair in s.fields["external_ids"].items()]
    owners = existing.owners(session, given)
    wanted = [pair for pair in dict.fromkeys(given) if owners[pair] in (None, key)]
    if isinstance(paper, Draft):
        return _hold_only(existing, paper.external_ids, wanted, DraftId)
    return _hold_only(existing, paper.external_ids, wanted, PaperExternalId)


IdRow = TypeVar("IdRow", DraftId, PaperExternalId)


def _hold_only(
    existing: _Existing, rows: list[IdRow], wanted: list[Pair], make: type[IdRow]
) -> bool:
    """A paper's ids (`rows`) made `wanted`; True when it let go of one."""
    released = False
    for row in list(rows):
        if (row.scheme, row.value) not in wanted:  # no source gives it any more
            rows.remove(row)
            existing.by_external.pop((row.scheme, row.value), None)
            existing.unowned.add((row.scheme, row.value))
            released = True
    held = {(x.scheme, x.value) for x in rows}
    for scheme, value in wanted:
        if (scheme, value) not in held:
            rows.append(make(scheme=scheme, value=value))
    return released


def _snapshot(paper: Paper | Draft) -> str:
    """Everything an import can change about a paper, as one comparable value."""
    return json.dumps(
        {
            "shown": [getattr(paper, name) for name in SHOWN],
            "ids": sorted((x.scheme, x.value) for x in paper.external_ids),
            "sources": sorted(
                [s.collection, s.source, s.line, s.format, s.fields] for s in paper.sources
            ),
        },
        sort_keys=True,
    )

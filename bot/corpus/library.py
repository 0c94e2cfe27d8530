"""The paper library: storing imported records once, reading papers back.

Identity rule: a record is the paper that shares one of its external ids; failing that,
the paper with the same normalised title, unless the two carry different ids of the
same scheme (two BEIR documents can share a title and still be two documents).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sqlalchemy import func, select, tuple_, update
from sqlalchemy.orm import Session

from bot.corpus.readers import read_path, truncation_warnings
from bot.corpus.records import (
    COLLECTION_MAX,
    SOURCE_MAX,
    PaperRecord,
    check_name,
    check_record,
    title_key,
)
from bot.grammar import looks_like_number, number
from bot.search.service import IndexedPaper
from store import Database
from store.models import CorpusState, Paper, PaperExternalId, PaperSource, utcnow

CHUNK = 500  # rows per IN (...) lookup; well under every database's parameter limit
_FIELDS = ("abstract", "url", "track", "presentation", "award", "venue", "year")


@dataclass
class ImportSummary:
    path: str
    format: str = ""
    collection: str = ""
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    error: str | None = None
    # FILE:LINE notes on an import that went through but looks wrong (a prose file whose
    # last abstract stops mid-sentence, as a cut file does).
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


@dataclass
class _Existing:
    """What the database already knows about the identities in one import."""

    by_external: dict[tuple[str, str], int] = field(default_factory=dict)
    by_title: dict[str, list[int]] = field(default_factory=dict)


class Library:
    def __init__(self, db: Database):
        self.db = db

    # --- importing ----------------------------------------------------------------

    def import_file(
        self,
        path: str | Path,
        collection: str | None = None,
        fmt: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportSummary:
        """Read and store one file; a malformed file raises before anything is written."""
        path = Path(path)
        collection = collection or default_collection(path)
        _check_names(collection, path.name, str(path))  # before reading: a wrong name fails fast
        detected, records = read_path(path, fmt)
        return self.import_records(
            records,
            collection=collection,
            source=path.name,
            fmt=detected,
            progress=progress,
            path=str(path),
        )

    def import_records(
        self,
        records: list[PaperRecord],
        *,
        collection: str,
        source: str,
        fmt: str,
        progress: Callable[[int, int], None] | None = None,
        path: str | None = None,
    ) -> ImportSummary:
        """Store records, all or none; `path` names the file in errors (default: `source`).

        Every record is checked against the columns first, so that a value PostgreSQL
        would refuse (and SQLite store) refuses the whole import on both, at its FILE:LINE.
        """
        path = path or source
        _check_names(collection, source, path)
        for record in records:
            check_record(record, path)
        summary = ImportSummary(path=path, format=fmt, collection=collection)
        summary.warnings = truncation_warnings(fmt, records, path)
        records = _merge_duplicates(records)
        with self.db.session() as session:
            existing = _load_existing(session, records)
            for done, record in enumerate(records, 1):
                outcome = self._store(session, existing, record, collection, source, fmt)
                setattr(summary, outcome, getattr(summary, outcome) + 1)
                if progress and (done % 200 == 0 or done == len(records)):
                    progress(done, len(records))
            if summary.added or summary.updated:
                _bump_revision(session)
        return summary

    def _store(
        self, session: Session, existing: _Existing, record: PaperRecord, collection: str, source: str, fmt: str
    ) -> str:
        paper_id = _match(existing, record)
        if paper_id is None:
            paper = _new_paper(record)
            session.add(paper)
            paper.sources.append(PaperSource(collection=collection, source=source, line=record.line, format=fmt))
            session.flush()
            _remember(existing, paper)
            return "added"
        paper = session.get_one(Paper, paper_id)
        before = _snapshot(paper)
        same_source = any(s.collection == collection and s.source == source for s in paper.sources)
        _merge_into(paper, record, overwrite=same_source)
        known = {(x.scheme, x.value) for x in paper.external_ids}
        for scheme, value in record.external_ids.items():
            owner = existing.by_external.get((scheme, value))
            if (scheme, value) not in known and owner in (None, paper.id) and scheme not in paper.ids():
                paper.external_ids.append(PaperExternalId(scheme=scheme, value=value))
                existing.by_external[(scheme, value)] = paper.id
        if not same_source:
            paper.sources.append(PaperSource(collection=collection, source=source, line=record.line, format=fmt))
        if _snapshot(paper) == before:
            return "unchanged"
        paper.updated_at = utcnow()
        return "updated"

    # --- reading ------------------------------------------------------------------

    def revision(self) -> int:
        with self.db.session() as session:
            return session.scalar(select(CorpusState.revision).where(CorpusState.id == 1)) or 0

    def stamp(self) -> str:
        """The revision and the moment it was reached: unlike the bare number, this tells
        a recreated database (which counts revisions from 0 again) from the old one, so
        an index saved for the old one is never served for the new."""
        with self.db.session() as session:
            row = session.get(CorpusState, 1)
            return f"{row.revision}@{row.updated_at.isoformat()}" if row else "0"

    def count(self) -> int:
        with self.db.session() as session:
            return session.scalar(select(func.count(Paper.id))) or 0

    def papers(self) -> Iterator[IndexedPaper]:
        """Every paper in id order, as the search index wants it."""
        for paper in self.iter_papers():
            yield IndexedPaper(
                paper_id=paper.id,
                title=paper.title,
                text=searchable_text(paper),
                authors=paper.authors,
                track=paper.track,
                award=paper.award,
                collections=paper.collections,
                tags=paper.tags,
            )

    def iter_papers(self) -> Iterator[Paper]:
        last = 0
        while True:
            with self.db.session() as session:
                chunk = session.scalars(select(Paper).where(Paper.id > last).order_by(Paper.id).limit(CHUNK)).all()
            if not chunk:
                return
            yield from chunk
            last = chunk[-1].id

    def get_many(self, paper_ids: Iterable[int]) -> dict[int, Paper]:
        ids = list(paper_ids)
        with self.db.session() as session:
            rows = session.scalars(select(Paper).where(Paper.id.in_(ids))).all()
        return {p.id: p for p in rows}

    def find(self, ref: str) -> Paper | None:
        """A paper by its number, or by an external id such as an arXiv id or DOI."""
        ref = ref.strip()
        paper_number = number(ref)  # ASCII digits in the id column's range, or None
        if paper_number is None and looks_like_number(ref):
            return None  # ², ①, 10**30: no paper has that number, and no query is needed
        ref = ref.lstrip("#")
        with self.db.session() as session:
            if paper_number is not None:
                paper = session.get(Paper, paper_number)
                if paper is not None:
                    return paper
            return session.scalar(
                select(Paper).join(PaperExternalId).where(PaperExternalId.value == ref).limit(1)
            )

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
        count = 0
        for paper in self.iter_papers():
            out.write(json.dumps(export_record(paper), ensure_ascii=False) + "\n")
            count += 1
        return count


def default_collection(path: Path) -> str:
    return path.stem


def _check_names(collection: str, source: str, path: str) -> None:
    fix = "pass a shorter --collection"
    check_name("the collection name", collection, COLLECTION_MAX, path, fix)
    check_name("the file name", source, SOURCE_MAX, path, "rename the file")


def searchable_text(paper: Paper) -> str:
    """Title, abstract and reviewer notes: what BM25 sees of a paper."""
    return "\n".join([paper.title, paper.abstract, *paper.notes])


def export_record(paper: Paper) -> dict[str, Any]:
    return {
        "id": paper.id,
        "external_ids": paper.ids(),
        "title": paper.title,
        "title_derived": paper.title_derived,
        "authors": paper.authors,
        "abstract": paper.abstract,
        "url": paper.url,
        "track": paper.track,
        "presentation": paper.presentation,
        "award": paper.award,
        "venue": paper.venue,
        "year": paper.year,
        "tags": paper.tags,
        "notes": paper.notes,
        "collections": paper.collections,
        "sources": [
            {"collection": s.collection, "source": s.source, "line": s.line, "format": s.format}
            for s in paper.sources
        ],
    }


# --- identity and merging -------------------------------------------------------------


def _identity(record: PaperRecord) -> list[tuple[str, str]]:
    return [*sorted(record.external_ids.items()), ("title", title_key(record.title))]


def _merge_duplicates(records: list[PaperRecord]) -> list[PaperRecord]:
    """One record per paper within a file (a review that names a paper twice)."""
    merged: list[PaperRecord] = []
    seen: dict[tuple[str, str], PaperRecord] = {}
    for record in records:
        first = next((seen[k] for k in _identity(record) if k in seen), None)
        if first is None or _conflicting_ids(first.external_ids, record.external_ids):
            merged.append(record)
            first = record
        else:
            _merge_records(first, record)
        for key in _identity(record):
            seen.setdefault(key, first)
    return merged


def _conflicting_ids(a: dict[str, str], b: dict[str, str]) -> bool:
    return any(scheme in b and b[scheme] != value for scheme, value in a.items())


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


def _load_existing(session: Session, records: list[PaperRecord]) -> _Existing:
    existing = _Existing()
    pairs = list({(s, v) for r in records for s, v in r.external_ids.items()})
    for start in range(0, len(pairs), CHUNK):
        rows = session.execute(
            select(PaperExternalId.scheme, PaperExternalId.value, PaperExternalId.paper_id).where(
                tuple_(PaperExternalId.scheme, PaperExternalId.value).in_(pairs[start : start + CHUNK])
            )
        )
        existing.by_external.update({(s, v): pid for s, v, pid in rows})
    keys = list({title_key(r.title) for r in records})
    for start in range(0, len(keys), CHUNK):
        rows = session.execute(select(Paper.title_key, Paper.id).where(Paper.title_key.in_(keys[start : start + CHUNK])))
        for key, pid in rows:
            existing.by_title.setdefault(key, []).append(pid)
    return existing


def _match(existing: _Existing, record: PaperRecord) -> int | None:
    for pair in record.external_ids.items():
        if pair in existing.by_external:
            return existing.by_external[pair]
    for paper_id in existing.by_title.get(title_key(record.title), []):
        ids = {s: v for (s, v), pid in existing.by_external.items() if pid == paper_id}
        if not _conflicting_ids(ids, record.external_ids):
            return paper_id
    return None


def _remember(existing: _Existing, paper: Paper) -> None:
    existing.by_title.setdefault(paper.title_key, []).append(paper.id)
    for x in paper.external_ids:
        existing.by_external[(x.scheme, x.value)] = paper.id


def _new_paper(record: PaperRecord) -> Paper:
    return Paper(
        title=record.title,
        title_key=title_key(record.title),
        title_derived=record.title_derived,
        authors=list(record.authors),
        abstract=record.abstract,
        url=record.url,
        track=record.track,
        presentation=record.presentation,
        award=record.award,
        venue=record.venue,
        year=record.year,
        tags=list(record.tags),
        notes=list(record.notes),
        external_ids=[PaperExternalId(scheme=s, value=v) for s, v in record.external_ids.items()],
    )


def _merge_into(paper: Paper, record: PaperRecord, *, overwrite: bool) -> None:
    """Another source adds what the paper lacks; the same source may correct itself."""
    for name in _FIELDS:
        value = getattr(record, name)
        if value and (overwrite or not getattr(paper, name)):
            setattr(paper, name, value)
    if record.authors and (overwrite or not paper.authors):
        paper.authors = list(record.authors)
    if overwrite and not record.title_derived:
        paper.title = record.title
    paper.tags = _union(paper.tags, record.tags)
    paper.notes = _union(paper.notes, record.notes)


def _snapshot(paper: Paper) -> tuple:
    return (
        paper.title,
        tuple(paper.authors),
        *(getattr(paper, name) for name in _FIELDS),
        tuple(paper.tags),
        tuple(paper.notes),
        tuple(sorted((x.scheme, x.value) for x in paper.external_ids)),
        tuple(sorted((s.collection, s.source) for s in paper.sources)),
    )


def _bump_revision(session: Session) -> None:
    # An atomic increment: concurrent imports each move the revision, none is lost.
    session.execute(
        update(CorpusState).where(CorpusState.id == 1).values(revision=CorpusState.revision + 1, updated_at=utcnow())
    )

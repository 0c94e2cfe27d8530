"""Which papers changed since a revision (papers.changed_revision), and the database's identity."""

from __future__ import annotations

import json
import threading

import pytest
from alembic import command
from sqlalchemy import event, func, inspect, select, text, update

from bot.corpus import importing
from bot.corpus.library import Library
from bot.corpus.records import PaperRecord
from store import Database
from store.models import CorpusState, Paper, PaperSource
from tests.conftest import SEED_COUNTS, SEED_FILES, scratch_postgres


def record(number: int, abstract: str = "About it.") -> PaperRecord:
    return PaperRecord(f"Paper number {number}", line=number, abstract=abstract, authors=["A. Author"],
                       external_ids={"arxiv": f"2101.{number:05d}"})


def store(library: Library, records: list[PaperRecord], source: str = "a.jsonl", collection: str = "c"):
    summary = library.import_records(records, collection=collection, source=source, fmt="jsonl")
    return summary.added, summary.updated, summary.unchanged


def changed_ids(library: Library, since: int) -> list[int]:
    return [paper.paper_id for paper in library.papers_changed(since)]


def revisions(db: Database) -> dict[int, int]:
    with db.session() as session:
        return dict(session.execute(select(Paper.id, Paper.changed_revision)).all())


def paper_id(library: Library, number: int) -> int:
    return library.find(f"2101.{number:05d}").id


# --- what an import marks ---------------------------------------------------------------


def test_after_an_import_every_paper_changed_since_0_and_none_since_its_revision(db):
    library = Library(db)
    library.import_file(SEED_FILES["blog-review"], collection="blog")
    revision = library.revision()
    assert revision == 1
    assert list(library.papers_changed(0)) == list(library.papers())  # the same objects, in id order
    assert library.changed_count(0) == library.count() == SEED_COUNTS["blog-review"]
    assert list(library.papers_changed(revision)) == []
    assert library.changed_count(revision) == 0
    assert set(revisions(db).values()) == {revision}


def test_papers_changed_pages_through_more_than_one_chunk(db, monkeypatch):
    monkeypatch.setattr("bot.corpus.library.CHUNK", 7)  # the seed's 21 papers: three full pages
    library = Library(db)
    library.import_file(SEED_FILES["blog-review"], collection="blog")
    ids = changed_ids(library, 0)
    assert ids == sorted(ids) and len(set(ids)) == SEED_COUNTS["blog-review"]


def test_a_days_changes_are_read_by_the_changed_revision_index_not_the_whole_table(tmp_path):
    """SQLite, asked for changed papers in id order, walked every paper by id to avoid a
    sort: a day's import into all of arXiv read the whole table. Every statement
    papers_changed and changes run is planned on an index, never as a scan of papers."""
    from sqlalchemy import event

    db = Database(f"sqlite:///{tmp_path / 'plan.db'}")
    db.upgrade()
    library = Library(db)
    store(library, [record(n) for n in range(1, 40)])
    revision = library.revision()
    store(library, [record(n) for n in range(40, 45)])
    statements: list[tuple[str, tuple]] = []

    def seen(_connection, _cursor, sql, params, *_):
        statements.append((sql, params))

    event.listen(db.engine, "before_cursor_execute", seen)
    assert len(changed_ids(library, revision)) == 5
    ids, _revisions = library.changes(revision)  # what the index asks after an import
    assert list(ids) == sorted(ids) and len(ids) == 5
    event.remove(db.engine, "before_cursor_execute", seen)
    with db.engine.connect() as connection:
        plans = [" ".join(row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params))
                 for sql, params in statements if sql.lstrip().upper().startswith("SELECT")]
    assert any("ix_papers_changed_revision" in plan for plan in plans)
    assert not [plan for plan in plans if "SCAN papers" in plan or "rowid>?" in plan], plans
    db.dispose()


def test_reimporting_the_same_file_changes_nothing(db):
    library = Library(db)
    library.import_file(SEED_FILES["blog-review"], collection="blog")
    revision, before = library.revision(), revisions(db)
    summary = library.import_file(SEED_FILES["blog-review"], collection="blog")
    assert (summary.added, summary.updated) == (0, 0)
    assert library.revision() == revision
    assert changed_ids(library, revision) == [] and library.changed_count(revision) == 0
    assert revisions(db) == before


def test_an_import_that_updates_one_paper_and_adds_one_lists_exactly_those(db):
    library = Library(db)
    assert store(library, [record(1), record(2), record(3)]) == (3, 0, 0)
    first = library.revision()
    assert store(library, [record(1), record(2, "Revised."), record(3), record(4)]) == (1, 1, 2)
    second = library.revision()
    assert second == first + 1
    updated, added = paper_id(library, 2), paper_id(library, 4)
    assert changed_ids(library, first) == sorted([updated, added])
    assert library.changed_count(first) == 2
    assert [p.text for p in library.papers_changed(first)] == ["Paper number 2\nRevised.", "Paper number 4\nAbout it."]
    stamped = revisions(db)
    assert stamped[updated] == stamped[added] == second
    # What the search index takes an import's told papers by: ids and last revisions.
    ids, changed = library.changes(first)
    assert (list(ids), list(changed)) == (sorted([updated, added]), [second, second])
    every, stamps = library.changes(None)
    assert list(every) == sorted(stamped) and list(stamps) == [stamped[i] for i in sorted(stamped)]
    assert [p.text for p in library.papers_with([added])] == ["Paper number 4\nAbout it."]
    assert stamped[paper_id(library, 1)] == stamped[paper_id(library, 3)] == first
    assert changed_ids(library, second) == []


def test_new_papers_are_written_with_their_revision_and_not_updated_after(db):
    library = Library(db)
    store(library, [record(1)])
    statements: list[str] = []

    def seen(_conn, _cursor, statement, *_args) -> None:
        statements.append(" ".join(statement.split()).upper())

    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        assert store(library, [record(n) for n in range(2, 40)]) == (38, 0, 0)
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
    assert set(revisions(db).values()) == {1, 2} and library.revision() == 2
    assert changed_ids(library, 1) == sorted(paper_id(library, n) for n in range(2, 40))
    # A day's import into a large library paid a second pass over its rows for this.
    assert not [s for s in statements if s.startswith("UPDATE PAPERS ")], statements


def test_an_import_overtaken_by_another_stamps_its_papers_again(db, monkeypatch):
    """An import writes its new papers with the revision it expects to reach; when
    another import has moved the corpus on since it looked, it stamps them again."""
    library = Library(db)
    store(library, [record(1), record(2)])
    first = library.revision()
    looked = importing.current_revision
    # As if the revision was read just before another import committed its own.
    monkeypatch.setattr(importing, "current_revision", lambda session: looked(session) - 1)
    assert store(library, [record(1, "Revised."), record(3), record(4)]) == (2, 1, 0)
    assert library.revision() == first + 1
    stamped = revisions(db)
    assert {stamped[paper_id(library, n)] for n in (1, 3, 4)} == {first + 1}
    assert stamped[paper_id(library, 2)] == first
    assert changed_ids(library, first) == sorted(paper_id(library, n) for n in (1, 3, 4))


def test_concurrent_imports_get_their_own_revisions(db):
    library = Library(db)
    store(library, [record(n) for n in (1, 2)])
    start = library.revision()
    batches = {
        "a": [record(1, "Changed by a."), *(record(n) for n in range(100, 160))],
        "b": [record(2, "Changed by b."), *(record(n) for n in range(200, 260))],
    }
    # On PostgreSQL both transactions hold their papers before either bumps the revision;
    # SQLite lets one writer at a time in, so there they only start together.
    holding = threading.Barrier(2) if not db.is_sqlite else None
    starting = threading.Barrier(2)
    failures: list[BaseException] = []

    def run(name: str) -> None:
        def progress(done: int, total: int) -> None:
            if holding is not None and done == total:
                holding.wait(timeout=30)

        try:
            starting.wait(timeout=30)
            summary = Library(db).import_records(
                batches[name], collection=name, source=f"{name}.jsonl", fmt="jsonl", progress=progress
            )
            assert (summary.added, summary.updated) == (60, 1)
        except BaseException as problem:  # noqa: BLE001 - reported by the main thread
            failures.append(problem)

    threads = [threading.Thread(target=run, args=(name,)) for name in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert library.revision() == start + 2
    stamped = revisions(db)
    got = {}
    for name, records in batches.items():
        ids = [library.find(next(iter(r.external_ids.values()))).id for r in records]
        got[name] = {stamped[pid] for pid in ids}
        assert len(got[name]) == 1, f"import {name} stamped its papers with {got[name]}"
    assert sorted(got["a"] | got["b"]) == [start + 1, start + 2]
    touched = sorted(library.find(next(iter(r.external_ids.values()))).id for rs in batches.values() for r in rs)
    assert changed_ids(library, start) == touched
    assert library.changed_count(start) == len(touched) == 122


# --- identity ----------------------------------------------------------------------------


@pytest.fixture
def other_url(database_url, request, tmp_path):
    """A second, new database of the same kind."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'other.db'}"
        return
    with scratch_postgres(request.getfixturevalue("postgres_admin")) as url:
        yield url


def test_identity_is_stable_and_differs_for_another_database(db, other_url):
    with db.engine.connect() as connection:  # made with the row, by the migrations
        stored = connection.scalar(text("SELECT identity FROM corpus_state WHERE id = 1"))
    assert stored and len(stored) == 32
    library = Library(db)
    assert library.identity() == library.identity() == stored
    store(library, [record(1)])
    assert library.identity() == stored  # an import does not change it
    again = Database(db.url)
    assert Library(again).identity() == stored
    again.dispose()
    other = Database(other_url)
    other.upgrade()
    assert Library(other).identity() not in ("", stored)
    other.dispose()


def test_identity_is_made_when_missing(db):
    library = Library(db)
    with db.session() as session:
        session.execute(update(CorpusState).values(identity=None))
    made = library.identity()
    assert made and library.identity() == made
    with db.session() as session:  # no row at all: made with it, and imports count on from it
        session.execute(CorpusState.__table__.delete())
    assert library.revision() == 0
    assert library.identity() not in ("", made)
    store(library, [record(1)])
    assert library.revision() == 1
    assert changed_ids(library, 0) == [paper_id(library, 1)]


def test_a_database_without_the_row_gets_it_from_its_first_import(db):
    library = Library(db)
    with db.session() as session:
        session.execute(CorpusState.__table__.delete())
    store(library, [record(1)])
    assert library.revision() == 1 and library.identity()
    assert set(revisions(db).values()) == {1}


# --- the migration ------------------------------------------------------------------------


def test_the_migration_marks_old_papers_unchanged_and_gives_the_database_an_identity(db):
    database = Database(db.url)  # `db` is at head; take it back to 0008, rows as they were then
    config = database._alembic_config()
    command.downgrade(config, "0008_conversation")
    assert "changed_revision" not in {c["name"] for c in inspect(database.engine).get_columns("papers")}
    with database.engine.begin() as connection:
        connection.execute(text("UPDATE corpus_state SET revision = 5 WHERE id = 1"))
        for number in (1, 2):
            connection.execute(text(
                "INSERT INTO papers (id, title, title_key, title_derived, authors, abstract, url, tags, "
                "notes, year, created_at, updated_at) VALUES (:id, :title, :key, false, '[\"A\"]', "
                "'Text.', NULL, '[]', '[]', 2020, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"),
                {"id": number, "title": f"Old {number}", "key": f"old {number}"})
            connection.execute(text(
                "INSERT INTO paper_sources (paper_id, collection, source, line, format, title_key, fields) "
                "VALUES (:id, 'old', 'old.md', :id, 'openreview', :key, :fields)"),
                {"id": number, "key": f"old {number}",
                 "fields": json.dumps({"title": f"Old {number}", "external_ids": {}})})
    database.upgrade()
    library = Library(database)
    assert revisions(database) == {1: 0, 2: 0}
    assert library.changed_count(0) == 0 and changed_ids(library, 0) == []
    identity = library.identity()
    assert identity and len(identity) == 32
    assert "ix_papers_changed_revision" in {i["name"] for i in inspect(database.engine).get_indexes("papers")}
    assert store(library, [PaperRecord("Old 2", abstract="Newer text.")], source="new.md") == (0, 1, 0)
    assert changed_ids(library, 5) == [2] and revisions(database) == {1: 0, 2: 6}

    command.downgrade(config, "0008_conversation")
    inspector = inspect(database.engine)
    assert "changed_revision" not in {c["name"] for c in inspector.get_columns("papers")}
    assert "identity" not in {c["name"] for c in inspector.get_columns("corpus_state")}
    assert "ix_papers_changed_revision" not in {i["name"] for i in inspector.get_indexes("papers")}
    with database.engine.connect() as connection:  # the papers keep their sources
        assert connection.scalar(select(func.count()).select_from(PaperSource.__table__)) == 3
        assert connection.scalar(text("SELECT revision FROM corpus_state")) == 6
    database.upgrade()
    assert revisions(database) == {1: 0, 2: 0}
    assert Library(database).identity() not in ("", identity)
    database.dispose()

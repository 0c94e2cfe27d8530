"""New papers are written in bulk (bot.corpus.drafts.Draft, write_drafts); papers that
match one stored, or one written earlier in the same import, go through the ORM. Either
way the outcome is the same: these tests pin it where the two paths meet."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select, text

from bot.corpus.library import Library
from bot.corpus.records import PaperRecord, RestoredSource
from store import Database
from store.models import Paper, PaperExternalId, PaperSource


def record(title: str, line: int, **fields) -> PaperRecord:
    return PaperRecord(title, line=line, **fields)


def store(
    library: Library, records: list[PaperRecord], source: str = "f.jsonl", collection: str = "c"
):
    summary = library.import_records(records, collection=collection, source=source, fmt="jsonl")
    return summary.added, summary.updated, summary.unchanged


def rows(db) -> dict[str, list[tuple]]:
    """Every stored row of the corpus tables but their timestamps and row ids."""
    papers = Paper.__table__
    columns = [c for c in papers.c if c.name not in ("created_at", "updated_at")]
    with db.session() as session:
        return {
            "papers": [tuple(r) for r in session.execute(select(*columns).order_by(papers.c.id))],
            "sources": sorted(
                (
                    s.paper_id,
                    s.collection,
                    s.source,
                    s.line,
                    s.format,
                    s.title_key,
                    json.dumps(s.fields, sort_keys=True),
                )
                for s in session.scalars(select(PaperSource))
            ),
            "ids": sorted(
                (x.paper_id, x.scheme, x.value) for x in session.scalars(select(PaperExternalId))
            ),
        }


# Written after every paper (1), after a few, or only at the end (the default, 5,000):
# a paper merging into one of the same import finds it written, or still a draft.
BATCHES = [1, 2, None]


@pytest.fixture(params=BATCHES, ids=lambda b: f"batch-{b or 'default'}")
def batch(request, monkeypatch):
    if request.param is not None:
        monkeypatch.setattr("bot.corpus.importing.BATCH", request.param)
    return request.param


def test_new_papers_get_consecutive_ids_in_file_order(db, batch):
    library = Library(db)
    assert store(
        library,
        [record(f"Paper {n}", n, external_ids={"arxiv": f"2101.{n:05d}"}) for n in range(1, 8)],
    ) == (7, 0, 0)
    assert [library.find(f"2101.{n:05d}").id for n in range(1, 8)] == list(range(1, 8))
    assert store(library, [record(f"Paper {n}", n) for n in range(10, 13)], source="g.jsonl") == (
        3,
        0,
        0,
    )
    assert [p.paper_id for p in library.papers()] == list(range(1, 11))


def test_a_later_line_with_an_earlier_lines_title_or_doi_is_the_same_paper(db, batch):
    library = Library(db)
    records = [
        record("Deep Learning for Cats", 1, abstract="Short.", tags=["cats"]),
        record("Attention Is All You Need", 2, external_ids={"doi": "10.1000/ATT"}),
        record(
            "deep learning for cats!",
            3,
            abstract="A longer abstract.",
            tags=["ml"],
            authors=["A. Author"],
        ),
        record(
            "Attention is all you need (v2)",
            4,
            external_ids={"doi": "10.1000/att"},
            venue="NeurIPS",
        ),
        record("Something Else", 5),
    ]
    assert store(library, records) == (3, 0, 0)
    assert library.count() == 3
    cats = library.get_many([1])[1]
    assert (cats.title, cats.abstract, cats.tags, cats.authors) == (
        "Deep Learning for Cats",
        "Short.",
        ["cats", "ml"],
        ["A. Author"],
    )
    attention = library.find("10.1000/att")
    assert (attention.id, attention.title, attention.venue) == (
        2,
        "Attention Is All You Need",
        "NeurIPS",
    )
    assert [s.line for s in attention.sources] == [2]


def test_a_paper_sharing_an_id_with_an_earlier_new_one_merges_into_it(db, batch):
    """The file names the two apart (their arXiv ids differ), but the second holds the
    DOI the first took: the import files it under the first paper, whose one source in
    this file now says what the later line says, and which lets go of the arXiv id no
    source gives any more. Counted as one added and one updated, as before."""
    library = Library(db)
    records = [
        record(
            "Graph Networks",
            1,
            external_ids={"doi": "10.1000/g", "arxiv": "2101.00001"},
            abstract="First.",
        ),
        record("Unrelated", 2),
        record(
            "Graph Networks",
            3,
            external_ids={"doi": "10.1000/g", "arxiv": "2101.00002"},
            abstract="Second.",
        ),
    ]
    assert store(library, records) == (2, 1, 0)
    paper = library.find("10.1000/g")
    assert paper.id == 1 and paper.abstract == "Second."
    assert sorted((x.scheme, x.value) for x in paper.external_ids) == [
        ("arxiv", "2101.00002"),
        ("doi", "10.1000/g"),
    ]
    assert library.find("2101.00001") is None
    assert library.changed_count(0) == 2


def test_a_title_shared_with_an_earlier_new_paper_merges_unless_an_id_conflicts(db, batch):
    library = Library(db)
    records = [
        record("Shared Title", 1, external_ids={"doi": "10.1000/a"}),
        record("Shared Title", 2, external_ids={"doi": "10.1000/b"}),  # conflicts: a second paper
        record(
            "Shared Title", 3, external_ids={"arxiv": "2101.00003", "doi": "10.1000/c"}
        ),  # a third
        record("Shared Title", 4, external_ids={"beir": "7"}),  # merges into the first
    ]
    assert store(library, records) == (3, 0, 0)
    first = library.find("10.1000/a")
    assert first.id == 1 and first.ids() == {"beir": "7", "doi": "10.1000/a"}
    assert [library.find(ref).id for ref in ("10.1000/b", "10.1000/c", "2101.00003")] == [2, 3, 3]


def test_a_file_mixing_stored_and_new_papers(db, batch):
    library = Library(db)

    def stored(n: int, **fields) -> PaperRecord:
        return record(
            f"Stored {n}", n, external_ids={"arxiv": f"2101.{n:05d}"}, abstract="Old.", **fields
        )

    assert store(library, [stored(1), stored(2), stored(3)]) == (3, 0, 0)
    first = library.revision()
    elsewhere = RestoredSource(
        "d", "other.jsonl", 8, "jsonl", record("stored 3", 8, notes=["by its title"])
    )
    records = [  # the same file again, grown and changed
        stored(1),  # unchanged
        record("Stored 2", 2, external_ids={"arxiv": "2101.00002"}, abstract="Revised."),
        stored(3, tags=["t"]),
        record("New A", 4, external_ids={"arxiv": "2101.00010"}),
        record("New B", 5),
        record("new b", 6, notes=["the same as line 5"]),
        record("Stored 3 (exported)", 7, sources=[elsewhere]),  # found by its source's title
    ]
    assert store(library, records) == (2, 2, 1)
    assert library.revision() == first + 1
    assert [p.paper_id for p in library.papers_changed(first)] == [2, 3, 4, 5]
    assert library.find("2101.00002").abstract == "Revised."
    three = library.find("2101.00003")
    assert (three.collections, three.tags, three.notes) == (["c", "d"], ["t"], ["by its title"])
    new_b = library.get_many([5])[5]
    assert (new_b.title, new_b.notes, new_b.collections) == ("New B", ["the same as line 5"], ["c"])
    assert library.find("2101.00010").id == 4
    assert library.count() == 5


def test_the_bulk_path_stores_what_the_orm_path_does(db, batch):
    """A new paper from two sources (written in bulk) and the same paper stored from one
    source, then merged with the other (by the ORM), end in the same rows."""

    def sources() -> list[RestoredSource]:
        return [
            RestoredSource(
                "b",
                "two.bib",
                4,
                "jsonl",
                record(
                    "Twice Named",
                    4,
                    external_ids={"doi": "10.1000/t"},
                    authors=["B"],
                    year=2021,
                    url="http://b",
                ),
            ),
            RestoredSource(
                "a",
                "one.jsonl",
                9,
                "jsonl",
                record(
                    "Twice named!",
                    9,
                    abstract="Abs.",
                    tags=["x", "y"],
                    external_ids={"arxiv": "2101.00009"},
                    title_derived=True,
                ),
            ),
        ]

    def comparable() -> dict[str, list[tuple]]:  # but the paper's id and changed_revision
        found = rows(db)
        return {
            "papers": [r[1:-1] for r in found["papers"]],
            "sources": [r[1:] for r in found["sources"]],
            "ids": [r[1:] for r in found["ids"]],
        }

    library = Library(db)
    assert store(library, [record("Twice Named", 1, sources=sources())], source="export.jsonl") == (
        1,
        0,
        0,
    )
    in_bulk = comparable()
    with db.session() as session:  # start again: the same sources one at a time
        for table in (PaperExternalId, PaperSource, Paper):
            session.execute(table.__table__.delete())
    bib, jsonl = sources()
    assert store(library, [jsonl.record], source="one.jsonl", collection="a") == (1, 0, 0)
    assert store(library, [bib.record], source="two.bib", collection="b") == (0, 1, 0)
    assert comparable() == in_bulk
    assert len(in_bulk["papers"]) == 1 and len(in_bulk["sources"]) == 2 and len(in_bulk["ids"]) == 2


def test_progress_counts_every_paper_across_batches(db, monkeypatch):
    monkeypatch.setattr("bot.corpus.importing.BATCH", 7)
    library = Library(db)
    seen: list[tuple[int, int]] = []
    records = [record(f"Paper {n}", n, external_ids={"beir": str(n)}) for n in range(1, 451)]
    summary = library.import_records(
        records,
        collection="c",
        source="f.jsonl",
        fmt="jsonl",
        progress=lambda done, total: seen.append((done, total)),
    )
    assert (summary.added, summary.updated, summary.unchanged) == (450, 0, 0)
    assert seen == [(200, 450), (400, 450), (450, 450)]
    assert library.changed_count(0) == library.count() == 450
    assert [p.paper_id for p in library.papers()] == list(range(1, 451))
    again = library.import_records(
        [record(f"Paper {n}", n, external_ids={"beir": str(n)}) for n in range(1, 451)],
        collection="c",
        source="f.jsonl",
        fmt="jsonl",
    )
    assert (again.added, again.updated, again.unchanged) == (0, 0, 450)


def test_papers_for_the_index_are_what_the_stored_papers_say(db):
    library = Library(db)
    store(
        library,
        [
            record(
                "One",
                1,
                abstract="Abs.",
                notes=["n"],
                authors=["A"],
                track="Oral",
                award="Best",
                tags=["t"],
                external_ids={"doi": "10.1000/one"},
            )
        ],
        collection="zeta",
    )
    store(
        library,
        [record("One", 1, external_ids={"doi": "10.1000/one"}), record("Two", 2)],
        collection="alpha",
        source="g.jsonl",
    )
    indexed = list(library.papers())
    assert [
        (
            p.paper_id,
            p.title,
            p.text,
            list(p.authors),
            p.track,
            p.award,
            list(p.collections),
            list(p.tags),
        )
        for p in indexed
    ] == [
        (1, "One", "One\nAbs.\nn", ["A"], "Oral", "Best", ["alpha", "zeta"], ["t"]),
        (2, "Two", "Two\n", [], None, None, ["alpha"], []),
    ]


@pytest.mark.postgres
def test_a_large_import_on_postgresql_updates_the_planners_statistics(postgres_url, monkeypatch):
    """Else the next import plans its lookups for the empty tables (table scans) until
    autovacuum analyzes them. (SQLite has no such statistics to refresh.)"""
    db = Database(postgres_url)
    db.upgrade()
    monkeypatch.setattr("bot.corpus.importing.ANALYZE_AFTER", 3)
    library = Library(db)
    assert store(
        library, [record(f"Paper {n}", n, external_ids={"beir": str(n)}) for n in (1, 2, 3)]
    ) == (
        3,
        0,
        0,
    )
    query = text(
        "select relname, reltuples from pg_class"
        " where relname in ('papers', 'paper_sources', 'paper_external_ids')"
    )
    with db.session() as session:
        statistics = dict(session.execute(query).all())
    db.dispose()
    assert statistics == {"papers": 3, "paper_sources": 3, "paper_external_ids": 3}


class Heard(list):
    """A Written that keeps what it is told: the papers, and each commit's revision and
    reopened papers."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[tuple[int, set[int]]] = []

    def __call__(self, papers) -> None:
        self.extend(papers)

    def committed(self, revision, reopened) -> None:
        self.commits.append((revision, set(reopened)))


def test_new_papers_are_told_as_the_index_reads_them_back(db, batch):
    """`written` hears of each new paper once, as it is written, and at the commit of
    the papers told before that it changed again; the search index takes the others
    as told without reading them back, so what it hears must be what `papers()` reads
    for every paper the commit does not name."""
    from bot.search.builtin.batch import content_hash

    library = Library(db)
    exported = [
        RestoredSource("d", "d.jsonl", 8, "jsonl", record("From Elsewhere", 8, tags=["z"])),
        RestoredSource("e", "e.bib", 2, "bibtex", record("From elsewhere", 2, notes=["n"])),
    ]
    graph = {"doi": "10.1000/g"}
    records = [
        record("Graph", 1, external_ids={**graph, "arxiv": "2101.00001"}, abstract="First."),
        record("Dogs", 2, track="Oral", award="Best paper", notes=["a note"], tags=["x", "x"]),
        record("Cats", 3, abstract="Short.", authors=["A. B", "C. D"]),
        record("From elsewhere", 4, sources=exported),  # two collections, d and e
        # Its arXiv id tells it from line 1 in the file, its DOI finds line 1's paper when
        # stored: it merges into that paper, a draft still, or (batch 1, 2) a written row.
        record("Graph", 5, external_ids={**graph, "arxiv": "2101.00002"}, abstract="Second."),
    ]
    heard = Heard()
    library.import_records(records, collection="c", source="f.jsonl", fmt="jsonl", written=heard)
    stored = {p.paper_id: p for p in library.papers()}
    assert sorted(p.paper_id for p in heard) == sorted(stored)  # each new paper, once
    merged_later = {1} if batch in (1, 2) else set()  # written before line 5 came
    assert heard.commits == [(library.revision(), merged_later)]
    for paper in heard:
        same = paper == stored[paper.paper_id]
        assert same == (paper.paper_id not in merged_later), paper
        assert (content_hash(paper) == content_hash(stored[paper.paper_id])) == same
    assert stored[1].text == "Graph\nSecond." and stored[4].collections == ["d", "e"]


def test_nothing_is_told_of_papers_that_only_change(db):
    library = Library(db)
    store(library, [record("Cats", 1)])
    heard = Heard()
    library.import_records(
        [record("Cats", 1, abstract="Now with one.")], collection="c", source="f.jsonl",
        fmt="jsonl", written=heard,
    )
    assert heard == [] and library.get_many([1])[1].abstract == "Now with one."
    assert heard.commits == [(library.revision(), {1})]  # a stored paper, changed


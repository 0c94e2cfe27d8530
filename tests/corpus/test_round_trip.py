"""Export, import, merge: on SQLite and PostgreSQL alike.

- `export` then `import` into an empty database gives back every paper, field for field,
  with its sources (collection, file, line, format) instead of a collection named after
  the export; importing it where the papers are already changes nothing.
- A paper from several sources shows the same values whatever order they came in.
- A paper is found by any spelling of any id its sources gave.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from alembic import command
from sqlalchemy import select, text

from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, title_key
from store import Database
from store.models import PaperSource
from tests.conftest import DATA, SEED_FILES, import_seeds, scratch_postgres
from tests.processes import paperclub

BIB = DATA / "sample.bib"
PICKS = DATA / "arxiv_picks.jsonl"  # shares three papers with sample.bib
BEIR = DATA / "beir_sample.jsonl"


@pytest.fixture
def other_url(request, database_url, tmp_path) -> Iterator[str]:
    """A second empty database of the same kind as `db`."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'other.db'}"
        return
    with scratch_postgres(request.getfixturevalue("postgres_admin")) as url:
        yield url


@pytest.fixture
def fresh(other_url) -> Iterator[Library]:
    database = Database(other_url)
    database.upgrade()
    yield Library(database)
    database.dispose()


def exported(library: Library) -> list[dict[str, Any]]:
    """The export, without the database's own numbers, in an order that does not depend on them."""
    out = io.StringIO()
    library.export(out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    for row in rows:
        del row["id"]
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


def dump(library: Library, path) -> None:
    with path.open("w", encoding="utf-8") as out:
        library.export(out)


def counts(summary) -> tuple[int, int, int]:
    return summary.added, summary.updated, summary.unchanged


# --- the round trip -------------------------------------------------------------------------


def test_export_then_import_into_an_empty_database_gives_back_every_paper(db, fresh, tmp_path):
    library = Library(db)
    import_seeds(library)
    for path in (BIB, PICKS, BEIR):
        library.import_file(path)
    before = exported(library)
    _the_corpus_exercises_every_field(before)
    everything = tmp_path / "all.jsonl"
    dump(library, everything)

    summary = fresh.import_file(everything)
    assert counts(summary) == (len(before), 0, 0)
    assert exported(fresh) == before
    assert fresh.collections() == library.collections()
    assert "export" not in summary.collection and "all" not in summary.collection.split(", ")

    revision = library.revision()
    assert counts(library.import_file(everything)) == (0, 0, len(before))
    assert counts(fresh.import_file(everything)) == (0, 0, len(before))
    assert library.revision() == revision
    # The sources came back as they were: importing an original file again changes nothing.
    assert counts(fresh.import_file(BIB)) == (0, 0, 3)
    assert counts(fresh.import_file(SEED_FILES["openreview"], collection="openreview"))[:2] == (0, 0)


def test_the_command_line_round_trip_of_issue_16(tmp_path):
    """`paperclub export -o all.jsonl`, then `paperclub import all.jsonl` into a fresh database."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    assert paperclub("import", str(BIB), str(PICKS), cwd=first).returncode == 0
    assert paperclub("export", "-o", "all.jsonl", cwd=first).returncode == 0
    (second / "all.jsonl").write_bytes((first / "all.jsonl").read_bytes())
    imported = paperclub("import", "all.jsonl", cwd=second)
    assert imported.returncode == 0, imported.stderr
    assert "all.jsonl: jsonl, collection arxiv_picks, sample: 4 added, 0 updated, 0 unchanged" in imported.stdout
    again = paperclub("export", cwd=second)
    assert _without_ids(again.stdout) == _without_ids((first / "all.jsonl").read_text(encoding="utf-8"))


def _without_ids(export: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in export.splitlines()]
    return sorted(({k: v for k, v in row.items() if k != "id"} for row in rows), key=lambda r: r["title"])


def _the_corpus_exercises_every_field(rows: list[dict[str, Any]]) -> None:
    """So that the comparison above compares something in each field."""
    for name in ("external_ids", "authors", "abstract", "url", "track", "presentation", "award",
                 "venue", "year", "tags", "notes", "title_derived"):
        assert any(row[name] for row in rows), name
    sources = [s for row in rows for s in row["sources"]]
    assert {s["format"] for s in sources} >= {"openreview", "poster-session", "trending",
                                               "topic-abstracts", "blog-review", "bibtex", "jsonl"}
    assert any(len(row["sources"]) > 1 for row in rows)
    assert any("fields" in s for s in sources)  # a source that says something else than its paper


def test_a_plain_json_lines_file_goes_into_the_named_collection_and_an_export_does_not(db, tmp_path):
    library = Library(db)
    library.import_file(PICKS, collection="picks")
    dumped = tmp_path / "export.jsonl"
    dump(library, dumped)
    stripped = tmp_path / "stripped.jsonl"
    stripped.write_text(
        "".join(json.dumps({k: v for k, v in row.items() if k != "sources"}) + "\n"
                for row in map(json.loads, dumped.read_text(encoding="utf-8").splitlines())),
        encoding="utf-8",
    )
    assert library.import_file(dumped, collection="elsewhere").collection == "picks"
    assert {name for name, _ in library.collections()} == {"picks"}
    summary = library.import_file(stripped)
    assert (summary.collection, summary.updated) == ("stripped", 4)
    assert {name for name, _ in library.collections()} == {"picks", "stripped"}


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ("nope", "'sources' must be a list of objects"),
        ([{"source": "a.md", "line": 1, "format": "openreview"}],
         "a source's 'collection' must be a non-empty string"),
        ([{"collection": "c", "source": "a.md", "line": 0, "format": "openreview"}],
         "a source's 'line' must be a whole number from 1 to 2147483647"),
        ([{"collection": "c", "source": "a.md", "line": 2**31, "format": "openreview"}],
         "a source's 'line' must be a whole number from 1 to 2147483647"),
        ([{"collection": "c", "source": "a.md", "line": 1, "format": "x", "fields": []}],
         "a source's 'fields' must be an object"),
        ([{"collection": "c", "source": "a.md", "line": 1, "format": "x"},
          {"collection": "c", "source": "a.md", "line": 9, "format": "x"}],
         "'sources' names the same collection and file twice"),
        ([{"collection": "c" * 201, "source": "a.md", "line": 1, "format": "x"}],
         "the source's collection is 201 characters long, at most 200 fit"),
        ([{"collection": "c", "source": "a.md", "line": 1, "format": "f" * 33}],
         "the source's format is 33 characters long, at most 32 fit"),
        ([{"collection": "c", "source": "a.md", "line": 1, "format": "x", "fields": {"year": 99999}}],
         "the year 99999 is outside 1000-2200"),
    ],
)
def test_broken_sources_in_an_export_refuse_the_file_at_their_line(db, tmp_path, sources, message):
    library = Library(db)
    path = tmp_path / "export.jsonl"
    good = {"title": "Fine", "abstract": "x."}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "sources": sources}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError) as raised:
        library.import_file(path)
    assert str(raised.value).startswith(f"{path}:2: ")
    assert message in raised.value.message
    assert library.count() == 0


# --- merges that do not depend on order ----------------------------------------------------


@pytest.mark.parametrize("order", [(BIB, PICKS), (PICKS, BIB), (BIB, PICKS, BIB), (PICKS, BIB, PICKS)])
def test_the_same_sources_in_any_order_give_the_same_papers(db, fresh, order):
    first, second = Library(db), fresh
    for path in (BIB, PICKS):
        first.import_file(path)
    for path in order:
        second.import_file(path)
    assert exported(second) == exported(first)
    revision = second.revision()
    for path in (BIB, PICKS):
        assert counts(second.import_file(path))[:2] == (0, 0)
    assert second.revision() == revision


def test_a_shared_paper_keeps_each_sources_fields_and_shows_the_merge(db):
    library = Library(db)
    assert counts(library.import_file(BIB)) == (3, 0, 0)
    assert counts(library.import_file(PICKS)) == (1, 3, 0)  # three shared, one new
    assert library.count() == 4
    bert = library.find("arXiv:1810.04805")
    # The longest abstract (the picks'), the earliest source's year ("arxiv_picks" < "sample").
    assert bert.abstract.startswith("We introduce a new language representation model called BERT, which")
    assert (bert.year, bert.venue) == (2019, "NAACL")
    assert bert.notes == ["Read with the GLUE paper."]
    by_file = {s.source: s for s in bert.sources}
    assert by_file["sample.bib"].fields["year"] == 2018  # the BibTeX's own value is kept
    assert by_file["sample.bib"].fields["abstract"].endswith("(7.7% point absolute improvement).")
    assert (by_file["sample.bib"].line, by_file["arxiv_picks.jsonl"].line) == (14, 2)
    causal = library.find("2102.11107")  # the BibTeX eprint v1 and the JSON id v2: one paper
    assert [s.format for s in causal.sources] == ["jsonl", "bibtex"]
    assert len(causal.authors) == 7 and causal.tags == ["causality"]
    vit = library.find("https://openreview.net/forum?id=YicbFdNTTy")  # matched by title alone
    assert (vit.track, vit.tags) == ("Oral", ["vision", "vision transformer", "image classification"])


def test_importing_a_source_again_corrects_only_its_own_fields(db, tmp_path):
    library = Library(db)
    library.import_file(BIB)
    picks = tmp_path / "arxiv_picks.jsonl"
    picks.write_text(PICKS.read_text(encoding="utf-8").replace('"year": 2019', '"year": 2020'), encoding="utf-8")
    library.import_file(picks)
    assert library.find("1810.04805").year == 2020
    picks.write_text(PICKS.read_text(encoding="utf-8"), encoding="utf-8")
    assert counts(library.import_file(picks)) == (0, 1, 3)
    assert library.find("1810.04805").year == 2019


def test_a_paper_is_found_again_by_any_of_its_sources_titles(db):
    library = Library(db)
    records = {
        "a": PaperRecord("Alpha Paper", external_ids={"arxiv": "2101.00001"}),
        "b": PaperRecord("Alpha Paper: The Extended Version", external_ids={"arxiv": "2101.00001"}),
        "c": PaperRecord("Alpha paper - the extended version"),  # no id: found by b's title
    }
    for name, record in records.items():
        library.import_records([record], collection=name, source=f"{name}.jsonl", fmt="jsonl")
    assert library.count() == 1
    [paper] = library.get_many([1]).values()
    assert paper.title == "Alpha Paper"  # collection "a" comes first
    assert [s.collection for s in paper.sources] == ["a", "b", "c"]


def test_every_id_a_source_gave_finds_the_paper_and_the_first_is_shown(db):
    library = Library(db)
    def store(collection: str, **ids: str) -> None:
        record = PaperRecord("A Paper", external_ids={"arxiv": "2101.00001", **ids})
        library.import_records([record], collection=collection, source="x.jsonl", fmt="jsonl")
    store("b", doi="10.1000/b")
    assert library.find("1").ids() == {"arxiv": "2101.00001", "doi": "10.1000/b"}
    store("a", doi="10.1000/a")
    paper = library.find("10.1000/B")
    assert paper is not None and library.find("doi:10.1000/a").id == paper.id
    assert paper.ids() == {"arxiv": "2101.00001", "doi": "10.1000/a"}  # "a" comes before "b"
    store("a", doi="10.1000/c")  # source a corrects its DOI: the old one is let go
    assert library.find("10.1000/a") is None and library.find("10.1000/c").id == paper.id


# --- finding papers by what members type ----------------------------------------------------


@pytest.fixture
def identified(db) -> Library:
    library = Library(db)
    for path in (DATA / "arxiv_sample.atom", BIB, PICKS, BEIR):
        library.import_file(path)
    return library


@pytest.mark.parametrize(
    ("ref", "title"),
    [
        ("arXiv:1706.03762", "Attention Is All You Need"),
        ("ARXIV:1706.03762v2", "Attention Is All You Need"),
        ("1706.03762v1", "Attention Is All You Need"),
        ("https://arxiv.org/abs/1706.03762", "Attention Is All You Need"),
        ("https://arxiv.org/abs/1706.03762v5", "Attention Is All You Need"),
        ("https://arxiv.org/pdf/1706.03762.pdf", "Attention Is All You Need"),
        ("http://export.arxiv.org/abs/1706.03762", "Attention Is All You Need"),
        ("10.48550/ARXIV.1706.03762", "Attention Is All You Need"),
        ("hep-th/9711200v1", "The Large N Limit of Superconformal Field Theories and Supergravity"),
        ("https://doi.org/10.1023/A:1026654312961",
         "The Large N Limit of Superconformal Field Theories and Supergravity"),
        ("DOI:10.1109/JPROC.2021.3058954", "Toward Causal Representation Learning"),
        ("10.1109/cvpr.2016.90", "Deep Residual Learning for Image Recognition"),
        ("https://openreview.net/forum?id=YicbFdNTTy",
         "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale"),
    ],
)
def test_find_resolves_every_spelling(identified, ref, title):
    paper = identified.find(ref)
    assert paper is not None and title_key(paper.title) == title_key(title)


@pytest.mark.parametrize(
    ("ref", "title"),
    [
        ("1706.03762", "Attention Is All You Need"),  # the stored form itself
        ("scholkopf2021causal", "Toward Causal Representation Learning"),  # a BibTeX key as given
        ("7912", ("BC1 RNA, the transcript from a master gene for ID element amplification, "
                  "is able to prime its own reverse transcription.")),  # a BEIR id, no such number
        ("2", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"),
        ("#2", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"),
    ],
)
def test_find_still_takes_numbers_and_ids_exactly_as_sources_gave_them(identified, ref, title):
    # What find did before identifiers were parsed, and must go on doing.
    paper = identified.find(ref)
    assert paper is not None and title_key(paper.title) == title_key(title)


@pytest.mark.parametrize("ref", ["arXiv:2401.99999", "10.1000/none", "999", "²", "1706.0376", ""])
def test_find_answers_none_for_unknown_references(identified, ref):
    # A guard against a parser that reads too much: none of these is a stored paper.
    assert identified.find(ref) is None


# --- the migration --------------------------------------------------------------------------


def test_the_migration_gives_old_sources_their_papers_fields_and_normalises_ids(db):
    database = Database(db.url)  # `db` is at head; take it back to 0006, rows as they were then
    command.downgrade(database._alembic_config(), "0006_edges")
    with database.engine.begin() as connection:
        for number, title in ((1, "Old Paper"), (2, "Second"), (3, "Third")):
            connection.execute(text(
                "INSERT INTO papers (id, title, title_key, title_derived, authors, abstract, url, tags, "
                "notes, year, created_at, updated_at) VALUES (:id, :title, :key, false, '[\"A\"]', "
                "'Text.', NULL, '[\"t\"]', '[]', 2020, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"),
                {"id": number, "title": title, "key": title.lower()})
        connection.execute(text(
            "INSERT INTO paper_external_ids (paper_id, scheme, value) VALUES "
            "(1, 'arxiv', '2101.00001v3'), (1, 'doi', '10.1000/ABC'), (1, 'beir', 'K1'), "
            "(2, 'arxiv', '2101.00002'), (2, 'arxiv', '2101.00002v1'), "  # the same id twice
            "(3, 'doi', '10.1000/Abc')"))  # paper 1's DOI, in other letters
        connection.execute(text(
            "INSERT INTO paper_sources (paper_id, collection, source, line, format) VALUES "
            "(1, 'old', 'old.md', 4, 'openreview'), (1, 'older', 'older.bib', 9, 'bibtex'), "
            "(2, 'old', 'old.md', 8, 'openreview'), (3, 'old', 'old.md', 12, 'openreview')"))
    database.upgrade()
    library = Library(database)
    paper = library.find("https://arxiv.org/abs/2101.00001")
    assert paper is not None and library.find("doi:10.1000/abc").id == 1
    assert paper.ids() == {"arxiv": "2101.00001", "beir": "K1", "doi": "10.1000/abc"}
    assert library.find("2").ids() == {"arxiv": "2101.00002"}
    assert library.find("3").ids() == {"doi": "10.1000/Abc"}  # left as it was: paper 1 holds it
    with database.session() as session:
        rows = session.scalars(select(PaperSource).where(PaperSource.paper_id == 1)).all()
        assert sorted((s.title_key, s.fields["title"], s.fields["authors"], s.fields["year"]) for s in rows) == [
            ("old paper", "Old Paper", ["A"], 2020)] * 2
        assert rows[0].fields["external_ids"] == paper.ids()
    assert counts(library.import_records(
        [PaperRecord("Old Paper", line=4, abstract="Text.", authors=["A"], tags=["t"], year=2020,
                     external_ids={"arxiv": "2101.00001", "doi": "10.1000/abc", "beir": "K1"})],
        collection="old", source="old.md", fmt="openreview")) == (0, 0, 1)
    database.dispose()

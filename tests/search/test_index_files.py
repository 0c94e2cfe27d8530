"""The persisted index: written once, loaded without re-tokenising, extended on import,
swapped atomically while other threads and processes search."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bot.corpus.library import Library
from bot.corpus.records import PaperRecord
from bot.search.builtin.content import IndexContent
from bot.search.builtin.files import IndexStore, default_index_dir
from bot.search.builtin.index import SearchIndex
from bot.search.builtin.service import SearchService
from bot.search.engine import StoredIndex
from bot.search.params import Bm25Params
from bot.search.query import Query
from bot.search.tokens import Tokenizer
from store import Database

SEED_TOTAL = 1091


class TokenCount:
    calls = 0


@pytest.fixture
def tokenised(monkeypatch) -> TokenCount:
    """Counts the texts every tokenizer tokenises (a subclass would change the index's
    fingerprint): loading an index must tokenise no paper."""
    count = TokenCount()
    # Every text goes through terms_with_words: a build keeps the words as written too.
    original = Tokenizer.terms_with_words

    def counting(self, text: str) -> list[tuple[str, str]]:
        count.calls += 1
        return original(self, text)

    monkeypatch.setattr(Tokenizer, "terms_with_words", counting)
    return count


@pytest.fixture
def library(seeded_sqlite, tmp_path) -> Library:
    """A private copy of the seeded database (these tests write to it)."""
    source = Path(seeded_sqlite.removeprefix("sqlite:///"))
    shutil.copy(source, tmp_path / "paperclub.db")
    database = Database(f"sqlite:///{tmp_path / 'paperclub.db'}")
    yield Library(database)
    database.dispose()


def _answers(
    index, queries=("graph neural networks", "diffusion models robustness", "continual learning")
):
    return [
        [(h.paper_id, round(h.score, 9), h.matched) for h in index.search(Query.parse(q), 10)]
        for q in queries
    ]


def _synthetic_records(count: int, marker: str) -> list[PaperRecord]:
    return [
        PaperRecord(
            title=f"{marker} study number {i} of sparse graph kernels",
            line=i + 1,
            authors=[f"Author{i % 97} Example"],
            abstract=f"We study {marker} with sparse graph kernels and attention, variant {i}.",
            external_ids={"beir": f"{marker}-{i}"},
        )
        for i in range(count)
    ]


def test_the_index_lives_next_to_sqlite_and_a_second_process_loads_it(library, tmp_path, tokenised):
    first = SearchService(library)
    expected = _answers(first.current())
    assert (tmp_path / "paperclub.db.index" / "CURRENT").exists()
    tokenised.calls = 0
    index = SearchService(library).current()
    assert tokenised.calls == 0  # loaded, not rebuilt
    assert len(index) == SEED_TOTAL and _answers(index) == expected
    assert index.title(index.search(Query.parse("graph biconnectivity"), 1)[0].paper_id) == (
        "Rethinking the Expressive Power of GNNs via Graph Biconnectivity"
    )


def test_an_import_extends_the_index_and_another_process_switches_without_restart(
    library, tokenised
):
    writer = SearchService(library)
    reader = SearchService(library)
    before = reader.current()
    assert writer.current().revision == before.revision
    library.import_records(
        _synthetic_records(30, "qqmarker"), collection="extra", source="extra.jsonl", fmt="jsonl"
    )
    tokenised.calls = 0
    fresh = writer.current()
    assert tokenised.calls == 2 * 30  # only the new papers were tokenised (text and title)
    switched = (
        reader.current()
    )  # no restart: the reader notices the revision and loads the new version
    assert tokenised.calls == 2 * 30
    assert switched is not before and switched.revision == fresh.revision == library.revision()
    assert len(switched) == SEED_TOTAL + 30
    assert len(switched.search(Query.parse("qqmarker"), 50)) == 30
    assert _answers(switched) == _answers(fresh)
    assert before.search(Query.parse("qqmarker"), 5) == []  # a held index never changes


def test_a_changed_paper_is_retokenised_and_filters_follow(library, tokenised):
    service = SearchService(library)
    paper_id = service.current().search(Query.parse("graph biconnectivity"), 1)[0].paper_id
    paper = library.get_many([paper_id])[paper_id]
    record = PaperRecord(title=paper.title, abstract="", tags=["zzbiconnected"])
    library.import_records([record], collection="tagged", source="tags.jsonl", fmt="jsonl")
    tokenised.calls = 0
    index = service.current()
    assert tokenised.calls == 2  # that paper's text and title, nothing else
    assert [h.paper_id for h in index.search(Query.parse("tag:zzbiconnected"), 5)] == [paper_id]
    assert [h.paper_id for h in index.search(Query.parse("graph in:tagged"), 5)] == [paper_id]


def test_the_stored_index_says_what_it_holds_without_loading_or_building(library, tokenised):
    """What `paperclub status` reports: the papers the stored version finds (a changed
    paper counts once, though two segments hold it) and whether it is of the library as
    it is now."""
    service = SearchService(library)
    assert service.stored_index() is None  # never built
    service.current()
    assert service.stored_index() == StoredIndex(SEED_TOTAL, current=True)
    paper = library.get_many([1])[1]
    library.import_records(_synthetic_records(3, "qqmarker") + [PaperRecord(paper.title, abstract="Changed.")],
                           collection="extra", source="extra.jsonl", fmt="jsonl")
    tokenised.calls = 0
    looked = SearchService(library)
    assert looked.stored_index() == StoredIndex(SEED_TOTAL, current=False)  # behind the library
    assert tokenised.calls == 0 and looked.loaded() is None  # nothing tokenised, nothing loaded
    service.current()  # a segment of the four papers
    assert looked.stored_index() == StoredIndex(SEED_TOTAL + 3, current=True)
    assert SearchService(library, index_dir=None).stored_index() is None  # held in memory only


def test_a_build_that_dies_half_way_leaves_the_live_version_alone(library, tmp_path, monkeypatch):
    service = SearchService(library)
    expected = _answers(service.current())
    library.import_records(
        _synthetic_records(5, "crashmarker"), collection="extra", source="x.jsonl", fmt="jsonl"
    )
    saves = []

    def failing_save(path, array):
        saves.append(path)
        if len(saves) > 3:
            raise OSError("disk full")
        with open(path, "wb") as out:
            np.lib.format.write_array(out, array)

    monkeypatch.setattr("bot.search.builtin.files.np.save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        SearchService(library).current()
    monkeypatch.undo()
    stored = IndexStore(tmp_path / "paperclub.db.index").current()
    assert stored.revision == library.revision() - 1  # CURRENT still names the whole old version
    old = SearchIndex(
        stored.revision, Tokenizer(), IndexContent.from_arrays(stored.load(), Bm25Params())
    )
    assert _answers(old) == expected


def test_other_parameters_never_load_a_version_built_with_different_ones(library):
    default = SearchService(library).current()
    other = SearchService(library, params=Bm25Params(k1=0.9, b=0.4)).current()
    assert other.bm25.params == Bm25Params(k1=0.9, b=0.4)
    top_default = default.search(Query.parse("graph neural networks"), 1)[0].score
    top_other = other.search(Query.parse("graph neural networks"), 1)[0].score
    assert top_default != pytest.approx(top_other)


def test_default_index_dir():
    assert default_index_dir("sqlite:///data/paperclub.db", {}) == Path("data/paperclub.db.index")
    assert default_index_dir("sqlite://", {}) is None
    assert default_index_dir("sqlite:///x.db", {"PAPERCLUB_INDEX_DIR": "/srv/idx"}) == Path(
        "/srv/idx"
    )
    pg = default_index_dir("postgresql+psycopg://u:secret@db/prod", {"XDG_CACHE_HOME": "/c"})
    assert pg.parent == Path("/c/paperclub") and "secret" not in str(pg)
    assert pg != default_index_dir("postgresql+psycopg://u@db/staging", {"XDG_CACHE_HOME": "/c"})


def test_searching_from_8_threads_while_10k_papers_are_imported(library, tmp_path):
    """Every answer comes from one whole index version: before the import's commit the old
    corpus (no marker papers), after it the new one (all of them)."""
    service = SearchService(library, index_dir=tmp_path / "idx")
    old = service.current()
    old_revision, old_size = old.revision, len(old)
    importing = threading.Event()
    importing.set()
    answers: list[tuple[int, int, tuple, tuple]] = []
    errors: list[BaseException] = []

    def search_until_done() -> None:
        try:
            extra_rounds = 3
            while importing.is_set() or extra_rounds:
                if not importing.is_set():
                    extra_rounds -= 1
                index = service.current()
                marker = tuple(h.paper_id for h in index.search(Query.parse("mmmarker"), 10))
                seeds = tuple(
                    h.paper_id for h in index.search(Query.parse("graph neural networks"), 5)
                )
                answers.append((index.revision, len(index), marker, seeds))
                time.sleep(
                    0.05
                )  # members type; spinning threads would only starve the import of the GIL
        except BaseException as problem:  # noqa: BLE001 - reported by the assertion below
            errors.append(problem)

    threads = [threading.Thread(target=search_until_done) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        library.import_records(
            _synthetic_records(10_000, "mmmarker"), collection="bulk", source="bulk", fmt="jsonl"
        )
    finally:
        importing.clear()
        for thread in threads:
            thread.join()
    assert errors == []
    new = service.current()
    assert new.revision == library.revision() != old_revision and len(new) == old_size + 10_000
    by_revision = {}
    for revision, size, marker, seeds in answers:
        assert revision in (old_revision, new.revision)
        assert size == (old_size if revision == old_revision else old_size + 10_000)
        assert (len(marker) == 0) == (revision == old_revision)
        by_revision.setdefault(revision, set()).add((marker, seeds))
    # Within a version every thread got the same answers.
    assert all(len(distinct) == 1 for distinct in by_revision.values())
    assert new.revision in by_revision


def test_an_empty_library_gets_an_empty_index_that_answers_nothing(sqlite_db):
    index = SearchService(Library(sqlite_db)).current()
    assert len(index) == 0 and index.search(Query.parse("graph author:lecun"), 5) == []
    assert index.similar(1) == [] and not index.mask_of([1]).any()


def test_a_recreated_database_never_gets_the_old_databases_index(tmp_path):
    """Deleting paperclub.db but not paperclub.db.index, then importing as many files
    again, reaches the same revision number: the saved index must not be served."""
    from bot.app import build_services
    from tests.conftest import SEED_FILES

    url = f"sqlite:///{tmp_path / 'paperclub.db'}"
    first = build_services(url)
    first.library.import_file(SEED_FILES["trending"])
    assert len(first.search.current()) == 58
    first.db.dispose()
    for leftover in tmp_path.glob("paperclub.db*"):
        if leftover.is_file():
            leftover.unlink()
    second = build_services(url)
    second.library.import_file(SEED_FILES["topic-abstracts"])
    assert second.library.revision() == 1
    assert len(second.search.current()) == 17
    second.db.dispose()

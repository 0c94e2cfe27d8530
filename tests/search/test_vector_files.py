"""The vectors beside the index (bot.search.vector_files, live_vectors): a snapshot of the
stored codes that a starting process memory-maps, reading from the database only the rows
written since; with the neighbour index when the library has one. The database stays the
truth: a snapshot of another database, or newer than it, is never read."""

from __future__ import annotations

import numpy as np
import pytest

from bot.corpus.embedded import StoredVectors
from bot.corpus.records import PaperRecord
from bot.search import live_vectors as live_module
from bot.search import vectors as vectors_module
from bot.search.backfill import embed_pending
from bot.search.builtin.service import SearchService
from bot.search.embedding import EmbeddingConfig
from bot.search.hybrid import HybridBackend
from bot.search.neighbours import NeighbourIndex
from bot.search.vector_files import VectorFiles
from bot.search.vectors import Part, VectorMatrix, quantised
from tests.search.test_meaning import PAPERS, TinyModel, ids_by_title, library_of


def stored_part(model: TinyModel, texts: list[str], ids: list[int]) -> Part:
    made = [quantised(v) for v in model.documents(texts)]
    codes = np.stack([np.frombuffer(code, dtype=np.int8) for code, _ in made])
    return Part.sorted(np.asarray(ids, dtype=np.int64), codes, np.asarray([s for _, s in made], np.float32))


def test_a_base_and_a_tail_read_as_one_library():
    model = TinyModel()
    texts = [f"{title}. {abstract}" for title, abstract in PAPERS]
    whole = VectorMatrix.of_parts("tiny", Part.empty(8),
                                  stored_part(model, [*texts[:5], "A new text"], [1, 2, 3, 4, 5, 6]))
    # Papers 1-5 in the base; the tail replaces paper 2's vector and brings paper 6.
    parted = VectorMatrix.of_parts("tiny", stored_part(model, texts[:5], [1, 2, 3, 4, 5]),
                                   stored_part(model, ["Unrelated words here", "A new text"], [2, 6]))
    parted = parted.updated(VectorMatrix.of_parts("tiny", Part.empty(8), stored_part(model, [texts[1]], [2])))
    assert len(parted) == len(whole) == 6
    query = model.query("cars crashes highways")
    assert parted.top(query, 6) == whole.top(query, 6)
    assert parted.similarities(query, [6, 2, 99]) == whole.similarities(query, [6, 2, 99])
    assert parted.paper_ids.tolist() == [1, 2, 3, 4, 5, 6]
    assert parted.stored_part().paper_ids.tolist() == [1, 2, 3, 4, 5, 6]


def test_snapshots_are_read_by_version_and_database(tmp_path, caplog):
    model = TinyModel()
    part = stored_part(model, ["one text", "two texts"], [7, 3])
    files = VectorFiles(tmp_path, "db-a", "tiny")
    assert files.latest(10) is None
    assert files.save(4, part, None)
    assert not files.save(4, part, None)  # one as new is there
    snapshot = files.latest(10)
    assert snapshot.version == 4 and isinstance(snapshot.part.codes, np.memmap)
    assert snapshot.part.paper_ids.tolist() == [3, 7] and np.array_equal(snapshot.part.codes, part.codes)
    assert files.latest(3) is None  # the database is older than the snapshot (restored): not used
    assert VectorFiles(tmp_path, "db-b", "tiny").latest(10) is None  # another database
    assert VectorFiles(tmp_path, "db-a", "other model").latest(10) is None
    assert files.save(6, part, None)
    assert sorted(p.name for p in files.root.iterdir() if p.name.startswith("v")) == ["v6"]  # older removed
    (files.root / "v6" / "codes.npy").unlink()
    assert files.latest(10) is None and "not reading the vectors saved" in caplog.text


@pytest.fixture
def small_snapshots(monkeypatch):
    monkeypatch.setattr(live_module, "SNAPSHOT_FROM", 1)


def backend_of(db, library, model, index_dir) -> HybridBackend:
    return HybridBackend(SearchService(library, index_dir=index_dir), StoredVectors(db),
                         EmbeddingConfig(model=model.name), load=lambda _c: model)


def test_a_starting_process_maps_the_snapshot_and_reads_only_what_came_after(db, tmp_path, small_snapshots,
                                                                             monkeypatch):
    library = library_of(db)
    model = TinyModel()
    embed_pending(StoredVectors(db), model)
    first = backend_of(db, library, model, tmp_path / "index")
    assert len(first.vectors()) == len(PAPERS)
    first.live.wait()  # the snapshot is written
    # The same file again with one abstract changed, and a new file.
    library.import_records([PaperRecord(PAPERS[0][0], abstract="Lorries overtaking on wet roads.")],
                           collection="c", source="c.jsonl", fmt="jsonl")
    library.import_records([PaperRecord("Bridges under wind load", abstract="Cables sway in storms.")],
                           collection="c", source="more.jsonl", fmt="jsonl")
    assert embed_pending(StoredVectors(db), model) == 2
    asked: list[int] = []
    rows = StoredVectors.rows
    monkeypatch.setattr(StoredVectors, "rows", lambda self, m, since=0: asked.append(since) or rows(self, m, since))
    second = backend_of(db, library, model, tmp_path / "index")
    matrix = second.vectors()
    assert asked == [first.live._version] and asked[0] > 0  # only the rows written since the snapshot
    assert isinstance(matrix.base.codes, np.memmap) and len(matrix.base) == len(PAPERS)
    assert len(matrix) == len(PAPERS) + 1  # the changed paper replaced, the new one added
    fresh = backend_of(db, library, model, None).vectors()  # everything from the database
    titles = ids_by_title(library)
    query = model.query("Lorries overtaking on wet roads")
    assert matrix.top(query, 7) == fresh.top(query, 7)
    assert matrix.top(query, 1)[0][0] == titles[PAPERS[0][0]]


def test_the_neighbour_index_is_saved_and_not_built_again(db, tmp_path, small_snapshots, monkeypatch):
    monkeypatch.setattr(vectors_module, "NEIGHBOURS_FROM", 3)
    library = library_of(db)
    model = TinyModel()
    embed_pending(StoredVectors(db), model)
    first = backend_of(db, library, model, tmp_path / "index")
    first.vectors()
    first.live.wait()  # the index, then the snapshot carrying it
    assert first.vectors().neighbours is not None

    def no_build(*_args):
        raise AssertionError("built again")

    monkeypatch.setattr(NeighbourIndex, "build", staticmethod(no_build))
    second = backend_of(db, library, model, tmp_path / "index")
    matrix = second.vectors()
    assert matrix.neighbours is not None and len(matrix.neighbours) == len(PAPERS)
    query = model.query(f"{PAPERS[3][0]}. {PAPERS[3][1]}")
    assert matrix.top(query, 1)[0][0] == ids_by_title(library)[PAPERS[3][0]]

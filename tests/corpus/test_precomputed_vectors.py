"""Precomputed vectors imported with the corpus (JSON Lines' `vector`), on SQLite and
PostgreSQL: stored with their papers as `paperclub embed` stores its own, so that it
embeds none of them; a vector of another model or dimension, or with a value that is no
finite number, refuses the whole file at its FILE:LINE and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, select

from adapters.cli.main import main
from bot.corpus.embedded import StoredVectors, paper_text, text_hash
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord
from bot.search.backfill import embed_pending
from bot.search.embedding import EmbeddingConfig
from bot.search.params import DEFAULT_MODEL
from bot.search.vectors import import_rules, restored
from store.models import Paper, PaperSource, PaperVector

# A model fastembed's catalogue does not list: the dimension comes from the stored
# vectors, else from the file's first vector.
MODEL = "test/tiny-4"
BEFORE = {"title": "A paper already in the library", "abstract": "It is stored before."}


class CountingModel:
    """An embedder of MODEL that counts what it is asked to embed."""

    name = MODEL
    dimension = 4

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def documents(self, texts):
        self.embedded += texts
        return np.tile(np.float32([1, 0, 0, 0]), (len(texts), 1))

    def query(self, text):
        return np.float32([1, 0, 0, 0])


def with_vector(title: str, values: list[Any], model: str = MODEL, **fields: Any) -> dict[str, Any]:
    return {"title": title, "abstract": f"What {title} is about.", **fields,
            "vector": {"model": model, "values": values}}


def jsonl(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def snapshot(library: Library) -> tuple[int, ...]:
    """(papers, sources, vectors, corpus revision, vectors' version): what a refused import
    must not change."""
    with library.db.session() as session:
        counts = [session.scalar(select(func.count()).select_from(t)) or 0 for t in (Paper, PaperSource, PaperVector)]
    return (*counts, library.revision(), StoredVectors(library.db).version())


def vectors_of(db) -> dict[int, np.ndarray]:
    return {pid: restored(codes, scale) for pid, codes, scale in StoredVectors(db).rows(MODEL)}


def ids_by_title(library: Library) -> dict[str, int]:
    return {paper.title: paper.id for paper in library.iter_papers()}


@pytest.fixture
def library(db) -> Library:
    """A library of MODEL's vectors, holding one paper (without a vector)."""
    library = Library(db, vectors=import_rules(EmbeddingConfig(model=MODEL)))
    library.import_records([PaperRecord(**BEFORE)], collection="before", source="before.jsonl", fmt="jsonl")
    return library


def test_a_file_with_vectors_imports_them_and_embed_makes_only_the_missing(library, tmp_path):
    path = jsonl(tmp_path / "gpu.jsonl", with_vector("One", [3, 4, 0, 0]), with_vector("Two", [0, 0, 2, 0]),
                 {"title": "Three", "abstract": "No vector here."}, with_vector("Four", [1, 1, 1, 1]))
    summary = library.import_file(path)
    assert (summary.added, summary.vectors) == (4, 3)
    stored = StoredVectors(library.db)
    assert stored.count(MODEL) == 3 and stored.dimension(MODEL) == 4
    titles, vectors = ids_by_title(library), vectors_of(library.db)
    assert vectors[titles["One"]] == pytest.approx([0.6, 0.8, 0, 0], abs=0.01)  # unit length, int8 codes
    assert vectors[titles["Four"]] == pytest.approx([0.5] * 4, abs=0.01)
    model = CountingModel()
    assert embed_pending(stored, model) == 2  # the paper from before and Three: none of the imported
    assert sorted(model.embedded) == [paper_text(BEFORE["title"], BEFORE["abstract"]), "Three. No vector here."]
    assert embed_pending(stored, model) == 0

    # Imported again: nothing to write; the vectors' version stays where it was.
    version = stored.version()
    assert library.import_file(path).vectors == 0 and stored.version() == version
    # The abstract changes and the file brings no vector any more: that paper is embedded again.
    jsonl(path, {"title": "One", "abstract": "A new abstract."})
    library.import_file(path)
    assert embed_pending(stored, model) == 1 and model.embedded[-1] == "One. A new abstract."


def test_a_vector_given_with_a_new_text_replaces_the_old_and_is_not_embedded(library, tmp_path):
    path = jsonl(tmp_path / "gpu.jsonl", with_vector("One", [1, 0, 0, 0]))
    library.import_file(path)
    jsonl(path, with_vector("One", [0, 1, 0, 0], abstract="Another abstract."))
    assert library.import_file(path).vectors == 1
    one = ids_by_title(library)["One"]
    assert vectors_of(library.db)[one] == pytest.approx([0, 1, 0, 0])
    assert embed_pending(StoredVectors(library.db), CountingModel()) == 1  # only the paper from before


def test_a_paper_merged_into_a_stored_one_gets_the_vector(library, tmp_path):
    longer = "It is stored before, and this source says more about it."
    path = jsonl(tmp_path / "gpu.jsonl",
                 with_vector(BEFORE["title"], [0, 0, 0, 5], abstract=longer),
                 with_vector("Same id", [1, 0, 0, 0], external_ids={"arxiv": "2101.00001"}),
                 with_vector("Same id, said again", [0, 1, 0, 0], external_ids={"arxiv": "2101.00001"}))
    summary = library.import_file(path)
    assert (summary.added, summary.updated, summary.vectors) == (1, 1, 2)
    titles, vectors = ids_by_title(library), vectors_of(library.db)
    assert vectors[titles[BEFORE["title"]]] == pytest.approx([0, 0, 0, 1])
    assert vectors[titles["Same id"]] == pytest.approx([1, 0, 0, 0])  # one paper: the first record's vector
    # Stored with the hash of the paper's text as merged (the longer abstract shows).
    with library.db.session() as session:
        digest = session.scalar(select(PaperVector.text_hash).where(PaperVector.paper_id == titles[BEFORE["title"]]))
    assert digest == text_hash(paper_text(BEFORE["title"], longer))
    assert embed_pending(StoredVectors(library.db), CountingModel()) == 0


def test_with_embeddings_off_vectors_are_still_checked_and_stored(db, tmp_path):
    config = EmbeddingConfig.from_env({"PAPERCLUB_EMBEDDINGS": "off", "PAPERCLUB_EMBEDDING_MODEL": MODEL})
    library = Library(db, vectors=import_rules(config))
    assert library.import_file(jsonl(tmp_path / "a.jsonl", with_vector("One", [1, 2, 3, 4]))).vectors == 1
    with pytest.raises(CorpusFormatError, match=r"'vector\.model' is 'other'"):
        library.import_file(jsonl(tmp_path / "b.jsonl", with_vector("Two", [1, 2, 3, 4], model="other")))
    assert StoredVectors(db).count(MODEL) == 1


# --- refused, whole -------------------------------------------------------------------------

GOOD = with_vector("Good", [1, 2, 3, 4])
REFUSED = {
    "another model": (
        with_vector("Bad", [1, 2, 3, 4], model="BAAI/bge-small-en-v1.5"),
        (f"'vector.model' is 'BAAI/bge-small-en-v1.5', but this library's vectors are of '{MODEL}' "
         "(PAPERCLUB_EMBEDDING_MODEL): make the vectors with that model, or configure this one"),
    ),
    "another dimension than the file's first": (
        with_vector("Bad", [1, 2, 3, 4, 5]),
        (f"'vector.values' holds 5 numbers, but the vectors of {MODEL} have 4 (as the file's first vector, "
         "at line 1)"),
    ),
    "NaN": (with_vector("Bad", [1, 2, float("nan"), 4]), "'vector.values' must be finite numbers: values[2] is NaN"),
    "a string": (with_vector("Bad", [1, "2", 3, 4]), "'vector.values' must be numbers: values[1] is \"2\""),
    "zeros": (with_vector("Bad", [0, 0, 0, 0]), "'vector' is all zeros"),
}


def refused(library: Library, path: Path, line: int, message: str) -> None:
    before = snapshot(library)
    with pytest.raises(CorpusFormatError) as raised:
        library.import_file(path)
    assert str(raised.value).startswith(f"{path}:{line}: "), str(raised.value)
    assert message in raised.value.message
    assert snapshot(library) == before


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_bad_vector_refuses_the_file_at_its_line(library, tmp_path, case):
    bad, message = REFUSED[case]
    refused(library, jsonl(tmp_path / "gpu.jsonl", GOOD, bad, with_vector("After", [4, 3, 2, 1])), 2, message)


def test_the_dimension_of_the_stored_vectors_rules(library, tmp_path):
    library.import_file(jsonl(tmp_path / "first.jsonl", GOOD))
    message = (f"'vector.values' holds 3 numbers, but the vectors of {MODEL} have 4 "
               "(as the vectors already stored under it)")
    refused(library, jsonl(tmp_path / "second.jsonl", with_vector("Three", [1, 2, 3])), 1, message)


def test_a_known_models_dimension_comes_from_its_catalogue(db, tmp_path):
    library = Library(db, vectors=import_rules(EmbeddingConfig()))
    path = jsonl(tmp_path / "short.jsonl", with_vector("Short", [1, 2, 3, 4], model=DEFAULT_MODEL))
    message = f"'vector.values' holds 4 numbers, but the vectors of {DEFAULT_MODEL} have 384 (in the model's catalogue)"
    refused(library, path, 1, message)


def test_a_library_told_no_model_takes_no_vectors(db, tmp_path):
    refused(Library(db), jsonl(tmp_path / "gpu.jsonl", {"title": "Plain"}, GOOD), 2,
            "'vector': this import takes no precomputed vectors")


def test_the_command_line_stores_them_and_refuses_a_bad_file_with_its_line(db, database_url, tmp_path, capsys,
                                                                        monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDING_MODEL", MODEL)
    good = jsonl(tmp_path / "good.jsonl", GOOD, with_vector("Other", [4, 3, 2, 1]))
    assert main(["--database-url", database_url, "import", str(good)]) == 0
    assert "2 added, 0 updated, 0 unchanged, 2 vectors stored" in capsys.readouterr().out
    bad = jsonl(tmp_path / "bad.jsonl", with_vector("Third", [1, 1, 1, 1]), REFUSED["another model"][0])
    assert main(["--database-url", database_url, "import", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"error: {bad}:2: 'vector.model' is 'BAAI/bge-small-en-v1.5'" in err and "nothing imported" in err
    assert Library(db).count() == 2 and StoredVectors(db).count(MODEL) == 2

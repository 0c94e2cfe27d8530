"""Ranking by meaning as well as words (bot.search.embedding, vectors, fusion, hybrid): the
real model from ../shared/models, vectors stored in the database and read back by every
process, and search and similar fused with BM25."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bot.corpus.embedded import StoredVectors
from bot.corpus.library import Library
from bot.corpus.records import PaperRecord
from bot.search.backfill import backlog, embed_pending
from bot.search.builtin.service import SearchService
from bot.search.embedding import (
    EmbeddingConfig,
    FastEmbedder,
    ModelUnavailable,
    load_embedder,
    paper_text,
)
from bot.search.fusion import fused, normalised
from bot.search.hybrid import HybridBackend, HybridSearcher, with_meaning
from bot.search.query import Query
from bot.search.vectors import VectorMatrix, import_rules, quantised, restored
from tests.conftest import MINILM

# Subjects told apart by meaning; the queries below share no word with the paper they
# should find.
PAPERS = [
    ("Vehicle collisions on motorways",
     "We study crashes between cars and lorries on highways and how speed limits change their number."),
    ("Protein folding with attention",
     "A transformer predicts the three-dimensional structure of proteins from their amino acid sequence."),
    ("Graph neural networks for molecules",
     "Message passing over atoms and bonds predicts chemical properties of small molecules."),
    ("Reinforcement learning for robot arms",
     "A policy trained by trial and error grasps objects with a robotic manipulator."),
    ("Image classification with residual networks",
     "Deep convolutional networks with skip connections recognise objects in photographs."),
    ("Language models as few-shot learners",
     "A very large autoregressive text model solves tasks from a handful of examples in its prompt."),
]


def library_of(db, papers=PAPERS) -> Library:
    library = Library(db)
    records = [PaperRecord(title, line=n, abstract=abstract) for n, (title, abstract) in enumerate(papers, 1)]
    library.import_records(records, collection="c", source="c.jsonl", fmt="jsonl")
    return library


def ids_by_title(library: Library) -> dict[str, int]:
    return {paper.title: paper.id for paper in library.iter_papers()}


class TinyModel:
    """Vectors of the right shape without a model: a text's words hashed into 8 places."""

    name = "tiny"
    dimension = 8

    def __init__(self):
        self.embedded: list[str] = []

    def documents(self, texts):
        self.embedded += texts
        return np.stack([self.query(t) for t in texts]) if texts else np.zeros((0, 8), np.float32)

    def query(self, text):
        v = np.zeros(8, np.float32)
        for word in text.lower().split():
            v[sum(map(ord, word)) % 8] += 1
        return v / max(np.linalg.norm(v), 1e-9)


# --- the model --------------------------------------------------------------------------------


def test_the_model_gives_the_published_similarities(minilm):
    # The sentence-transformers documentation's example: 0.6660, 0.1046, 0.1411.
    v = minilm.documents(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert [round(float(v[0] @ v[1]), 3), round(float(v[0] @ v[2]), 3), round(float(v[1] @ v[2]), 3)] == [
        0.666, 0.105, 0.141]
    assert minilm.name == "sentence-transformers/all-MiniLM-L6-v2" and minilm.dimension == 384


def test_a_missing_model_is_one_reason_and_no_crash(tmp_path, caplog):
    with pytest.raises(ModelUnavailable, match=r"no model\.onnx"):
        FastEmbedder(model_dir=tmp_path)
    assert load_embedder(EmbeddingConfig(model_dir=tmp_path)) is None
    assert "ranking by words only" in caplog.text and "Traceback" not in caplog.text
    assert load_embedder(EmbeddingConfig(enabled=False, model_dir=tmp_path)) is None


def test_the_switches_are_read_from_the_environment(tmp_path):
    assert EmbeddingConfig.from_env({}) == EmbeddingConfig()
    config = EmbeddingConfig.from_env({"PAPERCLUB_EMBEDDINGS": "Off", "PAPERCLUB_EMBEDDING_MODEL": " m ",
                                       "PAPERCLUB_MODEL_DIR": str(tmp_path)})
    assert config == EmbeddingConfig(enabled=False, model="m", model_dir=tmp_path)
    with pytest.raises(ValueError, match="use on or off"):
        EmbeddingConfig.from_env({"PAPERCLUB_EMBEDDINGS": "maybe"})


# --- vectors and fusion -------------------------------------------------------------------


def test_int8_codes_keep_the_cosines(minilm):
    v = minilm.documents([paper_text(t, a) for t, a in PAPERS])
    back = np.stack([restored(*quantised(row)) for row in v])
    assert len(quantised(v[0])[0]) == 384  # a byte a dimension
    assert np.abs(back @ back.T - v @ v.T).max() < 0.01


def test_the_closest_papers_ties_to_the_lower_id_among_and_excluded():
    rows = np.array([[1, 0], [0, 1], [1, 0], [0.6, 0.8]], np.float32)
    matrix = VectorMatrix("m", np.array([40, 10, 30, 20]), rows)
    query = np.array([1, 0], np.float32)
    assert [p for p, _ in matrix.top(query, 2)] == [30, 40]  # a tie: the lower id first
    assert [p for p, _ in matrix.top(query, 1)] == [30]
    assert [p for p, _ in matrix.top(query, 9, excluded={30})] == [40, 20, 10]
    assert [p for p, _ in matrix.top(query, 9, among=[10, 20, 99])] == [20, 10]
    assert matrix.vector(99) is None and matrix.similarities(query, [10, 99]) == {10: 0.0}
    newer = VectorMatrix("m", np.array([10, 50]), np.array([[1, 0], [0, 1]], np.float32))
    assert [p for p, _ in matrix.updated(newer).top(query, 3)] == [10, 30, 40]


def test_fusion_mixes_normalised_scores_and_ranks_unembedded_papers_by_words():
    assert normalised({1: 2.0, 2: 4.0, 3: 3.0}) == {1: 0.0, 2: 1.0, 3: 0.5}
    assert normalised({1: 5.0}) == {1: 1.0}
    # 1: best words, far in meaning; 2: no words, closest; 3: both fair; 4: no vector.
    lexical, dense = {1: 10.0, 3: 6.0, 4: 8.0}, {1: 0.1, 2: 0.9, 3: 0.7}
    ranked = fused(lexical, dense, [1, 2, 3, 4], weight=0.5)
    # words 1, 0, .6, .8 and meaning 0, 1, .75: 1 and 2 tie at .5 (the lower id first)
    assert ranked == [(4, pytest.approx(0.8)), (3, pytest.approx(0.675)), (1, 0.5), (2, 0.5)]
    assert [p for p, _ in fused(lexical, dense, [1, 2, 3, 4], weight=0.0)] == [1, 4, 3, 2]


# --- stored vectors -----------------------------------------------------------------------


def test_vectors_are_made_once_and_again_only_for_a_changed_text(db):
    library = library_of(db)
    stored, model = StoredVectors(db), TinyModel()
    assert backlog(stored, "tiny").missing == 6 and stored.version() == 0
    assert embed_pending(stored, model, batch=4) == 6
    assert backlog(stored, "tiny").missing == 0 and stored.version() == 2  # two batches, two writes
    assert embed_pending(stored, model) == 0 and len(model.embedded) == 6
    library.import_records([PaperRecord(PAPERS[0][0], abstract="A new abstract.")],
                           collection="c", source="c.jsonl", fmt="jsonl")
    assert embed_pending(stored, model) == 1 and model.embedded[-1] == f"{PAPERS[0][0]}. A new abstract."
    # A process that read up to version 2 reads the one vector written since.
    assert [row[0] for row in stored.rows("tiny", since=2)] == [ids_by_title(library)[PAPERS[0][0]]]
    assert len(list(stored.rows("tiny"))) == 6 and stored.count("other") == 0


def test_a_stopped_run_keeps_its_batches_and_the_next_goes_on(db):
    library_of(db)
    stored = StoredVectors(db)
    seen: list[int] = []
    assert embed_pending(stored, TinyModel(), progress=seen.append, seconds=0.0, batch=4) == 4
    assert seen == [4] and backlog(stored, "tiny").embedded == 4
    again = TinyModel()
    assert embed_pending(stored, again, batch=4) == 2 and len(again.embedded) == 2


def test_vectors_round_trip_through_the_database(db, minilm):
    library = library_of(db)
    stored = StoredVectors(db)
    embed_pending(stored, minilm)
    matrix = VectorMatrix.from_stored(minilm.name, stored.rows(minilm.name))
    assert matrix.rows.shape == (6, 384)
    direct = minilm.documents([paper_text(*PAPERS[1])])[0]
    assert float(matrix.vector(ids_by_title(library)[PAPERS[1][0]]) @ direct) > 0.999


# --- search and similar -------------------------------------------------------------------


def hybrid(db, minilm, library):
    config = EmbeddingConfig(model_dir=MINILM)
    return HybridBackend(SearchService(library, index_dir=None), StoredVectors(db), config, load=lambda _c: minilm)


def test_without_vectors_or_switched_off_the_search_is_the_engine_itself(sqlite_db, minilm):
    library = library_of(sqlite_db)
    words = SearchService(library, index_dir=None)
    assert with_meaning(words, sqlite_db, {"PAPERCLUB_EMBEDDINGS": "off"}) is words
    backend = hybrid(sqlite_db, minilm, library)
    assert not isinstance(backend.current(), HybridSearcher)  # nothing embedded yet
    embed_pending(StoredVectors(sqlite_db), minilm)
    assert isinstance(backend.current(), HybridSearcher)
    off = HybridBackend(words, StoredVectors(sqlite_db), EmbeddingConfig(), load=lambda _c: None)
    assert not isinstance(off.current(), HybridSearcher)  # vectors, but no model: words alone


def test_a_search_finds_by_meaning_what_shares_no_word(db, minilm):
    library = library_of(db)
    titles = ids_by_title(library)
    backend = hybrid(db, minilm, library)
    query = Query.parse("traffic accidents")
    assert backend.current().search(query) == []  # no paper has either word
    embed_pending(StoredVectors(db), minilm)
    hits = backend.current().search(query, 3)
    assert hits[0].paper_id == titles["Vehicle collisions on motorways"] and hits[0].matched == ()
    # Words still count: a query's word in a paper is named on its card.
    hits = backend.current().search(Query.parse("molecules chemistry"), 2)
    assert hits[0].paper_id == titles["Graph neural networks for molecules"] and "molecul" in hits[0].matched


def test_meaning_alone_brings_in_only_papers_close_enough(sqlite_db, minilm):
    library = library_of(sqlite_db)
    embed_pending(StoredVectors(sqlite_db), minilm)
    index = hybrid(sqlite_db, minilm, library).current()
    # The motorways paper is at 0.61 from the query; the others at most 0.12: left out.
    hits = index.search(Query.parse("traffic accidents"), 10)
    assert [hit.paper_id for hit in hits] == [ids_by_title(library)["Vehicle collisions on motorways"]]
    assert index.search(Query.parse("xyzzy plugh"), 10) == []  # nonsense lists nothing, as by words


def test_a_typed_title_stays_first_and_filters_hold(db, minilm):
    library = library_of(db)
    library.import_records([PaperRecord("Car crash statistics", line=1, abstract="Road accidents counted.")],
                           collection="other", source="o.jsonl", fmt="jsonl")
    embed_pending(StoredVectors(db), minilm)
    titles = ids_by_title(library)
    index = hybrid(db, minilm, library).current()
    hits = index.search(Query.parse("image classification with residual networks"), 3)
    assert hits[0].paper_id == titles["Image classification with residual networks"] and hits[0].title_match
    hits = index.search(Query.parse("traffic accidents in:c"), 3)
    assert titles["Car crash statistics"] not in [h.paper_id for h in hits]
    assert hits[0].paper_id == titles["Vehicle collisions on motorways"]


def test_a_paper_is_found_by_meaning_through_its_imported_vector(db, minilm, tmp_path):
    """Vectors made elsewhere (here by the same model, scaled by 3: the import makes them
    unit length) are imported with the papers; nothing is embedded again, and a search by
    meaning and `similar` find the papers through them."""
    library = Library(db, vectors=import_rules(EmbeddingConfig()))
    papers = PAPERS + [("Deep learning for drug discovery",
                        "Neural predictors of binding affinity screen candidate compounds.")]
    made = minilm.documents([paper_text(t, a) for t, a in papers])
    path = tmp_path / "gpu.jsonl"
    path.write_text("".join(json.dumps({"title": t, "abstract": a, "vector": {"model": minilm.name,
                                                                             "values": (3 * v).tolist()}}) + "\n"
                            for (t, a), v in zip(papers, made, strict=True)), encoding="utf-8")
    assert library.import_file(path).vectors == 7
    assert embed_pending(StoredVectors(db), minilm) == 0  # every paper has its vector already
    titles = ids_by_title(library)
    stored = VectorMatrix.from_stored(minilm.name, StoredVectors(db).rows(minilm.name))
    assert float(stored.vector(titles[PAPERS[1][0]]) @ made[1]) > 0.999
    index = hybrid(db, minilm, library).current()
    assert isinstance(index, HybridSearcher)
    hits = index.search(Query.parse("traffic accidents"), 3)
    assert hits[0].paper_id == titles["Vehicle collisions on motorways"] and hits[0].matched == ()
    similar = [h.paper_id for h in index.similar(titles["Deep learning for drug discovery"], 2)]
    assert titles["Graph neural networks for molecules"] in similar


def test_similar_papers_by_meaning(db, minilm):
    library = library_of(db, PAPERS + [("Deep learning for drug discovery",
                                        "Neural predictors of binding affinity screen candidate compounds.")])
    embed_pending(StoredVectors(db), minilm)
    titles = ids_by_title(library)
    index = hybrid(db, minilm, library).current()
    similar = [h.paper_id for h in index.similar(titles["Deep learning for drug discovery"], 2)]
    assert titles["Graph neural networks for molecules"] in similar
    assert titles["Deep learning for drug discovery"] not in similar


def test_a_replica_reads_the_vectors_another_wrote(db, minilm):
    library = library_of(db)
    one, two = hybrid(db, minilm, library), hybrid(db, minilm, library)
    assert len(two.vectors()) == 0
    embed_pending(StoredVectors(db), minilm, batch=3, seconds=0.0)
    assert len(two.vectors()) == 3
    embed_pending(StoredVectors(db), minilm)
    assert len(two.vectors()) == 6 and len(one.vectors()) == 6


def test_the_background_job_embeds_what_came_in_and_idles_until_the_corpus_moves(db, caplog):
    import threading

    from bot.search.backfill import background_job

    library = library_of(db)
    stored, model, stop = StoredVectors(db), TinyModel(), threading.Event()
    loads: list[int] = []
    job = background_job(stored, lambda: loads.append(1) or model, stop)
    job()
    assert backlog(stored, "tiny").missing == 0 and len(model.embedded) == 6 and loads == [1]
    job()  # nothing came in: no scan, nothing embedded
    assert len(model.embedded) == 6
    library.import_records([PaperRecord("A new paper", abstract="Fresh.")], collection="c", source="d.jsonl",
                           fmt="jsonl")
    job()
    assert model.embedded[-1] == "A new paper. Fresh." and loads == [1]
    stop.set()
    library.import_records([PaperRecord("Another", abstract="Later.")], collection="c", source="e.jsonl", fmt="jsonl")
    job()  # stopping: nothing more
    assert backlog(stored, "tiny").missing == 1


def test_a_model_that_will_not_load_is_said_once(db, caplog):
    import threading

    from bot.search.backfill import background_job

    library_of(db)

    def missing():
        raise ModelUnavailable("m: not in the runtime's cache")

    job = background_job(StoredVectors(db), missing, threading.Event())
    job()
    job()
    assert caplog.text.count("not embedding new papers: m: not in the runtime's cache") == 1


def test_the_search_command_by_meaning_and_by_words_alone(sqlite_db, minilm):
    from adapters.console import ConsoleSession
    from bot.app import build_services

    library_of(sqlite_db)
    embed_pending(StoredVectors(sqlite_db), minilm)
    services = build_services(sqlite_db.url, env={"PAPERCLUB_MODEL_DIR": str(MINILM)})
    member = ConsoleSession(services.core, channel="c", user="u")
    reply = member.send("search traffic accidents")
    assert reply.cards[0].title == "Vehicle collisions on motorways"
    assert reply.cards[0].reason == "close in meaning to your words, though it uses none of them"
    assert "No papers match" in member.send("search --lexical traffic accidents").text
    words = member.send("search --lexical molecules").cards
    assert [c.title for c in words] == ["Graph neural networks for molecules"] and words[0].score > 1  # BM25's own
    similar = member.send(f"similar {reply.cards[0].paper_id}")
    assert similar.ok and reply.cards[0].paper_id not in [c.paper_id for c in similar.cards]

"""`paperclub eval`: BEIR folders read as published, metrics as BEIR computes them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bot.search.builtin.index import SearchIndex
from bot.search.evaluation import BeirFormatError, evaluate, ndcg_at, read_beir, recall_at
from tests.conftest import REPO
from tests.processes import paperclub

SCIFACT = REPO.parent / "shared" / "eval" / "scifact"  # beside the checkout, when present


def _beir(
    folder: Path, qrels: str = "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t1\nq2\td1\t2\n"
) -> Path:
    docs = [
        ("d1", "Apple pie recipes", "Baking apple pie with cinnamon."),
        ("d2", "Graph neural networks", "Message passing on graphs for molecules."),
        ("d3", "Apple orchards", "Growing apple trees and pie apples."),
        ("d4", "Transformers", "Attention is all you need for translation."),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs),
        encoding="utf-8",
    )
    queries = [
        ("q1", "message passing graph networks"),
        ("q2", "apple pie"),
        ("q3", "unjudged query"),
    ]
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries)
    )
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return folder


def test_metrics_follow_beir_definitions():
    relevance = {"a": 1, "c": 2}
    # DCG = 1/log2(2) + 2/log2(4) for a, c at ranks 1 and 3; ideal puts c (2) then a (1).
    expected = (1 + 2 / 2) / (2 + 1 / math.log2(3))
    assert ndcg_at(["a", "b", "c"], relevance, 10) == pytest.approx(expected)
    assert ndcg_at(["b", "a"], relevance, 1) == 0.0
    assert recall_at(["c", "x"], relevance, 100) == 0.5
    assert recall_at(["a", "c"], relevance, 1) == 0.5


def test_a_small_folder_ranks_its_judged_queries(tmp_path):
    data = read_beir(_beir(tmp_path / "tiny"))
    assert data.qrels == {"q1": {"d2": 1}, "q2": {"d3": 1, "d1": 2}}  # the header line is skipped
    result = evaluate(data, SearchIndex.build)
    assert result.queries == 2 and result.documents == 4  # the unjudged query is not counted
    assert result.recall_at_100 == 1.0
    assert result.ndcg_at_10 == pytest.approx(1.0)  # d1 (grade 2) outranks d3 for "apple pie"


def test_a_bad_qrels_line_names_file_and_line(tmp_path):
    folder = _beir(tmp_path / "bad", qrels="query-id\tcorpus-id\tscore\nq1\td2\n")
    with pytest.raises(BeirFormatError, match=r"test.tsv:2:"):
        read_beir(folder)


def test_the_command_prints_the_figures_and_explains_a_wrong_folder(tmp_path):
    result = paperclub("eval", str(_beir(tmp_path / "tiny")), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["ndcg_at_10"] == pytest.approx(1.0) and figures["k1"] == 1.5
    missing = paperclub("eval", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 1 and "corpus.jsonl" in missing.stderr


@pytest.mark.skipif(not SCIFACT.exists(), reason=f"no SciFact data at {SCIFACT}")
def test_scifact_quality_with_the_default_settings():
    """The default (rank-bm25's BM25Okapi on our tokens) keeps its measured quality."""
    result = evaluate(read_beir(SCIFACT), SearchIndex.build)
    assert result.queries == 300
    assert result.ndcg_at_10 >= 0.684
    assert result.recall_at_100 >= 0.91


def _recorded_vectors():
    """SciFact's vectors as tests/search/record_scifact.py recorded them."""
    import numpy as np

    from bot.search.evaluation import BeirVectors
    from tests.search.record_scifact import RECORDED

    with np.load(RECORDED) as stored:
        documents = stored["documents"].astype(np.float32) * stored["document_scales"][:, None]
        queries = stored["queries"].astype(np.float32) * stored["query_scales"][:, None]
        texts = [str(t) for t in stored["query_texts"]]
    return BeirVectors("sentence-transformers/all-MiniLM-L6-v2", documents, dict(zip(texts, queries, strict=True)))


def test_the_recorded_vectors_are_the_models(minilm):
    """The recording is what the model in ../shared/models makes: a sample, embedded again."""
    import numpy as np

    from bot.search.embedding import paper_text

    data, vectors = read_beir(SCIFACT), _recorded_vectors()
    sample = list(range(0, len(data.doc_ids), 500))
    again = minilm.documents([paper_text(data.titles[i], data.texts[i]) for i in sample])
    assert np.min(np.sum(again * vectors.documents[sample], axis=1)) > 0.99
    text = next(iter(vectors.queries))
    assert float(minilm.query(text) @ vectors.queries[text]) > 0.99


def test_scifact_quality_of_meaning_and_of_both():
    """Dense alone as published for the model (MTEB 0.645); the hybrid, with its weight
    fixed in advance (0.5), well past BM25's 0.688 and SPLADE++'s 0.704."""
    data, vectors = read_beir(SCIFACT), _recorded_vectors()
    dense = evaluate(data, SearchIndex.build, method="dense", vectors=vectors)
    hybrid = evaluate(data, SearchIndex.build, method="hybrid", vectors=vectors)
    assert dense.queries == hybrid.queries == 300
    assert 0.640 <= dense.ndcg_at_10 <= 0.650
    assert hybrid.ndcg_at_10 >= 0.725 and hybrid.recall_at_100 >= 0.94
    assert hybrid.weight == "0.5" and hybrid.model == "sentence-transformers/all-MiniLM-L6-v2"

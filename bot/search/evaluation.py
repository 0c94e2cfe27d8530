"""`paperclub eval`: retrieval quality on a BEIR-format folder.

A BEIR folder holds corpus.jsonl (`_id`, `title`, `text`), queries.jsonl (`_id`, `text`)
and qrels/<split>.tsv (query-id, corpus-id, score; the first line is a header). Each
document is indexed as a paper whose searchable text is its title then its text, as
paperclub indexes an imported abstract; each query with judgements is ranked by plain
BM25 (no title promotion: BEIR queries are claims and questions, not titles), through
the engine interface (bot.search.engine.Engine.rank), so any engine can be measured.

nDCG@10 uses the judgement as the gain and log2(rank + 1) as the discount, as BEIR's
pytrec_eval does; Recall@100 is the share of a query's relevant documents in its top 100.
Both are averaged over the judged queries.

Besides BM25, a model's vectors (`embed_beir`, kept in a cache file: SciFact takes
minutes to embed on 2 cores) give two more methods: `dense`, the closest documents in
meaning alone, and `hybrid`, BM25 and meaning fused as the bot fuses them
(bot.search.hybrid.HybridSearcher.ranked). `cross_validated` picks the hybrid's weight
on one half of the queries and measures it on the other, and the other way round.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.corpus.indexed import IndexedPaper
from bot.search.engine import Engine, Searcher
from bot.search.params import Bm25Params
from bot.search.tokens import Tokenizer

if TYPE_CHECKING:  # numpy and the model: only where vectors are measured
    from bot.search.embedding import Embedder, Vectors

METHODS = ("bm25", "dense", "hybrid")
# The hybrid's weights cross-validation chooses among.
WEIGHTS = tuple(round(0.05 * step, 2) for step in range(2, 19))

# An engine over papers at a revision, as bot.search.builtin.index.SearchIndex.build makes one.
Indexer = Callable[[int, Tokenizer, Iterable[IndexedPaper], Bm25Params], Engine]


class BeirFormatError(ValueError):
    """A BEIR folder that cannot be read; the message names the file and line."""


@dataclass
class BeirData:
    doc_ids: list[str]
    titles: list[str]
    texts: list[str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> document id -> relevance


@dataclass
class EvalResult:
    ndcg_at_10: float
    recall_at_100: float
    queries: int
    documents: int
    k1: float
    b: float
    title_weight: int
    seconds: float
    method: str = "bm25"
    model: str | None = None  # dense and hybrid: the embedding model
    weight: str | None = None  # hybrid: the dense weight, or how it was chosen


@dataclass
class BeirVectors:
    """A model's vectors of a BEIR folder: one row per document, one per query text."""

    model: str
    documents: Vectors
    queries: dict[str, Vectors]


def read_beir(folder: Path, split: str = "test") -> BeirData:
    doc_ids, titles, texts = [], [], []
    for row in _jsonl(folder / "corpus.jsonl"):
        doc_ids.append(str(row["_id"]))
        titles.append(row.get("title") or "")
        texts.append(row.get("text") or "")
    queries = {str(row["_id"]): row.get("text") or "" for row in _jsonl(folder / "queries.jsonl")}
    return BeirData(doc_ids, titles, texts, queries, _qrels(folder / "qrels" / f"{split}.tsv"))


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as problem:
                raise BeirFormatError(f"{path}:{number}: not JSON ({problem.msg})") from None


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as lines:
        next(lines, None)  # the header: query-id, corpus-id, score
        for number, line in enumerate(lines, 2):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                raise BeirFormatError(f"{path}:{number}: expected query-id, corpus-id, score")
            qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    return qrels


def evaluate(
    data: BeirData,
    index: Indexer,
    tokenizer: Tokenizer | None = None,
    params: Bm25Params = Bm25Params(),
    title_weight: int = 1,
    method: str = "bm25",
    vectors: BeirVectors | None = None,
    weight: float | None = None,
) -> EvalResult:
    """Index the corpus with `index`, rank every judged query by `method` (dense and
    hybrid need `vectors`; hybrid mixes in meaning with `weight`, the bot's by default),
    average nDCG@10 and Recall@100.

    `title_weight` repeats the title in the searchable text (1 = as paperclub indexes)."""
    started = time.perf_counter()
    tokenizer = tokenizer or Tokenizer()
    rank = _ranker(data, index(0, tokenizer, _papers(data, title_weight), params), tokenizer, method, vectors,
                   weight)
    ndcg, recall = _scored(data, judged_queries(data), rank)
    return EvalResult(
        ndcg_at_10=_mean(ndcg),
        recall_at_100=_mean(recall),
        queries=len(ndcg),
        documents=len(data.doc_ids),
        k1=params.k1,
        b=params.b,
        title_weight=title_weight,
        seconds=time.perf_counter() - started,
        method=method,
        model=vectors.model if vectors is not None and method != "bm25" else None,
        weight=_weight_shown(method, weight),
    )


def cross_validated(
    data: BeirData,
    index: Indexer,
    vectors: BeirVectors,
    folds: int = 2,
    seed: int = 0,
    tokenizer: Tokenizer | None = None,
    params: Bm25Params = Bm25Params(),
) -> EvalResult:
    """The hybrid with its weight chosen on the other folds' queries (WEIGHTS, the best
    nDCG@10 there), measured on each fold's: no weight is tuned on the queries it scores."""
    started = time.perf_counter()
    tokenizer = tokenizer or Tokenizer()
    engine = index(0, tokenizer, _papers(data, 1), params)
    judged = judged_queries(data)
    per_weight = {w: _scored(data, judged, _ranker(data, engine, tokenizer, "hybrid", vectors, w)) for w in WEIGHTS}
    order = list(range(len(judged)))
    random.Random(seed).shuffle(order)
    parts = [order[i::folds] for i in range(folds)]
    ndcg, recall, chosen = [], [], []
    for part in parts:
        rest = [i for i in order if i not in set(part)]
        best = max(WEIGHTS, key=lambda w: (_mean([per_weight[w][0][i] for i in rest]), -abs(w - 0.5)))
        chosen.append(best)
        ndcg += [per_weight[best][0][i] for i in part]
        recall += [per_weight[best][1][i] for i in part]
    return EvalResult(
        ndcg_at_10=_mean(ndcg), recall_at_100=_mean(recall), queries=len(judged), documents=len(data.doc_ids),
        k1=params.k1, b=params.b, title_weight=1, seconds=time.perf_counter() - started, method="hybrid",
        model=vectors.model, weight=f"{folds}-fold cross-validated: " + ", ".join(f"{w:g}" for w in chosen),
    )


def judged_queries(data: BeirData) -> list[str]:
    return [q for q in data.qrels if q in data.queries and any(r > 0 for r in data.qrels[q].values())]


def _papers(data: BeirData, title_weight: int) -> Iterator[IndexedPaper]:
    for i, (title, text) in enumerate(zip(data.titles, data.texts, strict=True)):
        yield IndexedPaper(paper_id=i, title=title, text="\n".join([title] * title_weight + [text]))


def _ranker(data: BeirData, engine: Engine, tokenizer: Tokenizer, method: str, vectors: BeirVectors | None,
            weight: float | None) -> Callable[[str], Sequence[int]]:
    """How a query's text becomes a ranking of document positions, by `method`."""
    if method == "bm25":
        return lambda text: [hit.paper_id for hit in engine.rank(tokenizer.tokens(text), 100)]
    if vectors is None:
        raise ValueError(f"{method} needs the documents' vectors")
    import numpy as np

    from bot.search.fusion import DENSE_WEIGHT
    from bot.search.hybrid import HybridSearcher
    from bot.search.vectors import VectorMatrix

    matrix = VectorMatrix(vectors.model, np.arange(len(data.doc_ids), dtype=np.int64), vectors.documents)
    if method == "dense":
        return lambda text: [paper for paper, _ in matrix.top(vectors.queries[text], 100)]
    if method != "hybrid":
        raise ValueError(f"{method!r} is not a method: use {', '.join(METHODS)}")
    if not isinstance(engine, Searcher):
        raise ValueError("hybrid needs an engine that searches (bot.search.engine.Searcher)")
    searcher = HybridSearcher(engine, tokenizer, matrix, _Known(vectors), DENSE_WEIGHT if weight is None else weight)
    return lambda text: [hit.paper_id for hit in searcher.ranked(text, 100)]


def _scored(data: BeirData, judged: list[str], rank: Callable[[str], Sequence[int]]) -> tuple[list[float], list[float]]:
    ndcg, recall = [], []
    for query_id in judged:
        ranked = [data.doc_ids[position] for position in rank(data.queries[query_id])]
        ndcg.append(ndcg_at(ranked, data.qrels[query_id], 10))
        recall.append(recall_at(ranked, data.qrels[query_id], 100))
    return ndcg, recall


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _weight_shown(method: str, weight: float | None) -> str | None:
    if method != "hybrid":
        return None
    from bot.search.fusion import DENSE_WEIGHT

    return f"{DENSE_WEIGHT if weight is None else weight:g}"


class _Known:
    """The queries' vectors as a model would give them (made once, by embed_beir)."""

    def __init__(self, vectors: BeirVectors):
        self.vectors = vectors
        self.name = vectors.model
        self.dimension = int(vectors.documents.shape[1])

    def documents(self, texts: Sequence[str]) -> Vectors:
        raise NotImplementedError("the documents' vectors are made by embed_beir")

    def query(self, text: str) -> Vectors:
        return self.vectors.queries[text]


def embed_beir(data: BeirData, embedder: Embedder, cache: Path | None = None,
               progress: Callable[[int], None] | None = None) -> BeirVectors:
    """The model's vectors of every document (title, then text, as the bot embeds a
    paper) and every judged query; read from `cache` when an earlier run of the same
    model over the same texts left them there, else made and written there."""
    import numpy as np

    from bot.search.embedding import paper_text

    texts = [paper_text(title, text) for title, text in zip(data.titles, data.texts, strict=True)]
    queries = sorted({data.queries[q] for q in judged_queries(data)})
    source = str(getattr(embedder, "source", ""))  # the model's files (bot.search.embedding.FastEmbedder)
    digest = hashlib.blake2b(json.dumps([embedder.name, source, texts, queries]).encode(), digest_size=12).hexdigest()
    path = cache / f"{digest}.npz" if cache is not None else None
    if path is not None and path.exists():
        with np.load(path) as stored:
            documents, asked = stored["documents"], stored["queries"]
    else:
        documents = np.concatenate([embedder.documents(texts[i:i + 256]) for i in _batches(len(texts), progress)])
        asked = np.stack([embedder.query(q) for q in queries]) if queries else np.zeros((0, documents.shape[1]))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, documents=documents, queries=asked)
    return BeirVectors(embedder.name, documents.astype(np.float32),
                       dict(zip(queries, asked.astype(np.float32), strict=True)))


def _batches(count: int, progress: Callable[[int], None] | None) -> Iterator[int]:
    for start in range(0, count, 256):
        yield start
        if progress is not None:
            progress(min(start + 256, count))


def ndcg_at(ranked: list[str], relevance: dict[str, int], k: int) -> float:
    gains = [max(relevance.get(doc, 0), 0) for doc in ranked[:k]]
    ideal = sorted((r for r in relevance.values() if r > 0), reverse=True)[:k]
    ideal_dcg = _dcg(ideal)
    return _dcg(gains) / ideal_dcg if ideal_dcg else 0.0


def _dcg(gains: list[int]) -> float:
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, 1))


def recall_at(ranked: list[str], relevance: dict[str, int], k: int) -> float:
    relevant = {doc for doc, r in relevance.items() if r > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def describe(result: EvalResult) -> str:
    how = {"bm25": f"k1={result.k1:g} b={result.b:g} title weight {result.title_weight}",
           "dense": f"{result.model}",
           "hybrid": f"{result.model}, dense weight {result.weight}"}.get(result.method, result.method)
    return (
        f"{result.method:<7}nDCG@10 {result.ndcg_at_10:.4f}  Recall@100 {result.recall_at_100:.4f}  "
        f"({result.queries} queries, {result.documents:,} documents; {how}; {result.seconds:.1f} s)"
    )


def as_json(result: EvalResult) -> str:
    return json.dumps(asdict(result))

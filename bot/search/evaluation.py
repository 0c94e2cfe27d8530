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
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bot.corpus.indexed import IndexedPaper
from bot.search.engine import Engine
from bot.search.params import Bm25Params
from bot.search.tokens import Tokenizer

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
) -> EvalResult:
    """Index the corpus with `index`, rank every judged query, average nDCG@10 and
    Recall@100.

    `title_weight` repeats the title in the searchable text (1 = as paperclub indexes)."""
    started = time.perf_counter()
    tokenizer = tokenizer or Tokenizer()
    papers = (
        IndexedPaper(paper_id=i, title=title, text="\n".join([title] * title_weight + [text]))
        for i, (title, text) in enumerate(zip(data.titles, data.texts, strict=True))
    )
    engine = index(0, tokenizer, papers, params)
    ndcg, recall = [], []
    judged = [
        q for q in data.qrels if q in data.queries and any(r > 0 for r in data.qrels[q].values())
    ]
    for query_id in judged:
        hits = engine.rank(tokenizer.tokens(data.queries[query_id]), 100)
        ranked = [data.doc_ids[hit.paper_id] for hit in hits]
        ndcg.append(ndcg_at(ranked, data.qrels[query_id], 10))
        recall.append(recall_at(ranked, data.qrels[query_id], 100))
    return EvalResult(
        ndcg_at_10=sum(ndcg) / len(judged) if judged else 0.0,
        recall_at_100=sum(recall) / len(judged) if judged else 0.0,
        queries=len(judged),
        documents=len(data.doc_ids),
        k1=params.k1,
        b=params.b,
        title_weight=title_weight,
        seconds=time.perf_counter() - started,
    )


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
    return (
        f"nDCG@10 {result.ndcg_at_10:.4f}  Recall@100 {result.recall_at_100:.4f}  "
        f"({result.queries} queries, {result.documents:,} documents; k1={result.k1:g} b={result.b:g} "
        f"title weight {result.title_weight}; {result.seconds:.1f} s)"
    )


def as_json(result: EvalResult) -> str:
    return json.dumps(asdict(result))

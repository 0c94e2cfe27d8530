"""A second engine behind the search interface (bot.search.engine.Engine): rank-bm25's
BM25Okapi over every paper, scored in full for every question.

It is deliberately simple - no segments, no pruning, no arrays of our own - so that what
the rest of the bot asks of an engine is checked against an implementation that shares
nothing with the built-in one but the tokenizer, the filter keys and the tour's draw.
It lives under tests/ because the bot never runs it: scoring every paper per question
is fine for a few thousand papers, not for arXiv.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from rank_bm25 import BM25Okapi

from bot.corpus.indexed import IndexedPaper
from bot.search.engine import Hit, drawn
from bot.search.fields import field_value_key
from bot.search.params import Bm25Params
from bot.search.tokens import Tokenizer


class SimpleEngine:
    """The papers in id order; a paper's position in that order is its row in BM25Okapi."""

    def __init__(
        self,
        papers: Iterable[IndexedPaper],
        tokenizer: Tokenizer,
        revision: int = 0,
        params: Bm25Params = Bm25Params(),
    ):
        self.revision = revision
        self.papers = sorted(papers, key=lambda p: p.paper_id)
        self.ids = [p.paper_id for p in self.papers]
        self.row = {paper_id: row for row, paper_id in enumerate(self.ids)}
        # Collections compared as the `in:` filter compares them.
        self.collections = [{field_value_key(c) for c in p.collections} for p in self.papers]
        self.bm25 = BM25Okapi(
            [tokenizer.tokens(p.text) for p in self.papers], k1=params.k1, b=params.b, epsilon=params.epsilon
        )

    def live_count(self) -> int:
        return len(self.papers)

    def title(self, paper_id: int) -> str | None:
        row = self.row.get(paper_id)
        return self.papers[row].title if row is not None else None

    def rank(
        self,
        terms: Sequence[str],
        k: int,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[Hit]:
        scores = self.bm25.get_scores(list(terms))
        rows = [r for r in self._rows(collections, excluded) if self._matched(r, terms)]
        rows.sort(key=lambda r: (-scores[r], self.ids[r]))
        return [Hit(self.ids[r], float(scores[r]), self._matched(r, terms)) for r in rows[:k]]

    def distinctive_terms(self, paper_id: int, limit: int) -> list[str]:
        row = self.row.get(paper_id)
        if row is None:
            return []
        impacts = {term: self._impact(term, row) for term in self.bm25.doc_freqs[row]}
        return sorted(impacts, key=lambda term: (-impacts[term], term))[:limit]

    def scores(self, terms: Sequence[str], paper_ids: Collection[int]) -> dict[int, float]:
        rows = [self.row[p] for p in paper_ids if p in self.row]
        scores = self.bm25.get_batch_scores(list(terms), rows)
        return {self.ids[r]: s for r, s in zip(rows, scores) if self._matched(r, terms)}

    def similar(self, paper_id: int, k: int = 5) -> list[Hit]:
        if paper_id not in self.row:
            return []
        return self.rank(self.distinctive_terms(paper_id, 30), k, excluded={paper_id})

    def sample(
        self,
        count: int,
        seed: str,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[int]:
        ids = [self.ids[r] for r in self._rows(collections, ())]
        return drawn(ids, count, seed, excluded)

    def _rows(self, collections: Sequence[str], excluded: Collection[int]) -> list[int]:
        wanted = {field_value_key(c) for c in collections}
        return [
            r
            for r, paper_id in enumerate(self.ids)
            if (not wanted or wanted & self.collections[r]) and paper_id not in excluded
        ]

    def _matched(self, row: int, terms: Sequence[str]) -> tuple[str, ...]:
        """The query's terms (each once, in query order) this paper contains."""
        return tuple(t for t in dict.fromkeys(terms) if t in self.bm25.doc_freqs[row])

    def _impact(self, term: str, row: int) -> float:
        """The term's share of a score, as BM25Okapi.get_scores computes it."""
        bm25 = self.bm25
        tf = bm25.doc_freqs[row][term]
        norm = bm25.k1 * (1 - bm25.b + bm25.b * bm25.doc_len[row] / bm25.avgdl)
        return bm25.idf[term] * (tf * (bm25.k1 + 1) / (tf + norm))

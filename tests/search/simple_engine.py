"""A second engine behind the search interface (bot.search.engine): rank-bm25's BM25Okapi
over every paper, scored in full for every question, as a `Searcher`, and handed out by
a `SearchBackend` that rebuilds it whenever the corpus's revision moves.

It is deliberately simple - no segments, no pruning, no arrays of our own, nothing kept
on disk - so that what the rest of the bot asks of an engine is checked against an
implementation that shares nothing with the built-in one but what bot/search shares
with every engine: the tokenizer, the filters (bot.search.fields), did-you-mean's rules
(bot.search.suggest) and the tour's draw. It lives under tests/ because the bot never
runs it: scoring every paper per question is fine for a few thousand papers, not for
arXiv. Its corpus holds one paper or more (BM25Okapi divides by the papers' count).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from rank_bm25 import BM25Okapi
from rapidfuzz.distance import OSA

from bot.corpus.indexed import IndexedPaper
from bot.search.engine import Hit, drawn
from bot.search.fields import (
    LISTED_FIELDS,
    display_names,
    field_value_key,
    filter_keys,
    unknown_value,
)
from bot.search.params import Bm25Params
from bot.search.query import FILTER_PATTERN, Query, years_of
from bot.search.suggest import Spellcheck, correctable, max_edits
from bot.search.tokens import Tokenizer

SPELLING_MIN_PAPERS = 2  # a word is suggested when its stem is in this many papers


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
        self.tokenizer = tokenizer
        self.papers = sorted(papers, key=lambda p: p.paper_id)
        self.ids = [p.paper_id for p in self.papers]
        self.row = {paper_id: row for row, paper_id in enumerate(self.ids)}
        self.keys = [filter_keys(p) for p in self.papers]
        self.names = display_names(self.papers)
        self.title_terms = [
            _plain({t for t, _w in tokenizer.terms_with_words(p.title)}) for p in self.papers
        ]
        self.bm25 = BM25Okapi(
            [tokenizer.tokens(p.text) for p in self.papers],
            k1=params.k1,
            b=params.b,
            epsilon=params.epsilon,
        )
        self.words = self._suggestible()

    def live_count(self) -> int:
        return len(self.papers)

    def title(self, paper_id: int) -> str | None:
        row = self.row.get(paper_id)
        return self.papers[row].title if row is not None else None

    # --- the engine ------------------------------------------------------------------

    def rank(
        self,
        terms: Sequence[str],
        k: int,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[Hit]:
        return self._hits(terms, self._ranked(terms, self._rows(collections, excluded))[:k])

    def distinctive_terms(self, paper_id: int, limit: int) -> list[str]:
        row = self.row.get(paper_id)
        if row is None:
            return []
        impacts = {term: self._impact(term, row) for term in self.bm25.doc_freqs[row]}
        return sorted(impacts, key=lambda term: (-impacts[term], term))[:limit]

    def scores(self, terms: Sequence[str], paper_ids: Collection[int]) -> dict[int, float]:
        rows = [self.row[p] for p in paper_ids if p in self.row]
        scores = self.bm25.get_batch_scores(list(terms), rows)
        return {self.ids[r]: s for r, s in zip(rows, scores, strict=True) if self._matched(r, terms)}

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

    # --- the searcher ----------------------------------------------------------------

    def search(self, query: Query, k: int = 10) -> list[Hit]:
        """BM25 over the papers the filters leave; the paper whose title the query spells
        first (its plain terms, those without a hyphen, are exactly the title's)."""
        tokens = self.tokenizer.tokens(query.text)
        rows = self._filtered(query.filters)
        if not tokens:
            listed = sorted(rows, key=self.ids.__getitem__)[:k] if query.filters else []
            return [Hit(self.ids[r], 0.0, ()) for r in listed]
        ranked = self._ranked(tokens, rows)
        titled = self._titled(tokens, ranked)
        if titled is not None:
            ranked = [titled, *(hit for hit in ranked if hit != titled)]
        hits = self._hits(tokens, ranked[:k])
        if titled is not None and hits:
            hits[0] = Hit(hits[0].paper_id, hits[0].score, hits[0].matched, title_match=True)
        return hits

    def filtered_count(self, query: Query) -> int:
        return len(self._filtered(query.filters))

    def spellcheck(self, query: Query) -> Spellcheck:
        known = self.bm25.idf
        pairs = self.tokenizer.terms_with_words(query.text)
        unknown = list(dict.fromkeys(w for t, w in pairs if "-" not in w and t not in known))
        found = {word: self._closest(word) for word in unknown}
        corrections = {word: meant for word, meant in found.items() if meant is not None}
        return Spellcheck(tuple(unknown), corrections, FILTER_PATTERN)

    def unknown_filter(self, query: Query) -> str | None:
        for fld, values in query.filters.items():
            for value in values:
                if not self._filtered({fld: [value]}):
                    return unknown_value(fld, value, self._counted(fld))
        return None

    # --- rows ------------------------------------------------------------------------

    def _rows(self, collections: Sequence[str], excluded: Collection[int]) -> list[int]:
        wanted = {field_value_key(c) for c in collections}
        return [
            r
            for r, paper_id in enumerate(self.ids)
            if (not wanted or wanted & self.keys[r]["in"]) and paper_id not in excluded
        ]

    def _filtered(self, filters: Mapping[str, list[str]]) -> list[int]:
        """The rows passing every filter: an author by every word of the name, the other
        fields by the whole value (a tag by one of its words too)."""
        rows = range(len(self.papers))
        for fld, values in filters.items():
            for value in values:
                if fld == "year":  # any year of a range
                    years = {str(y) for y in years_of(value)}
                    rows = [r for r in rows if years & self.keys[r]["year"]]
                    continue
                key = field_value_key(value)
                wanted = key.split("-") if fld == "author" else [key]
                rows = [r for r in rows if all(w in self.keys[r][fld] for w in wanted)]
        return list(rows)

    def _counted(self, fld: str) -> Counter[str]:
        """Each value of a listed field as first written, with how many papers have it."""
        counted: Counter[str] = Counter()
        names = self.names[fld] if fld in LISTED_FIELDS else {}
        for key in sorted(names):
            counted[names[key]] += sum(key in keys[fld] for keys in self.keys)
        return counted

    # --- ranking ---------------------------------------------------------------------

    def _ranked(self, terms: Sequence[str], rows: Iterable[int]) -> list[tuple[int, float]]:
        """(paper id, score) of the rows holding a term, best first, ties to the lower id."""
        scores = self.bm25.get_scores(list(terms))
        ranked = [(self.ids[r], float(scores[r])) for r in rows if self._matched(r, terms)]
        return sorted(ranked, key=lambda hit: (-hit[1], hit[0]))

    def _titled(
        self, tokens: Sequence[str], ranked: list[tuple[int, float]]
    ) -> tuple[int, float] | None:
        """The best ranked paper whose title the query spells, if any."""
        query = _plain(set(tokens))
        if len(query) < 2:
            return None
        return next((hit for hit in ranked if self.title_terms[self.row[hit[0]]] == query), None)

    def _hits(self, terms: Sequence[str], ranked: list[tuple[int, float]]) -> list[Hit]:
        return [
            Hit(paper_id, score, self._matched(self.row[paper_id], terms))
            for paper_id, score in ranked
        ]

    def _matched(self, row: int, terms: Sequence[str]) -> tuple[str, ...]:
        """The query's terms (each once, in query order) this paper contains."""
        return tuple(t for t in dict.fromkeys(terms) if t in self.bm25.doc_freqs[row])

    def _impact(self, term: str, row: int) -> float:
        """The term's share of a score, as BM25Okapi.get_scores computes it."""
        bm25 = self.bm25
        tf = bm25.doc_freqs[row][term]
        norm = bm25.k1 * (1 - bm25.b + bm25.b * bm25.doc_len[row] / bm25.avgdl)
        return float(bm25.idf[term] * (tf * (bm25.k1 + 1) / (tf + norm)))

    # --- did you mean ----------------------------------------------------------------

    def _suggestible(self) -> Counter[str]:
        """The plain words of the texts as written, with how often each occurs, of those
        whose stem is in SPELLING_MIN_PAPERS papers or more (typos and one-off names
        are poor suggestions)."""
        written = Counter(
            w for p in self.papers for _t, w in self.tokenizer.terms_with_words(p.text)
        )
        papers = Counter(term for frequencies in self.bm25.doc_freqs for term in frequencies)
        words = sorted(w for w in written if correctable(w))
        stems = self.tokenizer.stems(words)
        return Counter(
            {w: written[w] for w, s in zip(words, stems, strict=True) if papers[s] >= SPELLING_MIN_PAPERS}
        )

    def _closest(self, word: str) -> str | None:
        """The suggestible word nearest `word` within max_edits, never `word` itself: one
        that starts with its first or second letter (a swap), the closest, then the most
        frequent, then the shortest and first alphabetically; across the two letters,
        the first alphabetically."""
        if not correctable(word):
            return None
        edits = max_edits(word)
        best: tuple[int, int, str] | None = None
        for first in dict.fromkeys(word[:2]):
            near = [
                (OSA.distance(word, w), -count, len(w), w)
                for w, count in self.words.items()
                if w[0] == first and w != word and abs(len(w) - len(word)) <= edits
            ]
            near = [n for n in near if n[0] <= edits]
            if near:
                distance, count, _length, found = min(near)
                if best is None or (distance, count, found) < best:
                    best = (distance, count, found)
        return best[2] if best else None


def _plain(terms: set[str]) -> set[str]:
    """Terms without the whole hyphenated words, whose parts are already there."""
    return {t for t in terms if "-" not in t}


class Corpus(Protocol):
    """What the backend reads of a library (bot.corpus.library.Library)."""

    def revision(self) -> int: ...

    def papers(self) -> Iterable[IndexedPaper]: ...


class _Unheeded:
    """What `ahead` yields: the papers an import tells it are read again at the next
    build anyway, so there is nothing to prepare (bot.corpus.drafts.Written)."""

    def __call__(self, papers: list[IndexedPaper]) -> None:
        pass

    def committed(self, revision: int, reopened: Collection[int]) -> None:
        pass


class SimpleBackend:
    """rank-bm25 as a search backend (bot.search.engine.SearchBackend): an engine of every
    paper, made again whenever the corpus's revision moves, held in memory only."""

    def __init__(
        self, corpus: Corpus, tokenizer: Tokenizer | None = None, params: Bm25Params = Bm25Params()
    ):
        self.corpus = corpus
        self.tokenizer = tokenizer or Tokenizer()
        self.params = params
        self._engine: SimpleEngine | None = None

    def current(self) -> SimpleEngine:
        revision = self.corpus.revision()
        engine = self._engine
        if engine is None or engine.revision != revision:
            self._engine = engine = SimpleEngine(
                self.corpus.papers(), self.tokenizer, revision, self.params
            )
        return engine

    def loaded(self) -> SimpleEngine | None:
        return self._engine

    def warm(self) -> SimpleEngine:
        return self.current()

    def ahead(self) -> AbstractContextManager[_Unheeded]:
        return nullcontext(_Unheeded())

    def wait_for_merges(self) -> None:
        """Nothing runs in the background: there is nothing to wait for."""

    def location(self) -> str | None:
        return None

    def stored_index(self) -> None:
        """Held in memory only: nothing is stored."""
        return None

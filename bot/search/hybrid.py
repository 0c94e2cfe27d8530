"""Search by words and meaning together, over any engine (bot.search.engine).

`HybridBackend` wraps a backend: its `current` is the engine's index, and, once papers
have vectors under the configured model (bot.corpus.embedded), a `HybridSearcher` over
it that fuses BM25 with the cosine of the papers' vectors (bot.search.fusion) for
`search` and `similar`. Everything else (rank, scores, filters, did-you-mean) is the
engine's own. With embeddings off, no model, or no vectors yet, `current` is the engine
itself: exactly the lexical behaviour, score for score.

The vectors of every process come from the database: a process reads those written since
it last looked (the vectors' version, one row, read before each search), so a paper one
replica embedded is found by meaning on every replica; a large library's are also kept
beside the index, with its neighbour index (bot.search.live_vectors).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import numpy as np

from bot.corpus.embedded import StoredVectors
from bot.search.embedding import Embedder, EmbeddingConfig, Vectors, load_embedder, unit
from bot.search.engine import Hit, SearchBackend, Searcher, StoredIndex
from bot.search.fusion import DENSE_WEIGHT, fused
from bot.search.live_vectors import LiveVectors
from bot.search.query import Query
from bot.search.suggest import Spellcheck
from bot.search.vectors import VectorMatrix

if TYPE_CHECKING:
    from bot.corpus.drafts import Written
    from bot.search.tokens import Tokenizer
    from store import Database

log = logging.getLogger(__name__)

# Candidates each side brings to the fusion: BM25's best and the closest in meaning.
CANDIDATES = 100
# A filtered search looks for meaning among every paper the filters leave when they leave
# at most this many; beyond, among BM25's candidates only (listing them all would cost
# more than the search).
FILTERED_MAX = 50_000
# The best of a fusion whose matched words are looked up (no reply shows more).
CARDS = 25
# The terms that stand for a paper in `similar`, as the engine's own similar takes them.
SIMILAR_TERMS = 30
# The least cosine at which meaning alone brings a paper in (one with none of the words).
# Under MiniLM on SciFact, 95% of the relevant abstracts are closer to their query than
# 0.29 and 90% of unrelated pairs further than 0.25: without a floor a query of nonsense
# would list the whole of a small library, and every list would run to its end.
MEANING_FLOOR = 0.25


class HybridSearcher:
    """An engine's index, with `search` and `similar` ranked by words and meaning."""

    def __init__(self, engine: Searcher, tokenizer: Tokenizer, vectors: VectorMatrix, embedder: Embedder,
                 weight: float = DENSE_WEIGHT):
        self.engine = engine
        self.revision = engine.revision
        self.tokenizer = tokenizer
        self.vectors = vectors
        self.embedder = embedder
        self.weight = weight
        self._collections: dict[tuple[str, ...], list[int]] = {}

    # --- ranked by words and meaning ------------------------------------------------------

    def search(self, query: Query, k: int = 10) -> list[Hit]:
        terms = self.tokenizer.tokens(query.text)
        if not terms:
            return self.engine.search(query, k)  # filters alone: a list, not a ranking
        words = self.engine.search(query, CANDIDATES)
        meaning = self.embedder.query(query.text)
        among = self._among(query, words)
        near = self.vectors.top(meaning, CANDIDATES, among=among)
        # The paper whose title was typed stays first.
        first = words[0].paper_id if words and words[0].title_match else None
        return self._fused(terms, words, near, meaning, k, first)

    def ranked(self, text: str, k: int) -> list[Hit]:
        """BM25's ranking of `text` (no filters, no title put first) fused with meaning:
        what `paperclub eval` measures (bot.search.evaluation)."""
        terms = self.tokenizer.tokens(text)
        meaning = self.embedder.query(text)
        words = self.engine.rank(terms, CANDIDATES) if terms else []
        return self._fused(terms, words, self.vectors.top(meaning, CANDIDATES), meaning, k)

    def similar(self, paper_id: int, k: int = 5) -> list[Hit]:
        vector = self.vectors.vector(paper_id)
        if vector is None:
            return self.engine.similar(paper_id, k)
        terms = self.engine.distinctive_terms(paper_id, SIMILAR_TERMS)
        words = self.engine.similar(paper_id, CANDIDATES)
        return self._fused(terms, words, self.vectors.top(vector, CANDIDATES, excluded={paper_id}), vector, k)

    def _among(self, query: Query, words: list[Hit]) -> list[int] | None:
        """The papers meaning may bring in: all (None) without filters; with filters, every
        paper passing them when few enough, else BM25's candidates."""
        if not query.filters:
            return None
        count = self.engine.filtered_count(query)
        if count > FILTERED_MAX:
            return [hit.paper_id for hit in words]
        return [hit.paper_id for hit in self.engine.search(Query("", query.filters), count)]

    def _live(self, near: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """Papers the engine can find (a merged or deleted paper's vector may linger)."""
        return [(paper, score) for paper, score in near if self.engine.title(paper) is not None]

    def _fused(
        self, terms: list[str], words: list[Hit], near: list[tuple[int, float]], meaning: Vectors, k: int,
        first: int | None = None,
    ) -> list[Hit]:
        """The k best candidates by fused score (`first` first), each a paper the engine
        can find: BM25's are; one meaning brought is looked up as it is reached (a merged or
        deleted paper's vector may linger), not all of them. The words each matched are
        named for the best (CARDS) only, which are all a reply shows."""
        lexical = {hit.paper_id: hit.score for hit in words}
        near = [(paper, cosine) for paper, cosine in near if cosine >= MEANING_FLOOR or paper in lexical]
        candidates = list(dict.fromkeys([*lexical, *(paper for paper, _score in near)]))
        brought = [paper for paper in candidates if paper not in lexical]
        lexical.update(self.engine.scores(terms, brought) if brought else {})
        dense = dict(near)
        dense.update(self.vectors.similarities(meaning, [p for p in candidates if p not in dense]))
        ranked = fused(lexical, dense, candidates, self.weight)
        if first is not None:
            ranked.sort(key=lambda pair: pair[0] != first)  # stable: the rest keep their order
        matched = {hit.paper_id: hit.matched for hit in words}
        best: list[tuple[int, float]] = []
        for paper, score in ranked:
            if len(best) == k:
                break
            if paper in matched or self.engine.title(paper) is not None:
                best.append((paper, score))
        matched.update(self._matched(terms, [paper for paper, _ in best[:CARDS] if paper not in matched]))
        return [Hit(paper, score, matched.get(paper, ()), paper == first, by_meaning=True) for paper, score in best]

    def _matched(self, terms: list[str], papers: list[int]) -> dict[int, tuple[str, ...]]:
        """The query's terms each of these papers contains (meaning brought them in, so
        BM25's candidates did not say): the card still names the words that matched."""
        found: dict[int, list[str]] = {paper: [] for paper in papers}
        for term in dict.fromkeys(terms) if papers else ():
            for paper in self.engine.scores([term], papers):
                found[paper].append(term)
        return {paper: tuple(words) for paper, words in found.items()}

    # --- meaning for the picks (bot.services.picks) --------------------------------------

    def vector(self, paper_id: int) -> Vectors | None:
        """The paper's vector, or None while it has none."""
        return self.vectors.vector(paper_id)

    def text_vector(self, text: str) -> Vectors:
        """What a text (a channel's topics) means, as a query's vector."""
        return self.embedder.query(text)

    def nearest(self, vector: Vectors, k: int, collections: Sequence[str] = (),
                excluded: Collection[int] = ()) -> list[tuple[int, float]]:
        """The k live papers closest to `vector` (with their cosines), in any of
        `collections` when some are given, none of `excluded`."""
        among = self._in_collections(tuple(collections)) if collections else None
        return self._live(self.vectors.top(vector, k, among=among, excluded=excluded))

    def profile(self, topics: Sequence[str], liked: Sequence[int]) -> Vectors | None:
        """What a channel reads, as a vector: its topics' meaning plus the mean of the
        papers it liked (those with a vector), each counting alike; None with neither."""
        parts: list[Vectors] = []
        if topics:
            parts.append(self.text_vector(", ".join(topics)))
        liked_vectors = [v for v in map(self.vector, liked) if v is not None]
        if liked_vectors:
            parts.append(unit(np.mean(liked_vectors, axis=0)))
        return unit(np.sum(parts, axis=0)) if parts else None

    def closest_of(self, papers: Sequence[int], paper_ids: Sequence[int]) -> dict[int, float]:
        """Each of `paper_ids`' cosine with the closest of `papers` (those with a vector;
        nothing when none has one)."""
        closest: dict[int, float] = {}
        for vector in (v for v in map(self.vector, papers) if v is not None):
            for paper, cosine in self.closeness(vector, paper_ids).items():
                closest[paper] = max(closest.get(paper, -1.0), cosine)
        return closest

    def closeness(self, vector: Vectors, paper_ids: Sequence[int]) -> dict[int, float]:
        """The cosine of `vector` with each of these papers that has a vector."""
        return self.vectors.similarities(vector, paper_ids)

    def _in_collections(self, collections: tuple[str, ...]) -> list[int]:
        """The live papers in any of `collections` (the `in:` filter, one at a time:
        filters of one field must all match), kept for this index's lifetime."""
        if collections not in self._collections:
            papers: set[int] = set()
            for name in collections:
                query = Query("", {"in": [name]})
                papers.update(hit.paper_id for hit in self.engine.search(query, self.engine.filtered_count(query)))
            self._collections[collections] = sorted(papers)
        return self._collections[collections]

    # --- the engine's own -----------------------------------------------------------------

    def live_count(self) -> int:
        return self.engine.live_count()

    def title(self, paper_id: int) -> str | None:
        return self.engine.title(paper_id)

    def rank(self, terms: Sequence[str], k: int, collections: Sequence[str] = (),
             excluded: Collection[int] = ()) -> list[Hit]:
        return self.engine.rank(terms, k, collections, excluded)

    def distinctive_terms(self, paper_id: int, limit: int) -> list[str]:
        return self.engine.distinctive_terms(paper_id, limit)

    def scores(self, terms: Sequence[str], paper_ids: Collection[int]) -> dict[int, float]:
        return self.engine.scores(terms, paper_ids)

    def sample(self, count: int, seed: str, collections: Sequence[str] = (),
               excluded: Collection[int] = ()) -> list[int]:
        return self.engine.sample(count, seed, collections, excluded)

    def filtered_count(self, query: Query) -> int:
        return self.engine.filtered_count(query)

    def spellcheck(self, query: Query) -> Spellcheck:
        return self.engine.spellcheck(query)

    def unknown_filter(self, query: Query) -> str | None:
        return self.engine.unknown_filter(query)


class HybridBackend:
    """A backend whose index ranks by words and meaning once papers have vectors."""

    def __init__(
        self,
        words: SearchBackend,
        stored: StoredVectors,
        config: EmbeddingConfig,
        load: Callable[[EmbeddingConfig], Embedder | None] = load_embedder,
    ):
        self.words = words
        self.stored = stored
        self.config = config
        self._load = load
        self._lock = threading.Lock()
        self.live = LiveVectors(stored, config.model, words.location())
        self._embedder: Embedder | None = None
        self._tried = False
        self._searcher: HybridSearcher | None = None

    @property
    def tokenizer(self) -> Tokenizer:
        return self.words.tokenizer

    def current(self) -> Searcher:
        engine = self.words.current()
        vectors = self.vectors()
        embedder = self.embedder() if len(vectors) else None
        if embedder is None:
            return engine
        held = self._searcher  # one per index and vectors: what it keeps (collections) lasts
        if held is None or held.engine is not engine or held.vectors is not vectors:
            held = self._searcher = HybridSearcher(engine, self.tokenizer, vectors, embedder)
        return held

    def vectors(self) -> VectorMatrix:
        """The papers' vectors under the model, with those written since the last look."""
        return self.live.current()

    def embedder(self) -> Embedder | None:
        """The model, loaded on first need; tried once (a model that would not load is
        not retried on every search: one log line said why)."""
        if not self._tried:
            with self._lock:
                if not self._tried:
                    self._embedder = self._load(self.config)
                    self._tried = True
        return self._embedder

    def loaded(self) -> Searcher | None:
        return self.words.loaded()

    def warm(self) -> Searcher:
        self.words.warm()
        if len(self.vectors()):
            self.embedder()
        return self.current()

    def ahead(self) -> AbstractContextManager[Written]:
        return self.words.ahead()

    def wait_for_merges(self) -> None:
        self.words.wait_for_merges()

    def location(self) -> str | None:
        return self.words.location()

    def stored_index(self) -> StoredIndex | None:
        return self.words.stored_index()


def words_only(index: Searcher) -> Searcher:
    """The engine under a hybrid index (`search --lexical`: exact BM25 scores), or the index."""
    return index.engine if isinstance(index, HybridSearcher) else index


def with_meaning(words: SearchBackend, db: Database, env: Mapping[str, str] | None = None) -> SearchBackend:
    """`words` as it is when embeddings are off (PAPERCLUB_EMBEDDINGS, read from `env`,
    the process's environment by default), else ranking by meaning too."""
    config = EmbeddingConfig.from_env(env)
    return HybridBackend(words, StoredVectors(db), config) if config.enabled else words

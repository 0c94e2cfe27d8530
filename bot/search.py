"""Search: queries with filters, over a BM25 index of the corpus at one revision.

`SearchIndex` is immutable once built: a new corpus revision builds a new one and
`SearchService` swaps the reference, so a search in flight always sees one whole,
consistent index.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bot.bm25 import Bm25Index, Bm25Params
from bot.tokens import Tokenizer, fold

FILTER_FIELDS = ("author", "track", "in", "tag")
# A query that reads as a paper's title puts that paper first. Among the best BM25
# candidates, a title matches when the query holds most of the title's terms and the
# title holds nearly all of the query's: "graph coarsening neural networks" is the title
# "Graph Coarsening with Neural Networks", while "graph neural networks" is a topic.
TITLE_POOL = 50
TITLE_COVERED = 0.6  # share of the title's terms the query must contain
QUERY_COVERED = 0.8  # share of the query's terms the title must contain
_FILTER = re.compile(r'\b(author|track|in|tag):(?:"([^"]*)"|(\S+))', re.IGNORECASE)


class QueryError(ValueError):
    """A query that cannot be run; the message says what to type instead."""


@dataclass
class Query:
    text: str  # the free text, filters removed
    filters: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: str) -> Query:
        filters: dict[str, list[str]] = {}
        for match in _FILTER.finditer(raw):
            value = (match.group(2) if match.group(2) is not None else match.group(3)).strip()
            if not value:
                raise QueryError(f'{match.group(1)}: needs a value, e.g. {match.group(1)}:"some words"')
            filters.setdefault(match.group(1).lower(), []).append(value)
        text = " ".join(_FILTER.sub(" ", raw).split())
        return cls(text=text, filters=filters)

    def is_empty(self) -> bool:
        return not self.text and not self.filters


@dataclass(frozen=True)
class IndexedPaper:
    """What the index needs of one paper: its text and the fields filters look at."""

    paper_id: int
    title: str
    text: str  # everything searchable: title, abstract, reviewer notes
    authors: Sequence[str] = ()
    track: str | None = None
    award: str | None = None
    collections: Sequence[str] = ()
    tags: Sequence[str] = ()


@dataclass(frozen=True)
class Hit:
    paper_id: int
    score: float
    matched: tuple[str, ...]  # the query's stemmed terms this paper contains
    title_match: bool = False  # promoted because the query reads as its title


def field_value_key(value: str) -> str:
    """How filter values are compared: case, accents and punctuation ignored."""
    return "-".join(re.findall(r"\w+", fold(value)))


class SearchIndex:
    """The corpus at one revision: BM25 over the text plus postings for the filters."""

    def __init__(self, revision: int, tokenizer: Tokenizer, papers: Iterable[IndexedPaper], params: Bm25Params):
        self.revision = revision
        self.tokenizer = tokenizer
        ids: list[int] = []
        self.titles: list[str] = []
        documents: list[list[str]] = []
        postings: dict[str, dict[str, list[int]]] = {f: {} for f in FILTER_FIELDS}
        for doc, paper in enumerate(papers):
            ids.append(paper.paper_id)
            self.titles.append(paper.title)
            tokens = tokenizer.tokens(paper.text)
            documents.append(tokens)
            for fld, keys in _filter_keys(paper).items():
                for key in keys:
                    postings[fld].setdefault(key, []).append(doc)
        self.paper_ids = np.asarray(ids, dtype=np.int64)
        self._doc_of_paper = {pid: i for i, pid in enumerate(ids)}
        self.documents = documents
        self.bm25 = Bm25Index.build(documents, params)
        self.postings = {f: {k: np.asarray(v, dtype=np.int64) for k, v in d.items()} for f, d in postings.items()}

    def __len__(self) -> int:
        return len(self.paper_ids)

    def doc_of(self, paper_id: int) -> int | None:
        return self._doc_of_paper.get(paper_id)

    def title(self, paper_id: int) -> str:
        return self.titles[self._doc_of_paper[paper_id]]

    def filter_mask(self, filters: dict[str, list[str]]) -> np.ndarray | None:
        """Documents passing every filter (values of one field must all match)."""
        if not filters:
            return None
        mask = np.ones(len(self), dtype=bool)
        for fld, values in filters.items():
            for value in values:
                mask &= self._field_mask(fld, value)
        return mask

    def _field_mask(self, fld: str, value: str) -> np.ndarray:
        mask = np.zeros(len(self), dtype=bool)
        if fld == "author":
            # Every word of the name must be among the paper's author words, so
            # author:lecun and author:"yann lecun" both find LeCun's papers.
            words = field_value_key(value).split("-")
            mask[:] = True
            for word in words:
                word_mask = np.zeros(len(self), dtype=bool)
                word_mask[self.postings["author"].get(word, np.zeros(0, dtype=np.int64))] = True
                mask &= word_mask
            return mask
        mask[self.postings[fld].get(field_value_key(value), np.zeros(0, dtype=np.int64))] = True
        return mask

    def search(self, query: Query, k: int = 10) -> list[Hit]:
        tokens = self.tokenizer.tokens(query.text)
        allowed = self.filter_mask(query.filters)
        if not tokens:
            if allowed is None:
                return []
            # Filters alone: list what passes, in corpus order.
            return [Hit(int(self.paper_ids[d]), 0.0, ()) for d in np.flatnonzero(allowed)[:k]]
        ranked = self.bm25.top(tokens, max(k, TITLE_POOL), allowed)
        titled = self._title_match(tokens, ranked)
        if titled is not None:
            ranked.insert(0, ranked.pop(titled))
        hits = self._hits(tokens, ranked[:k])
        if titled is not None and hits:
            hits[0] = Hit(hits[0].paper_id, hits[0].score, hits[0].matched, title_match=True)
        return hits

    def rank(self, tokens: list[str], k: int, allowed: np.ndarray | None = None) -> list[Hit]:
        """Plain BM25 ranking of already-tokenised terms among `allowed` documents (picks
        use it: a channel's topics are terms, not a typed title)."""
        return self._hits(tokens, self.bm25.top(tokens, k, allowed))

    def mask_of(self, paper_ids: Iterable[int]) -> np.ndarray:
        """A boolean mask over documents that is True for the given papers."""
        mask = np.zeros(len(self), dtype=bool)
        docs = [self._doc_of_paper[p] for p in paper_ids if p in self._doc_of_paper]
        mask[docs] = True
        return mask

    def _title_match(self, tokens: list[str], ranked: list[tuple[int, float]]) -> int | None:
        """The position in `ranked` of the paper whose title the query spells, if any."""
        query = _plain_terms(tokens)
        if len(query) < 2:
            return None
        best, best_cover = None, 0.0
        for position, (doc, _score) in enumerate(ranked):
            title = _plain_terms(self.tokenizer.tokens(self.titles[doc]))
            shared = len(query & title)
            if not title or shared / len(title) < TITLE_COVERED or shared / len(query) < QUERY_COVERED:
                continue
            cover = shared / len(title) * shared / len(query)
            if cover > best_cover:  # ties keep the better BM25 rank
                best, best_cover = position, cover
        return best

    def similar(self, paper_id: int, k: int = 5, max_terms: int = 30) -> list[Hit]:
        """Papers like this one: its most distinctive terms as a BM25 query."""
        doc = self.doc_of(paper_id)
        if doc is None:
            return []
        terms = self.distinctive_terms(doc, max_terms)
        allowed = np.ones(len(self), dtype=bool)
        allowed[doc] = False
        return self._hits(terms, self.bm25.top(terms, k, allowed))

    def distinctive_terms(self, doc: int, limit: int) -> list[str]:
        """The document's terms with the highest BM25 impact in it."""
        tokens = sorted(set(self.documents[doc]))
        impacts = [self._impact(t, doc) for t in tokens]
        ranked = sorted(zip(impacts, tokens), key=lambda pair: (-pair[0], pair[1]))
        return [t for _, t in ranked[:limit]]

    def _impact(self, term: str, doc: int) -> float:
        row = self.bm25.vocabulary[term]
        start, end = self.bm25.impacts.indptr[row], self.bm25.impacts.indptr[row + 1]
        where = np.searchsorted(self.bm25.impacts.indices[start:end], doc)
        return float(self.bm25.impacts.data[start + where])

    def _hits(self, tokens: list[str], ranked: list[tuple[int, float]]) -> list[Hit]:
        unique = list(dict.fromkeys(tokens))
        hits = []
        for doc, score in ranked:
            present = set(self.documents[doc])
            hits.append(Hit(int(self.paper_ids[doc]), score, tuple(t for t in unique if t in present)))
        return hits


def _plain_terms(tokens: list[str]) -> set[str]:
    """Terms without the whole hyphenated words, whose parts are already there."""
    return {t for t in tokens if "-" not in t}


def _filter_keys(paper: IndexedPaper) -> dict[str, set[str]]:
    author_words = {w for name in paper.authors for w in field_value_key(name).split("-") if w}
    tag_keys = {field_value_key(t) for t in paper.tags} | {
        w for t in paper.tags for w in field_value_key(t).split("-") if w
    }
    tracks = {field_value_key(v) for v in (paper.track, paper.award) if v}
    return {
        "author": author_words,
        "track": tracks,
        "in": {field_value_key(c) for c in paper.collections},
        "tag": tag_keys,
    }


class SearchService:
    """Hands out the index for the corpus's current revision, rebuilding when it moved.

    The swap is a single reference assignment under a lock, so readers never see a
    half-built index; a build happens at most once per revision.
    """

    def __init__(self, loader, tokenizer: Tokenizer | None = None, params: Bm25Params = Bm25Params()):
        # loader: an object with revision() -> int and papers() -> Iterable[IndexedPaper]
        self.loader = loader
        self.tokenizer = tokenizer or Tokenizer()
        self.params = params
        self._index: SearchIndex | None = None
        self._lock = threading.Lock()

    def current(self) -> SearchIndex:
        revision = self.loader.revision()
        index = self._index
        if index is not None and index.revision == revision:
            return index
        with self._lock:
            if self._index is None or self._index.revision != revision:
                self._index = SearchIndex(revision, self.tokenizer, self.loader.papers(), self.params)
            return self._index

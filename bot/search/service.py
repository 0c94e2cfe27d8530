"""Search: queries with filters, over the index of the corpus at one revision.

`SearchIndex` is immutable: a new corpus revision gives a new one and `SearchService`
swaps the reference, so a search in flight always sees one whole, consistent index. The
service keeps the index on disk (see bot.search.files): a process loads the version an
import wrote instead of re-tokenising, and builds (or extends) one only when none is
there for the current revision.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.search.arrays import ranges
from bot.search.bm25 import Bm25Index, Bm25Params
from bot.search.content import (
    FILTER_FIELDS,
    IndexContent,
    IndexedPaper,
    field_value_key,
    plain_terms,
)
from bot.search.files import IndexStore, StoredVersion, default_index_dir, fingerprint
from bot.search.suggest import Spellcheck
from bot.search.tokens import Tokenizer

__all__ = [
    "FILTER_FIELDS",
    "Hit",
    "IndexedPaper",
    "Query",
    "QueryError",
    "SearchIndex",
    "SearchService",
    "Spellcheck",
    "field_value_key",
]

log = logging.getLogger(__name__)
# A query that reads as a paper's title puts that paper first. Among the best BM25
# candidates, a title matches when the query holds most of the title's terms and the
# title holds nearly all of the query's: "graph coarsening neural networks" is the title
# "Graph Coarsening with Neural Networks", while "graph neural networks" is a topic.
TITLE_POOL = 50
TITLE_COVERED = 0.6  # share of the title's terms the query must contain
QUERY_COVERED = 0.8  # share of the query's terms the title must contain
_FILTER = re.compile(r'\b(author|track|in|tag):(?:"([^"]*)"|(\S+))', re.IGNORECASE)
LISTED_MAX = 10  # values an unknown filter's reply lists: the most used ones, then "…"
_FIELD_NAMES = {
    "track": ("track", "tracks"),
    "in": ("collection", "collections"),
    "tag": ("tag", "tags"),
}


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
                raise QueryError(
                    f'{match.group(1)}: needs a value, e.g. {match.group(1)}:"some words"'
                )
            filters.setdefault(match.group(1).lower(), []).append(value)
        text = " ".join(_FILTER.sub(" ", raw).split())
        return cls(text=text, filters=filters)

    def is_empty(self) -> bool:
        return not self.text and not self.filters


@dataclass(frozen=True)
class Hit:
    paper_id: int
    score: float
    matched: tuple[str, ...]  # the query's stemmed terms this paper contains
    title_match: bool = False  # promoted because the query reads as its title


class SearchIndex:
    """The corpus at one revision: BM25 over the text plus postings for the filters."""

    def __init__(self, revision: int, tokenizer: Tokenizer, content: IndexContent):
        self.revision = revision
        self.tokenizer = tokenizer
        self.content = content
        self.bm25: Bm25Index = content.bm25
        self.paper_ids = content.paper_ids

    @classmethod
    def build(
        cls,
        revision: int,
        tokenizer: Tokenizer,
        papers: Iterable[IndexedPaper],
        params: Bm25Params = Bm25Params(),
    ) -> SearchIndex:
        return cls(revision, tokenizer, IndexContent.build(papers, tokenizer, params))

    def __len__(self) -> int:
        return len(self.paper_ids)

    def doc_of(self, paper_id: int) -> int | None:
        doc = int(np.searchsorted(self.paper_ids, paper_id))
        return doc if doc < len(self) and self.paper_ids[doc] == paper_id else None

    def title(self, paper_id: int) -> str:
        doc = self.doc_of(paper_id)
        if doc is None:
            raise KeyError(paper_id)
        return self.content.titles[doc]

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
        postings = self.content.filters[fld]
        if fld == "author":
            # Every word of the name must be among the paper's author words, so
            # author:lecun and author:"yann lecun" both find LeCun's papers.
            mask = np.ones(len(self), dtype=bool)
            for word in field_value_key(value).split("-"):
                word_mask = np.zeros(len(self), dtype=bool)
                word_mask[postings.docs_of(word)] = True
                mask &= word_mask
            return mask
        mask = np.zeros(len(self), dtype=bool)
        mask[postings.docs_of(field_value_key(value))] = True
        return mask

    def unknown_filter(self, query: Query) -> str | None:
        """What to say when a filter's value matches no paper: it names the value and,
        for tracks, collections and tags, lists the values there are."""
        for fld, values in query.filters.items():
            for value in values:
                if not self._field_mask(fld, value).any():
                    return self._no_such(fld, value)
        return None

    def _no_such(self, fld: str, value: str) -> str:
        if fld == "author":
            return f"No author matching `{value}`."
        one, many = _FIELD_NAMES[fld]
        listed = self.content.filters[fld].values()
        if not listed:
            return f"No {one} `{value}`; no paper has {many}."
        # The most used values when there are too many to list, shown alphabetically.
        shown = sorted(listed, key=lambda v: -v[1])[:LISTED_MAX]
        names = sorted((name for name, _papers in shown), key=str.casefold)
        more = ", …" if len(listed) > LISTED_MAX else ""
        return f"No {one} `{value}`; {many}: {', '.join(names)}{more}"

    def unknown_words(self, text: str) -> list[str]:
        """The words of `text` (folded as the tokenizer does) that no paper contains. A
        hyphenated word is judged by its parts, which are what its whole is made of."""
        unknown = (
            word
            for term, word in self.tokenizer.terms_with_words(text)
            if "-" not in word and self.bm25.vocabulary.find(term) is None
        )
        return list(dict.fromkeys(unknown))

    def spellcheck(self, query: Query) -> Spellcheck:
        """The query's unknown words and the closest indexed words to them."""
        unknown = self.unknown_words(query.text)
        spelling = self.content.spelling
        found = {word: spelling.closest(word) for word in unknown}
        corrections = {word: meant for word, meant in found.items() if meant is not None}
        return Spellcheck(tuple(unknown), corrections, _FILTER)

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
        wanted = np.fromiter(paper_ids, dtype=np.int64)
        docs = np.minimum(np.searchsorted(self.paper_ids, wanted), max(len(self) - 1, 0))
        if len(self):
            mask[docs[self.paper_ids[docs] == wanted]] = True
        return mask

    def _title_match(self, tokens: list[str], ranked: list[tuple[int, float]]) -> int | None:
        """The position in `ranked` of the paper whose title the query spells, if any."""
        query = plain_terms(tokens)
        if len(query) < 2 or not ranked:
            return None
        vocabulary = self.content.title_vocabulary
        ids = np.array(
            [i for i in (vocabulary.find(t) for t in query) if i is not None], dtype=np.int64
        )
        rows = self.content.title_terms
        docs = np.array([doc for doc, _score in ranked], dtype=np.int64)
        starts, title_sizes = rows.indptr[docs], rows.indptr[docs + 1] - rows.indptr[docs]
        found = np.isin(rows.cols[ranges(starts, title_sizes)], ids)
        shared = np.bincount(
            np.repeat(np.arange(len(docs)), title_sizes)[found], minlength=len(docs)
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            title_share = np.where(title_sizes > 0, shared / title_sizes, 0.0)
        query_share = shared / len(query)
        cover = np.where(
            (title_share >= TITLE_COVERED) & (query_share >= QUERY_COVERED),
            title_share * query_share,
            0.0,
        )
        best = int(np.argmax(cover))  # the first of equal covers: ties keep the better BM25 rank
        return best if cover[best] > 0 else None

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
        """The document's terms with the highest BM25 impact in it (ties: alphabetical,
        which is term id order)."""
        terms, impacts = self.bm25.doc_impacts(doc)
        order = np.lexsort((terms, -impacts))[:limit]
        return [self.bm25.vocabulary[int(t)] for t in terms[order]]

    def _hits(self, tokens: list[str], ranked: list[tuple[int, float]]) -> list[Hit]:
        unique = list(dict.fromkeys(tokens))
        known = [
            (t, i) for t, i in ((t, self.bm25.vocabulary.find(t)) for t in unique) if i is not None
        ]
        ids = np.array([i for _t, i in known], dtype=np.int64)
        docs = np.array([doc for doc, _score in ranked], dtype=np.int64)
        present = self.bm25.matched(docs, ids)
        return [
            Hit(
                int(self.paper_ids[doc]),
                score,
                tuple(t for (t, _i), found in zip(known, row) if found),
            )
            for (doc, score), row in zip(ranked, present)
        ]


class SearchService:
    """Hands out the index for the corpus's current revision.

    With an index directory (by default next to a SQLite database, see
    bot.search.files.default_index_dir) it loads the version another process wrote, or
    builds one, extending the previous version when there is one, and writes it for the
    others. The swap is a single reference assignment: a search holds the index it
    started with. While one thread updates, the others go on with the old index.
    """

    def __init__(
        self,
        loader,
        tokenizer: Tokenizer | None = None,
        params: Bm25Params = Bm25Params(),
        index_dir: Path | None | str = "auto",
    ):
        # loader: an object with revision() -> int and papers() -> Iterable[IndexedPaper]
        self.loader = loader
        self.tokenizer = tokenizer or Tokenizer()
        self.params = params
        if index_dir == "auto":
            db = getattr(loader, "db", None)
            index_dir = default_index_dir(db.url) if db is not None else None
        self.store = IndexStore(Path(index_dir)) if index_dir is not None else None
        self.fingerprint = fingerprint(self.tokenizer, params)
        self._index: SearchIndex | None = None
        self._lock = threading.Lock()

    def loaded(self) -> SearchIndex | None:
        """The index this process serves now, without loading or building one."""
        return self._index

    def current(self) -> SearchIndex:
        revision = self.loader.revision()
        index = self._index
        if index is not None and index.revision == revision:
            return index
        # Nobody waits behind an update while there is an index to serve.
        if not self._lock.acquire(blocking=index is None):
            assert index is not None
            return index
        try:
            if self._index is None or self._index.revision != revision:
                self._index = self._index_for(revision)
            return self._index
        finally:
            self._lock.release()

    def _index_for(self, revision: int) -> SearchIndex:
        if self.store is None:
            return self._build(revision, self._index)
        stored = self.store.current()
        if self._matches(stored, revision):
            return self._load(stored)
        with self.store.building():
            stored = self.store.current()  # another process may have built it meanwhile
            if self._matches(stored, revision):
                return self._load(stored)
            previous = self._index
            if (
                previous is None
                and stored is not None
                and stored.meta.get("fingerprint") == self.fingerprint
            ):
                previous = self._load(stored)
            revision = self.loader.revision()
            index = self._build(revision, previous)
            meta = {"revision": revision, "fingerprint": self.fingerprint, "papers": len(index),
                    "stamp": self._stamp()}
            # Serve from the mapped files: the page cache is shared between processes.
            return self._load(self.store.save(index.content.arrays(), meta))

    def _matches(self, stored: StoredVersion | None, revision: int) -> bool:
        return (
            stored is not None
            and stored.revision == revision
            and stored.meta.get("fingerprint") == self.fingerprint
            and stored.meta.get("stamp") == self._stamp()
        )

    def _stamp(self) -> str | None:
        """The corpus's identity at this revision, where the loader can tell it."""
        stamp = getattr(self.loader, "stamp", None)
        return stamp() if stamp is not None else None

    def _load(self, stored: StoredVersion) -> SearchIndex:
        content = IndexContent.from_arrays(stored.load(), self.params)
        return SearchIndex(stored.revision, self.tokenizer, content)

    def _build(self, revision: int, previous: SearchIndex | None) -> SearchIndex:
        started = time.perf_counter()
        content = IndexContent.build(
            self.loader.papers(),
            self.tokenizer,
            self.params,
            previous.content if previous else None,
        )
        log.info(
            "search index: %d papers at revision %d in %.1f s",
            content.doc_count,
            revision,
            time.perf_counter() - started,
        )
        return SearchIndex(revision, self.tokenizer, content)

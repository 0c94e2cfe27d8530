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
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rapidfuzz.distance import OSA

from bot.corpus.indexed import IndexedPaper
from bot.search import postings
from bot.search.bm25 import Bm25Index, Bm25Params, Matched
from bot.search.content import (
    FILTER_FIELDS,
    Batch,
    IndexContent,
    TokenisedAhead,
    field_value_key,
    plain_terms,
)
from bot.search.files import (
    IndexStore,
    StoredVersion,
    default_index_dir,
    fingerprint,
)
from bot.search.segments import Part, global_stats, joined, live_masks, merge_plan
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
    """The corpus at one revision: BM25 over the text plus postings for the filters, in
    one or more segments (bot.search.segments). Documents are numbered across the
    segments, oldest first; a document whose paper a later segment holds again is dead
    and never found, listed or scored."""

    def __init__(
        self,
        revision: int,
        tokenizer: Tokenizer,
        content: IndexContent | Sequence[tuple[str, IndexContent]],
        params: Bm25Params | None = None,
        version: str | None = None,
    ):
        self.revision = revision
        self.tokenizer = tokenizer
        self.version = version  # the stored version it was loaded from, if any
        named = [("", content)] if isinstance(content, IndexContent) else list(content)
        contents = [c for _name, c in named]
        params = params or (contents[0].bm25.params if contents else Bm25Params())
        lives = live_masks(contents)
        stats = global_stats(contents, lives, params) if len(contents) > 1 else None
        self.parts: list[Part] = []
        offset = 0
        for i, (name, part) in enumerate(named):
            if stats is not None:
                part = part.with_bm25(part.bm25.with_stats(stats[i]))
            self.parts.append(Part(name, part, lives[i], offset))
            offset += part.doc_count
        self.offsets = np.array([p.offset for p in self.parts] + [offset], dtype=np.int64)
        self.paper_ids = (
            np.concatenate([p.content.paper_ids for p in self.parts])
            if self.parts
            else np.zeros(0, dtype=np.int64)
        )
        self.live = np.concatenate(
            [np.ones(p.doc_count, bool) if p.live is None else p.live for p in self.parts]
            or [np.zeros(0, bool)]
        )

    @classmethod
    def build(
        cls,
        revision: int,
        tokenizer: Tokenizer,
        papers: Iterable[IndexedPaper],
        params: Bm25Params = Bm25Params(),
    ) -> SearchIndex:
        return cls(revision, tokenizer, IndexContent.build(papers, tokenizer, params))

    @property
    def content(self) -> IndexContent:
        """The one segment's content (an index of several has no single one)."""
        if len(self.parts) != 1:
            raise ValueError(f"an index of {len(self.parts)} segments")
        return self.parts[0].content

    @property
    def bm25(self) -> Bm25Index:
        return self.content.bm25

    def __len__(self) -> int:
        return len(self.paper_ids)

    def live_count(self) -> int:
        return sum(p.live_count for p in self.parts)

    # --- documents -----------------------------------------------------------------

    def _part_of(self, docs: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.offsets, docs, side="right") - 1

    def _by_part(self, docs: np.ndarray) -> Iterator[tuple[Part, np.ndarray, np.ndarray]]:
        """(part, positions in `docs`, local document numbers) for each part with some."""
        owners = self._part_of(docs)
        for number in np.unique(owners):
            where = np.flatnonzero(owners == number)
            part = self.parts[int(number)]
            yield part, where, docs[where] - part.offset

    def doc_of(self, paper_id: int) -> int | None:
        for part in reversed(self.parts):  # the newest copy is the live one
            ids = part.content.paper_ids
            doc = int(np.searchsorted(ids, paper_id))
            if doc < len(ids) and ids[doc] == paper_id:
                return part.offset + doc if part.live is None or part.live[doc] else None
        return None

    def title(self, paper_id: int) -> str:
        doc = self.doc_of(paper_id)
        if doc is None:
            raise KeyError(paper_id)
        part = self.parts[int(self._part_of(np.array([doc]))[0])]
        return part.content.titles[doc - part.offset]

    def mask_of(self, paper_ids: Iterable[int]) -> np.ndarray:
        """A boolean mask over documents that is True for the given papers' live copies."""
        mask = np.zeros(len(self), dtype=bool)
        wanted = np.fromiter(paper_ids, dtype=np.int64)
        for part in self.parts:
            ids = part.content.paper_ids
            if not len(ids):
                continue
            docs = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
            mask[part.offset + docs[ids[docs] == wanted]] = True
        return mask & self.live

    # --- filters -------------------------------------------------------------------

    def filter_mask(self, filters: dict[str, list[str]]) -> np.ndarray | None:
        """Live documents passing every filter (values of one field must all match)."""
        if not filters:
            return None
        mask = self.live.copy()
        for fld, values in filters.items():
            for value in values:
                mask &= self._field_mask(fld, value)
        return mask

    def _field_mask(self, fld: str, value: str) -> np.ndarray:
        if fld == "author":
            # Every word of the name must be among the paper's author words, so
            # author:lecun and author:"yann lecun" both find LeCun's papers.
            mask = self.live.copy()
            for word in field_value_key(value).split("-"):
                mask &= self._key_mask(fld, word)
            return mask
        return self._key_mask(fld, field_value_key(value)) & self.live

    def _key_mask(self, fld: str, key: str) -> np.ndarray:
        mask = np.zeros(len(self), dtype=bool)
        for part in self.parts:
            mask[part.offset + part.content.filters[fld].docs_of(key)] = True
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
        counted: Counter[str] = Counter()
        for part in self.parts:
            for name, papers in part.content.filters[fld].values():
                counted[name] += papers
        listed = list(counted.items())
        if not listed:
            return f"No {one} `{value}`; no paper has {many}."
        # The most used values when there are too many to list, shown alphabetically.
        shown = sorted(listed, key=lambda v: -v[1])[:LISTED_MAX]
        names = sorted((name for name, _papers in shown), key=str.casefold)
        more = ", …" if len(listed) > LISTED_MAX else ""
        return f"No {one} `{value}`; {many}: {', '.join(names)}{more}"

    # --- words ---------------------------------------------------------------------

    def _knows(self, term: str) -> bool:
        return any(p.content.bm25.vocabulary.find(term) is not None for p in self.parts)

    def unknown_words(self, text: str) -> list[str]:
        """The words of `text` (folded as the tokenizer does) that no paper contains. A
        hyphenated word is judged by its parts, which are what its whole is made of."""
        unknown = (
            word
            for term, word in self.tokenizer.terms_with_words(text)
            if "-" not in word and not self._knows(term)
        )
        return list(dict.fromkeys(unknown))

    def spellcheck(self, query: Query) -> Spellcheck:
        """The query's unknown words and the closest indexed words to them."""
        unknown = self.unknown_words(query.text)
        found = {word: self._closest(word) for word in unknown}
        corrections = {word: meant for word, meant in found.items() if meant is not None}
        return Spellcheck(tuple(unknown), corrections, _FILTER)

    def _closest(self, word: str) -> str | None:
        """The closest word any segment suggests; the oldest (largest) wins ties."""
        found = [p.content.spelling.closest(word) for p in self.parts]
        candidates = [w for w in found if w is not None]
        return min(candidates, key=lambda w: OSA.distance(word, w), default=None)

    # --- ranking -------------------------------------------------------------------

    def search(self, query: Query, k: int = 10) -> list[Hit]:
        tokens = self.tokenizer.tokens(query.text)
        allowed = self.filter_mask(query.filters)
        if not tokens:
            if allowed is None:
                return []
            # Filters alone: list what passes, in corpus order.
            docs = np.flatnonzero(allowed)
            docs = docs[np.argsort(self.paper_ids[docs], kind="stable")][:k]
            return [Hit(int(self.paper_ids[d]), 0.0, ()) for d in docs]
        ranked = self._top(tokens, max(k, TITLE_POOL), allowed)
        titled = self._title_match(tokens, ranked)
        if titled is not None:
            ranked.insert(0, ranked.pop(titled))
        hits = self._hits(ranked[:k])
        if titled is not None and hits:
            hits[0] = Hit(hits[0].paper_id, hits[0].score, hits[0].matched, title_match=True)
        return hits

    def rank(self, tokens: list[str], k: int, allowed: np.ndarray | None = None) -> list[Hit]:
        """Plain BM25 ranking of already-tokenised terms among `allowed` documents (picks
        use it: a channel's topics are terms, not a typed title)."""
        return self._hits(self._top(tokens, k, allowed))

    def _top(
        self, tokens: list[str], k: int, allowed: np.ndarray | None
    ) -> list[tuple[int, float, Matched]]:
        """The k best live (document, score, matched terms) of all segments; ties go to
        the lower paper id, as in one index of the papers in id order."""
        ranked: list[tuple[int, float, Matched]] = []
        for part in self.parts:
            end = part.offset + part.doc_count
            mask = part.live
            if allowed is not None:
                window = allowed[part.offset : end]
                mask = window if mask is None else window & mask
            best = part.content.bm25.top_matched(tokens, k, mask)
            ranked.extend((part.offset + doc, score, found) for doc, score, found in best)
        if len(self.parts) > 1:
            ranked.sort(key=lambda hit: (-hit[1], int(self.paper_ids[hit[0]])))
        return ranked[:k]

    def _title_match(self, tokens: list[str], ranked: list[tuple[int, float, tuple]]) -> int | None:
        """The position in `ranked` of the paper whose title the query spells, if any."""
        query = plain_terms(tokens)
        if len(query) < 2 or not ranked:
            return None
        docs = np.array([doc for doc, _score, _found in ranked], dtype=np.int64)
        shared = np.zeros(len(docs), dtype=np.int64)
        title_sizes = np.zeros(len(docs), dtype=np.int64)
        for part, where, local in self._by_part(docs):
            vocabulary = part.content.title_vocabulary
            ids = np.sort(
                np.array(
                    [i for i in (vocabulary.find(t) for t in query) if i is not None],
                    dtype=np.int64,
                )
            )
            rows = part.content.title_terms
            shared[where], title_sizes[where] = postings.shared_counts(
                postings.frozen(rows.indptr),
                postings.frozen(rows.cols),
                local,
                ids.astype(rows.cols.dtype),
            )
        # The first of equal covers: ties keep the better BM25 rank.
        best = postings.best_cover(shared, title_sizes, len(query), TITLE_COVERED, QUERY_COVERED)
        return best if best >= 0 else None

    def similar(self, paper_id: int, k: int = 5, max_terms: int = 30) -> list[Hit]:
        """Papers like this one: its most distinctive terms as a BM25 query."""
        doc = self.doc_of(paper_id)
        if doc is None:
            return []
        terms = self.distinctive_terms(doc, max_terms)
        allowed = np.ones(len(self), dtype=bool)
        allowed[doc] = False
        return self._hits(self._top(terms, k, allowed))

    def distinctive_terms(self, doc: int, limit: int) -> list[str]:
        """The document's terms with the highest BM25 impact in it (ties: alphabetical,
        which is term id order)."""
        part = self.parts[int(self._part_of(np.array([doc]))[0])]
        bm25 = part.content.bm25
        terms, impacts = bm25.doc_impacts(doc - part.offset)
        order = np.lexsort((terms, -impacts))[:limit]
        return [bm25.vocabulary[int(t)] for t in terms[order]]

    def _hits(self, ranked: list[tuple[int, float, Matched]]) -> list[Hit]:
        return [
            Hit(int(self.paper_ids[doc]), score, found.terms()) for doc, score, found in ranked
        ]


class SearchService:
    """Hands out the index for the corpus's current revision.

    With an index directory (by default next to a SQLite database, see
    bot.search.files.default_index_dir) it loads the version another process wrote, or
    makes one and writes it for the others. When the loader can tell which papers
    changed since a revision (`papers_changed`, and `identity` to tell its database from
    a recreated one), a new revision adds a segment of those papers to the previous
    version; otherwise the index is rebuilt, reusing the rows of unchanged papers.
    Segments are merged in a background thread (bot.search.segments.merge_plan).

    The swap is a single reference assignment: a search holds the index it started
    with. While one thread updates, the others go on with the old index.
    """

    def __init__(
        self,
        loader,
        tokenizer: Tokenizer | None = None,
        params: Bm25Params = Bm25Params(),
        index_dir: Path | None | str = "auto",
        merge_in_background: bool = True,
    ):
        # loader: an object with revision() -> int and papers() -> Iterable[IndexedPaper];
        # optionally papers_changed(since: int), identity() -> str and stamp() -> str.
        self.loader = loader
        self.tokenizer = tokenizer or Tokenizer()
        self.params = params
        if index_dir == "auto":
            db = getattr(loader, "db", None)
            index_dir = default_index_dir(db.url) if db is not None else None
        self.store = IndexStore(Path(index_dir)) if index_dir is not None else None
        self.fingerprint = fingerprint(self.tokenizer, params)
        self.merge_in_background = merge_in_background
        self._index: SearchIndex | None = None
        postings.warm()  # the compiled loops, before a member's first search needs them
        self._lock = threading.Lock()
        self._merger: threading.Thread | None = None
        self._ahead: TokenisedAhead | None = None

    @contextmanager
    def ahead(self) -> Iterator[Callable[[Sequence[IndexedPaper]], None]]:
        """For an import followed by an index update (`paperclub import`): the papers
        handed to the function yielded are tokenised meanwhile, and the next build
        within the block takes them from there (TokenisedAhead)."""
        ahead = TokenisedAhead(type(self.tokenizer))
        self._ahead = ahead
        try:
            yield ahead.add
        finally:
            self._ahead = None
            ahead.close()

    def _tokenised_ahead(self) -> Batch | None:
        """What was tokenised ahead, once: a later build reads the papers again."""
        ahead, self._ahead = self._ahead, None
        return ahead.result() if ahead is not None else None

    def loaded(self) -> SearchIndex | None:
        """The index this process serves now, without loading or building one."""
        return self._index

    def current(self) -> SearchIndex:
        revision = self.loader.revision()
        index = self._index
        if index is not None and index.revision == revision and not self._replaced(index):
            return index
        # Nobody waits behind an update while there is an index to serve.
        if not self._lock.acquire(blocking=index is None):
            assert index is not None
            return index
        try:
            index = self._index
            if index is None or index.revision != revision or self._replaced(index):
                self._index = index = self._index_for(revision)
        finally:
            self._lock.release()
        self._merge_soon()
        return index

    def wait_for_merges(self) -> None:
        """Until the background merge, if one runs, is over (tests, and shutting down)."""
        merger = self._merger
        if merger is not None:
            merger.join()

    def _replaced(self, index: SearchIndex) -> bool:
        """Another process (or a merge) named a new version of the same revision."""
        return (
            self.store is not None
            and index.version is not None
            and self.store.current_name() != index.version
        )

    # --- versions ----------------------------------------------------------------

    def _index_for(self, revision: int) -> SearchIndex:
        if self.store is None:
            return self._in_memory(revision)
        stored = self.store.current()
        if self._matches(stored, revision):
            return self._open(stored)
        with self.store.building():
            stored = self.store.current()  # another process may have made it meanwhile
            if self._matches(stored, revision):
                return self._open(stored)
            revision = self.loader.revision()
            if self._extendable(stored, revision):
                base = self._open(stored)
                named = self._with_changes(base)
                segments = [
                    name if name else self.store.write_segment(content.arrays())
                    for name, content in named
                ]
            else:
                previous = self._index if self._index and len(self._index.parts) == 1 else None
                if previous is None and stored is not None and self._same_format(stored):
                    opened = self._open(stored)
                    previous = opened if len(opened.parts) == 1 else None
                content = self._build(revision, previous).content
                named = [("", content)]
                segments = [self.store.write_segment(content.arrays())]
            version = self.store.save_version(segments, self._meta(revision, named))
            contents = [(name, content) for name, (_n, content) in zip(version.segments, named)]
            # The new segment is served from memory, the others from the mapped files.
            return SearchIndex(revision, self.tokenizer, contents, self.params, version.name)

    def _in_memory(self, revision: int) -> SearchIndex:
        previous = self._index
        if previous is not None and self._changes_known() and previous.revision <= revision:
            index = SearchIndex(revision, self.tokenizer, self._with_changes(previous), self.params)
            start = merge_plan([p.live_count for p in index.parts])
            return index if start is None else self._merged(index, start)
        single = previous if previous is not None and len(previous.parts) == 1 else None
        return self._build(revision, single)

    def _with_changes(self, base: SearchIndex) -> list[tuple[str, IndexContent]]:
        """The base's segments and, when papers changed since its revision, a new one of
        them (named "" until it is stored), its impacts from the new global statistics."""
        started = time.perf_counter()
        named = [(p.name, p.content) for p in base.parts]
        content = IndexContent.build(
            self.loader.papers_changed(base.revision),
            self.tokenizer,
            self.params,
            ahead=self._tokenised_ahead(),
        )
        if content.doc_count:
            named.append(("", joined([c for _name, c in named], content, self.params)))
        log.info(
            "search index: a segment of %d changed papers after revision %d in %.2f s",
            content.doc_count,
            base.revision,
            time.perf_counter() - started,
        )
        return named

    def _changes_known(self) -> bool:
        return hasattr(self.loader, "papers_changed")

    def _extendable(self, stored: StoredVersion | None, revision: int) -> bool:
        """A stored version this database's changes can be added to."""
        identity = getattr(self.loader, "identity", None)
        return (
            stored is not None
            and self._changes_known()
            and identity is not None
            and self._same_format(stored)
            and stored.meta.get("identity") == identity()
            and stored.revision <= revision
        )

    def _same_format(self, stored: StoredVersion) -> bool:
        return stored.meta.get("fingerprint") == self.fingerprint

    def _matches(self, stored: StoredVersion | None, revision: int) -> bool:
        return (
            stored is not None
            and stored.revision == revision
            and self._same_format(stored)
            and stored.meta.get("stamp") == self._stamp()
        )

    def _meta(self, revision: int, named: list[tuple[str, IndexContent]]) -> dict:
        identity = getattr(self.loader, "identity", None)
        return {
            "revision": revision,
            "fingerprint": self.fingerprint,
            "stamp": self._stamp(),
            "identity": identity() if identity is not None else None,
            "papers": sum(c.doc_count for _name, c in named),
        }

    def _stamp(self) -> str | None:
        """The corpus's identity at this revision, where the loader can tell it."""
        stamp = getattr(self.loader, "stamp", None)
        return stamp() if stamp is not None else None

    def _open(self, stored: StoredVersion) -> SearchIndex:
        """The stored version, reusing the segments this process has open already."""
        have = {p.name: p.content for p in self._index.parts} if self._index else {}
        named = []
        for name in stored.segments:
            content = have.get(name)
            if content is None:
                content = IndexContent.from_arrays(stored.segment_arrays(name), self.params)
            named.append((name, content))
        return SearchIndex(stored.revision, self.tokenizer, named, self.params, stored.name)

    def _build(self, revision: int, previous: SearchIndex | None) -> SearchIndex:
        started = time.perf_counter()
        content = IndexContent.build(
            self.loader.papers(),
            self.tokenizer,
            self.params,
            previous.content if previous else None,
            ahead=self._tokenised_ahead(),
        )
        log.info(
            "search index: %d papers at revision %d in %.1f s",
            content.doc_count,
            revision,
            time.perf_counter() - started,
        )
        return SearchIndex(revision, self.tokenizer, content)

    # --- merges ------------------------------------------------------------------

    def _merged(self, index: SearchIndex, start: int) -> SearchIndex:
        """The index with its segments from `start` on merged into one."""
        named = [(p.name, p.content) for p in index.parts[:start]]
        merged = self._merge_parts(index, start)
        if merged is not None:
            named.append(("", merged))
        return SearchIndex(index.revision, self.tokenizer, named, self.params)

    def _merge_parts(self, index: SearchIndex, start: int) -> IndexContent | None:
        """The live documents of the segments from `start` on, as one segment with its
        impacts from the global statistics; None when none is live."""
        run = index.parts[start:]
        merged = IndexContent.merge([(p.content, p.live) for p in run], self.tokenizer, self.params)
        if not merged.doc_count:
            return None
        return joined([p.content for p in index.parts[:start]], merged, self.params)

    def _merge_soon(self) -> None:
        index = self._index
        if self.store is None or index is None or index.version is None:
            return
        if merge_plan([p.live_count for p in index.parts]) is None:
            return
        if self._merger is not None and self._merger.is_alive():
            return
        if not self.merge_in_background:
            self._merge_stored()
            return
        self._merger = threading.Thread(target=self._merge_quietly, name="index-merge", daemon=True)
        self._merger.start()

    def _merge_quietly(self) -> None:
        try:
            self._merge_stored()
        except Exception as problem:  # noqa: BLE001 - a failed merge leaves the segments as they are
            log.warning("search index: merging segments failed: %s", problem)

    def _merge_stored(self) -> None:
        """Merge the stored version's newest segments (merge_plan) into one, outside the
        build lock; then, under it, put the merged segment in their place in whatever
        version is current by then (segments added meanwhile stay after it)."""
        assert self.store is not None
        with self.store.merging() as held:
            stored = self.store.current()
            if not held or stored is None or not self._same_format(stored):
                return
            index = self._open(stored)
            start = merge_plan([p.live_count for p in index.parts])
            if start is None:
                return
            started = time.perf_counter()
            merged = self._merge_parts(index, start)
            run = [p.name for p in index.parts[start:]]
            temp = self.store.write_segment(merged.arrays()) if merged is not None else None
            with self.store.building():
                now = self.store.current()
                names = now.segments if now is not None else []
                at = _sublist(names, run)
                if at is None or not self._same_format(now):
                    if temp is not None:
                        shutil.rmtree(temp, ignore_errors=True)
                    return
                kept = {k: v for k, v in now.meta.items() if k not in ("segments", "written_at")}
                segments: list[str | Path] = [*names[:at], *([temp] if temp else []), *names[at + len(run):]]
                self.store.save_version(segments, kept)
            log.info(
                "search index: merged %d segments (%d papers) in %.1f s",
                len(run),
                merged.doc_count if merged is not None else 0,
                time.perf_counter() - started,
            )


def _sublist(names: list[str], run: list[str]) -> int | None:
    """Where `run` sits in `names`, contiguous and in order, or None."""
    for at in range(len(names) - len(run) + 1):
        if names[at : at + len(run)] == run:
            return at
    return None

"""The built-in engine and searcher (bot.search.engine): the corpus at one revision.

`SearchIndex` is immutable: a new corpus revision gives a new one (bot.search.builtin.service
swaps them), so a search in flight always sees one whole, consistent index. It is BM25
over one or more segments (bot.search.builtin.segments) of flat arrays (bot.search.builtin.content),
with postings for the filters, title matching and did-you-mean; documents are numbered
across the segments, a numbering that never leaves this module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from bot.corpus.indexed import IndexedPaper
from bot.search.builtin.batch import plain_terms
from bot.search.builtin.bm25 import Bm25Index, Matched, Stats
from bot.search.builtin.content import IndexContent
from bot.search.builtin.segments import Part, global_stats, live_masks
from bot.search.engine import Hit, drawn
from bot.search.fields import LISTED_FIELDS, field_value_key, unknown_value
from bot.search.params import Bm25Params
from bot.search.query import FILTER_PATTERN, Query, years_of
from bot.search.suggest import Spellcheck
from bot.search.tokens import Tokenizer


class SearchIndex:
    """The corpus at one revision: BM25 over the text plus postings for the filters, in
    one or more segments (bot.search.builtin.segments). Documents are numbered across the
    segments, oldest first; a document whose paper a later segment holds again is dead
    and never found, listed or scored."""

    def __init__(
        self,
        revision: int,
        tokenizer: Tokenizer,
        content: IndexContent | Sequence[tuple[str, IndexContent]],
        params: Bm25Params | None = None,
        version: str | None = None,
        stats: Sequence[Stats] | None = None,
    ):
        """`stats`: the segments' global statistics where the caller has them already
        (bot.search.builtin.segments.joined); computed here otherwise."""
        self.revision = revision
        self.tokenizer = tokenizer
        self.version = version  # the stored version it was loaded from, if any
        named = [("", content)] if isinstance(content, IndexContent) else list(content)
        contents = [c for _name, c in named]
        params = params or (contents[0].bm25.params if contents else Bm25Params())
        lives = live_masks(contents)
        if len(contents) < 2:
            stats = None  # one segment is scored with its own
        elif stats is None:
            stats = global_stats(contents, lives, params)
        self.parts: list[Part] = []
        offset = 0
        for i, (name, part) in enumerate(named):
            if stats is not None:
                part = part.with_bm25(part.bm25.with_stats(stats[i]))
            self.parts.append(Part(name, part, lives[i], offset))
            offset += part.doc_count
        self.offsets = np.array([p.offset for p in self.parts] + [offset], dtype=np.int64)
        self.paper_ids: np.ndarray = (
            np.concatenate([p.content.paper_ids for p in self.parts])
            if self.parts
            else np.zeros(0, dtype=np.int64)
        )
        self.live: npt.NDArray[np.bool_] = np.concatenate(
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

    def doc_of(self, paper_id: int) -> int | None:
        for part in reversed(self.parts):  # the newest copy is the live one
            ids = part.content.paper_ids
            doc = int(np.searchsorted(ids, paper_id))
            if doc < len(ids) and ids[doc] == paper_id:
                return part.offset + doc if part.live is None or part.live[doc] else None
        return None

    def title(self, paper_id: int) -> str | None:
        doc = self.doc_of(paper_id)
        if doc is None:
            return None
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

    def filtered_count(self, query: Query) -> int:
        allowed = self.filter_mask(query.filters)
        return self.live_count() if allowed is None else int(np.count_nonzero(allowed))

    def _field_mask(self, fld: str, value: str) -> np.ndarray:
        if fld == "year":  # one year, or any of a range's
            mask = np.zeros(len(self), dtype=bool)
            for year in years_of(value):
                mask |= self._key_mask(fld, str(year))
            return mask & self.live
        if fld == "author":
            # Every word of the name must be among the paper's author words, so
            # author:lecun and author:"yann lecun" both find LeCun's papers.
            mask = self.live.copy()
            for word in field_value_key(value).split("-"):
                mask &= self._key_mask(fld, word)
            return mask
        return self._key_mask(fld, field_value_key(value)) & self.live

    def _key_mask(self, fld: str, key: str) -> npt.NDArray[np.bool_]:
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
        counted: Counter[str] = Counter()
        for part in self.parts if fld in LISTED_FIELDS else ():
            for name, papers in part.content.filters[fld].values():
                counted[name] += papers
        return unknown_value(fld, value, counted)

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
        return Spellcheck(tuple(unknown), corrections, FILTER_PATTERN)

    def _closest(self, word: str) -> str | None:
        """The closest word any segment suggests; the oldest (largest) wins ties."""
        found = [p.content.spelling.closest(word) for p in self.parts]
        candidates = [w for w in found if w is not None]
        from rapidfuzz.distance import OSA  # here: only a query that matches nothing needs it

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
        ranked = self._top(tokens, k, allowed)
        titled = self._titled(tokens, ranked, allowed)
        if titled is not None:
            ranked = [titled, *(hit for hit in ranked if hit[0] != titled[0])]
        hits = self._hits(ranked[:k])
        if titled is not None and hits:
            hits[0] = Hit(hits[0].paper_id, hits[0].score, hits[0].matched, title_match=True)
        return hits

    def rank(
        self,
        terms: Sequence[str],
        k: int,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[Hit]:
        """Plain BM25 ranking of already-tokenised terms (picks use it: a channel's
        topics are terms, not a typed title), in any of `collections`, none of `excluded`."""
        return self._hits(self._top(list(terms), k, self._allowed(collections, excluded)))

    def scores(self, terms: Sequence[str], paper_ids: Collection[int]) -> dict[int, float]:
        ids = list(paper_ids)
        ranked = self._top(list(terms), len(ids), self.mask_of(ids))
        return {hit.paper_id: hit.score for hit in self._hits(ranked)}

    def sample(
        self,
        count: int,
        seed: str,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[int]:
        """`drawn` from the live papers in `collections` in document order (oldest
        segment first), so that a replay over the same index tours the same."""
        allowed = self._allowed(collections, ())
        docs = np.flatnonzero(self.live if allowed is None else allowed)
        return drawn(self.paper_ids[docs], count, seed, excluded)

    def _allowed(self, collections: Sequence[str], excluded: Collection[int]) -> np.ndarray | None:
        """Live documents in any of `collections` (all without), not of `excluded`;
        None when that is every live document."""
        if not collections and not excluded:
            return None
        mask = np.zeros(len(self), dtype=bool) if collections else self.live.copy()
        for name in collections:
            mask |= self._field_mask("in", name)
        if excluded:
            mask &= ~self.mask_of(excluded)
        return mask

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

    def _titled(
        self,
        tokens: list[str],
        ranked: list[tuple[int, float, Matched]],
        allowed: np.ndarray | None,
    ) -> tuple[int, float, Matched] | None:
        """The paper whose title the query spells, if any, as `_top` ranks it: a search
        puts it first. The query's terms are the title's (stemmed, stop words and case and
        hyphens aside), every one of the title's and nothing more: partial covers promoted
        "Graph Coarsening with Neural Networks" for `graph neural networks`, a topic. Of
        several such papers, the best by BM25 that the filters leave. Found by its title's
        terms (IndexContent.titled), wherever BM25 ranks it: asking BM25 for fifty hits to
        look for it among them cost a third of every search at a million papers."""
        query = plain_terms(tokens)
        if len(query) < 2 or not ranked:
            return None
        found = []
        for part in self.parts:
            docs = part.content.titled(query)
            if part.live is not None:
                docs = docs[part.live[docs]]
            found.append(docs + part.offset)
        docs = np.concatenate(found)
        if allowed is not None:
            docs = docs[allowed[docs]]
        if not len(docs):
            return None
        among = set(docs.tolist())
        best = next((hit for hit in ranked if hit[0] in among), None)
        if best is not None:
            return best
        mask = np.zeros(len(self), dtype=bool)
        mask[docs] = True
        below = self._top(tokens, 1, mask)  # below the k best: the best of its titles
        return below[0] if below else None

    def similar(self, paper_id: int, k: int = 5, max_terms: int = 30) -> list[Hit]:
        """Papers like this one: its most distinctive terms as a BM25 query."""
        doc = self.doc_of(paper_id)
        if doc is None:
            return []
        terms = self._distinctive_terms(doc, max_terms)
        allowed = np.ones(len(self), dtype=bool)
        allowed[doc] = False
        return self._hits(self._top(terms, k, allowed))

    def distinctive_terms(self, paper_id: int, limit: int) -> list[str]:
        doc = self.doc_of(paper_id)
        return self._distinctive_terms(doc, limit) if doc is not None else []

    def _distinctive_terms(self, doc: int, limit: int) -> list[str]:
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

"""Papers tokenised: what a build is made of, and what a worker process hands back.

A `Batch` holds, for some papers, their ids, content hashes and titles, the counts of
their terms (text and title) and of their filter keys (author words, tracks,
collections, tags), and the words and values as written that did-you-mean and the
listings show. Batches merge in order into one; `bot.search.builtin.content` assembles the
searchable arrays from the result, and `bot.search.builtin.tokenising` makes batches on worker
processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

import numpy as np

from bot.corpus.indexed import IndexedPaper
from bot.search.builtin.arrays import StringTable
from bot.search.builtin.bm25 import TermCounts
from bot.search.builtin.spelling import WordCounts
from bot.search.fields import FILTER_FIELDS, LISTED_FIELDS, display_names, filter_keys
from bot.search.tokens import Tokenizer


def merge_names(parts: Iterable[dict[str, dict[str, str]]]) -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {f: {} for f in LISTED_FIELDS}
    for part in parts:
        for fld, names in part.items():
            for key, value in names.items():
                merged[fld].setdefault(key, value)
    return merged


def content_hash(paper: IndexedPaper) -> int:
    """A 63-bit hash of everything the index reads of a paper (its id aside)."""
    fields = [
        paper.title,
        paper.text,
        *paper.authors,
        "",
        paper.track or "",
        paper.award or "",
        *paper.collections,
        "",
        *paper.tags,
        "",
        str(paper.year or ""),
    ]
    digest = hashlib.blake2b(
        "\x1f".join(fields).encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    return int.from_bytes(digest, "little") >> 1


@dataclass
class Batch:
    """Some papers, tokenised: the unit a worker hands back, and what batches merge into."""

    paper_ids: np.ndarray  # int64
    hashes: np.ndarray  # int64
    titles: StringTable
    terms: TermCounts
    title_terms: TermCounts  # the title's terms without hyphenated wholes (title matching)
    filters: dict[str, TermCounts]  # field -> document -> keys
    # Not per document, so `take` keeps them whole: after an incremental build the counts
    # include papers since changed or gone. They only order suggestions and listings, and
    # a word or value whose stem or key left the index is dropped when it is assembled.
    words: WordCounts  # the plain words of the text as written (did-you-mean)
    names: dict[str, dict[str, str]]  # listed field -> key -> value as written

    @classmethod
    def of(cls, papers: Sequence[IndexedPaper], tokenizer: Tokenizer) -> Batch:
        keys = [filter_keys(p) for p in papers]
        tokens = [_text_and_title_tokens(p, tokenizer) for p in papers]
        return cls(
            np.array([p.paper_id for p in papers], dtype=np.int64),
            np.array([content_hash(p) for p in papers], dtype=np.int64),
            StringTable.from_strings(p.title for p in papers),
            TermCounts.count([t for t, _w in text] for text, _title in tokens),
            TermCounts.count(sorted(plain_terms(title)) for _text, title in tokens),
            {f: TermCounts.count(sorted(k[f]) for k in keys) for f in FILTER_FIELDS},
            WordCounts.count(map(itemgetter(1), chain.from_iterable(t for t, _ in tokens))),
            display_names(papers),
        )

    @classmethod
    def merge(cls, batches: list[Batch]) -> Batch:
        """The batches' papers one after another; consumes the list as it copies."""
        if len(batches) == 1:  # already in the form a merge gives: nothing to copy
            return batches.pop()
        paper_ids = np.concatenate([b.paper_ids for b in batches])
        hashes = np.concatenate([b.hashes for b in batches])
        titles = StringTable.concat([b.titles for b in batches])
        terms, title_terms = [b.terms for b in batches], [b.title_terms for b in batches]
        filters = {f: [b.filters[f] for b in batches] for f in FILTER_FIELDS}
        words, names = [b.words for b in batches], [b.names for b in batches]
        batches.clear()
        return cls(
            paper_ids,
            hashes,
            titles,
            TermCounts.merge(terms),
            TermCounts.merge(title_terms),
            {f: TermCounts.merge(parts) for f, parts in filters.items()},
            WordCounts.merge(words),
            merge_names(names),
        )

    def take(self, docs: np.ndarray) -> Batch:
        """These papers only, in this order."""
        return Batch(
            self.paper_ids[docs],
            self.hashes[docs],
            self.titles.take(docs),
            self.terms.take(docs),
            self.title_terms.take(docs),
            {f: c.take(docs) for f, c in self.filters.items()},
            self.words,
            self.names,
        )


def _text_and_title_tokens(
    paper: IndexedPaper, tokenizer: Tokenizer
) -> tuple[list[tuple[str, str]], list[str]]:
    """The (term, word as written) pairs of the text, and the title's terms. A searchable
    text starts with its title line, and no token spans a line break, so the title is
    tokenised once, not twice."""
    title = tokenizer.terms_with_words(paper.title)
    title_terms = [t for t, _w in title]
    if paper.text.startswith(paper.title + "\n"):
        return title + tokenizer.terms_with_words(paper.text[len(paper.title) + 1 :]), title_terms
    return tokenizer.terms_with_words(paper.text), title_terms


def plain_terms(tokens: Iterable[str]) -> set[str]:
    """Terms without the whole hyphenated words, whose parts are already there."""
    return {t for t in tokens if "-" not in t}

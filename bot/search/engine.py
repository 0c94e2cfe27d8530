"""The search as the rest of the bot sees it: a narrow interface an engine offers.

Outside bot/search, code holds a `SearchBackend`, which hands out the index of the
corpus's current revision; asks that index, an `Engine`, for rankings of terms (within
some collections, leaving some papers out), a paper's distinctive terms, the scores of a
set of papers, a paper's title and a sample of papers to tour; and asks it as a
`Searcher` (an engine that also reads members' queries) for searches, did-you-mean and
filter refusals. Only paper ids, terms and scores cross the interface: no document
numbers, masks or arrays, so another engine (rank-bm25 over a small corpus, a hosted
one) can stand in. `bot.search.builtin.service.SearchService` is the built-in backend, and
`bot.search.builtin.index.SearchIndex` its engine and searcher.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, SupportsInt, runtime_checkable

from bot.search.query import Query
from bot.search.suggest import Spellcheck

if TYPE_CHECKING:  # what the annotations name: the protocols need neither at run time
    from bot.corpus.drafts import Written
    from bot.search.tokens import Tokenizer


@dataclass(frozen=True)
class Hit:
    paper_id: int
    score: float
    matched: tuple[str, ...]  # the query's stemmed terms this paper contains
    title_match: bool = False  # promoted because the query reads as its title
    by_meaning: bool = False  # ranked by meaning as well as words (bot.search.hybrid)


@dataclass(frozen=True)
class StoredIndex:
    """An index as the engine stored it for processes to load, as it says of itself."""

    papers: int  # the papers it finds
    current: bool  # of the corpus as it is now; else the next search or import updates it


@runtime_checkable
class Engine(Protocol):
    """BM25 (rank-bm25's BM25Okapi scores) over the live papers of one corpus revision.

    Terms are the tokenizer's (bot.search.tokens); a collection is matched as the `in:`
    filter matches it (case, accents and punctuation ignored). Rankings are by score,
    ties to the lower paper id, and list only papers that contain a term."""

    revision: int

    def live_count(self) -> int:
        """How many papers can be found."""
        ...

    def title(self, paper_id: int) -> str | None:
        """The paper's title, or None when the engine has no such live paper."""
        ...

    def rank(
        self,
        terms: Sequence[str],
        k: int,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[Hit]:
        """The k best papers for `terms` (repeats weigh), in any of `collections` when
        some are given, none of `excluded`."""
        ...

    def distinctive_terms(self, paper_id: int, limit: int) -> list[str]:
        """The paper's terms with the highest BM25 impact in it (ties alphabetical);
        empty when the engine has no such live paper."""
        ...

    def scores(self, terms: Sequence[str], paper_ids: Collection[int]) -> dict[int, float]:
        """The BM25 score for `terms` of each of these papers that contains one."""
        ...

    def similar(self, paper_id: int, k: int = 5) -> list[Hit]:
        """Papers like this one: its distinctive terms as a query, itself left out."""
        ...

    def sample(
        self,
        count: int,
        seed: str,
        collections: Sequence[str] = (),
        excluded: Collection[int] = (),
    ) -> list[int]:
        """Up to `count` live papers in `collections` (all when none), none of
        `excluded`, drawn by `drawn` from the engine's papers in its own order: the
        same seed over the same papers in the same order gives the same sample."""
        ...


@runtime_checkable
class Searcher(Engine, Protocol):
    """An engine that also answers members' queries (search, the CLI)."""

    def search(self, query: Query, k: int = 10) -> list[Hit]:
        """The k best papers for a typed query; filters alone list papers in id order."""
        ...

    def filtered_count(self, query: Query) -> int:
        """How many live papers pass the query's filters (all of them without filters)."""
        ...

    def spellcheck(self, query: Query) -> Spellcheck:
        """The query's words no paper has, and what they may have meant."""
        ...

    def unknown_filter(self, query: Query) -> str | None:
        """The reply when a filter's value matches no paper, else None."""
        ...


@runtime_checkable
class SearchBackend(Protocol):
    """An engine as a process holds it: the bot's features, its health check and the
    command line ask it for the index of the corpus as it is now, and nothing more.
    It reads the corpus itself (bot.corpus.library.Library), so a new revision reaches
    every caller through `current` without anyone telling it."""

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer the index's terms come from: picks, cards and follows tokenise
        a channel's topics or a card's matched words with it, so they meet those terms."""
        ...

    def current(self) -> Searcher:
        """The index at the corpus's current revision, built or extended first when the
        corpus moved on since the last one. A caller keeps what it got for the whole of
        one reply: a later revision is a new index, never a change to this one."""
        ...

    def loaded(self) -> Searcher | None:
        """The index this process serves now, or None, without loading or building one:
        what /healthz reports, which must answer at once."""
        ...

    def warm(self) -> Searcher:
        """`current`, and whatever else a first search would pay for, made ready now:
        for a process that serves members, so that no reply waits on a load."""
        ...

    def ahead(self) -> AbstractContextManager[Written]:
        """A block around an import followed by `current` (`paperclub import`): what it
        yields is told the papers the import writes as it writes them, so the engine can
        prepare them meanwhile instead of reading them back afterwards."""
        ...

    def wait_for_merges(self) -> None:
        """Returns once the work the engine does on its own after `current` (merging
        segments) is over: a one-off command would otherwise exit in the middle of it."""
        ...

    def location(self) -> str | None:
        """Where the index lives, in words an operator can look up (a directory, an
        address); None when it is held in this process's memory only."""
        ...

    def stored_index(self) -> StoredIndex | None:
        """The index stored for processes to load, without loading or building it (what
        `paperclub status` reports); None when none is: never built, built by code that
        reads differently, or held in this process's memory only."""
        ...


class PaperIds(Protocol):
    """Paper ids in an engine's order: a list, or the engine's array of them."""

    def __len__(self) -> int: ...

    def __getitem__(self, position: int, /) -> SupportsInt: ...

    def __iter__(self) -> Iterator[SupportsInt]: ...


def drawn(ids: PaperIds, count: int, seed: str, excluded: Collection[int]) -> list[int]:
    """A deterministic sample of `ids` outside `excluded`: random draws seeded by `seed`
    (a bounded number of them), and when they find nothing, the first in order. One
    function for every engine, so a daily tour does not depend on which one serves it."""
    rng = random.Random(seed)
    sample: list[int] = []
    for _attempt in range(count * 20):
        if len(sample) == count or len(sample) + len(excluded) >= len(ids):
            break
        paper_id = int(ids[rng.randrange(len(ids))])
        if paper_id not in excluded and paper_id not in sample:
            sample.append(paper_id)
    if not sample:
        sample = [int(p) for p in ids if int(p) not in excluded][:count]
    return sample

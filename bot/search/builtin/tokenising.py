"""Tokenising papers on worker processes: tokenising is pure Python and dominates a
build, so past `PARALLEL_AFTER` papers the batches go to a pool of processes.
`paperclub import` has them tokenised earlier still, while it writes them
(`TokenisedAhead`), for the build that follows.
"""

from __future__ import annotations

import logging
import operator
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.collector import without_cycle_collection
from bot.corpus.indexed import IndexedPaper
from bot.search.builtin.batch import Batch
from bot.search.tokens import Tokenizer

if TYPE_CHECKING:  # the pool loads when a build is big enough to use it: a search never does
    from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor

log = logging.getLogger(__name__)

BATCH = 2_000  # papers a worker tokenises per task
GROUP = 50  # batches merged together as they arrive
PARALLEL_AFTER = 20_000  # below this, starting worker processes costs more than it saves
AHEAD_NICENESS = 10  # TokenisedAhead's workers yield the CPU to the import writing
# TokenisedAhead starts its workers at an import's first flush of new papers (5,000): on
# cores that would idle, their start costs the import nothing. Fewer papers than that are
# tokenised on a thread: a worker process would take longer to start.
AHEAD_AFTER = 5_000


def _batches(papers: Iterable[IndexedPaper]) -> Iterator[list[IndexedPaper]]:
    batch: list[IndexedPaper] = []
    for paper in papers:
        batch.append(paper)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def tokenised(
    papers: Iterable[IndexedPaper], tokenizer: Tokenizer, workers: int
) -> Iterator[Batch]:
    """Batches in order: here when there are at most PARALLEL_AFTER papers, else all on
    `workers` processes with a bounded number of batches in flight (papers are streamed)."""
    batches = _batches(papers)
    waiting: list[list[IndexedPaper]] = []
    for batch in batches:
        waiting.append(batch)
        if len(waiting) * BATCH > PARALLEL_AFTER and workers > 1:
            break
    else:
        for batch in waiting:
            with without_cycle_collection():
                tokenised = Batch.of(batch, tokenizer)
            yield tokenised
        return
    with _worker_pool(workers, type(tokenizer)) as pool:
        pending: deque[Future[Batch]] = deque(
            pool.submit(_tokenise_in_worker, _as_rows(batch)) for batch in waiting
        )
        del waiting
        for batch in batches:
            pending.append(pool.submit(_tokenise_in_worker, _as_rows(batch)))
            while len(pending) > 2 * workers + PARALLEL_AFTER // BATCH:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


@dataclass(frozen=True)
class Told:
    """What an import told TokenisedAhead: its new papers tokenised (by paper id, the
    last told of each), the revisions its commits moved the corpus to, and the papers
    a commit changed after they were told."""

    batch: Batch
    revisions: frozenset[int]
    reopened: frozenset[int]

    def split(self, ids: np.ndarray, changed: np.ndarray) -> tuple[Batch | None, np.ndarray]:
        """Of the papers to index (ids ascending, and the revision that last changed
        each), the rows to take from here, and the ids to read and tokenise again.

        A row is taken only where the import's own commit last changed the paper and no
        commit reopened it: then the paper is as it was told. A paper another process
        changed since (a revision not the import's), one a later record merged into, or
        one told by a file that rolled back whose id went to another paper (told again,
        or not the import's) is read back. Told papers no longer there are left out."""
        told = self.batch.paper_ids
        rows = np.minimum(np.searchsorted(told, ids), max(len(told) - 1, 0))
        taken = (
            (told[rows] == ids if len(told) else np.zeros(len(ids), dtype=bool))
            & np.isin(changed, np.fromiter(self.revisions, np.int64, len(self.revisions)))
            & ~np.isin(ids, np.fromiter(self.reopened, np.int64, len(self.reopened)))
        )
        rows = rows[taken]
        if not len(rows):
            return None, ids
        whole = len(rows) == len(told)  # then rows is 0, 1, ...: no copy (1M: 1 GB)
        return (self.batch if whole else self.batch.take(rows)), ids[~taken]


class TokenisedAhead:
    """Papers tokenised while an import is still writing them, on worker processes that
    use the cores the import leaves idle, for the build that follows. The import writes
    on one core: the workers run at a lower priority (AHEAD_NICENESS) so that they never
    slow it, and have every core once it is done and waits for them.

    The import says at each commit which revision it made and which papers, told
    before, it changed again (`committed`): the build takes the rows of the others
    without reading them back (`Told.split`), which at all of arXiv was 200 s.
    Below AHEAD_AFTER papers one thread of the import's process tokenises them (a worker
    would take longer to start than the papers take): it runs while the import is in
    SQLite, which lets go of the GIL as it writes and commits (a day of 1,000 papers
    into 100k: 0.2 s of tokenising and 0.2 s of commit overlap)."""

    def __init__(self, tokenizer_type: type[Tokenizer], workers: int | None = None) -> None:
        self._tokenizer_type = tokenizer_type
        self._workers = workers or os.cpu_count() or 1
        self._waiting: list[IndexedPaper] = []  # not yet a whole batch (or a pool's worth)
        self._pool: ProcessPoolExecutor | None = None
        self._thread: ThreadPoolExecutor | None = None  # below AHEAD_AFTER papers
        self._thread_tokenizer: Tokenizer | None = None  # the thread's, made with it
        self._pending: deque[Future[Batch]] = deque()
        self._arrived: list[Batch] = []
        self._groups: list[Batch] = []
        self._told = 0  # papers handed to the thread or the workers
        self._failed = False
        self._revisions: set[int] = set()  # made by the import's commits
        self._reopened: set[int] = set()  # told, then changed by a later commit

    def add(self, papers: Sequence[IndexedPaper]) -> None:
        if self._failed:
            return
        self._waiting.extend(papers)
        if self._pool is None and self._told + len(self._waiting) < AHEAD_AFTER:
            self._submit_here()
            return
        whole = len(self._waiting) - len(self._waiting) % BATCH
        self._submit(self._waiting[:whole])
        self._waiting = self._waiting[whole:]
        self._collect(wait=False)

    def __call__(self, papers: list[IndexedPaper]) -> None:  # bot.corpus.drafts.Written
        self.add(papers)

    def committed(self, revision: int, reopened: Iterable[int]) -> None:
        self._revisions.add(revision)
        self._reopened.update(reopened)

    def result(self) -> Told | None:
        """Everything tokenised here, by paper id (waiting for the workers); None when
        nothing was (or a worker failed)."""
        if self._failed or self._told + len(self._waiting) == 0:
            return None
        self._submit(self._waiting)
        self._waiting = []
        arrived = self._collect(wait=True)
        self.close()
        if not arrived:
            return None
        if self._arrived:
            self._groups.append(Batch.merge(self._arrived))
        batch = Batch.merge(self._groups) if self._groups else None
        if batch is None:
            return None
        return Told(_last_told(batch), frozenset(self._revisions), frozenset(self._reopened))

    def close(self) -> None:
        for executor in (self._thread, self._pool):
            if executor is not None:
                executor.shutdown(cancel_futures=True)

    def _submit(self, papers: list[IndexedPaper]) -> None:
        if not papers:
            return
        if self._pool is None:
            self._pool = _worker_pool(self._workers, self._tokenizer_type, AHEAD_NICENESS)
        self._told += len(papers)
        for batch in _batches(papers):
            self._pending.append(self._pool.submit(_tokenise_in_worker, _as_rows(batch)))

    def _submit_here(self) -> None:
        """The waiting papers to this process's tokenising thread, as one batch."""
        if not self._waiting:
            return
        if self._thread is None:
            from concurrent.futures import ThreadPoolExecutor

            self._thread = ThreadPoolExecutor(1, thread_name_prefix="tokenising-ahead")
            self._thread_tokenizer = self._tokenizer_type()
        papers, self._waiting = self._waiting, []
        self._told += len(papers)
        self._pending.append(self._thread.submit(self._tokenise_here, papers))

    def _tokenise_here(self, papers: list[IndexedPaper]) -> Batch:
        with without_cycle_collection():  # the collector's pause is the whole process's
            assert self._thread_tokenizer is not None
            return Batch.of(papers, self._thread_tokenizer)

    def _collect(self, wait: bool) -> bool:
        """Takes the batches that are done (every one, when `wait`); False once a worker
        failed, and then nothing told is kept."""
        try:
            while self._pending and (wait or self._pending[0].done()):
                self._arrived.append(self._pending.popleft().result())
                if len(self._arrived) == GROUP:  # merged as they come, as in a build
                    self._groups.append(Batch.merge(self._arrived))
        except Exception as problem:  # noqa: BLE001 - a worker died: the build tokenises them
            log.warning("search index: tokenising ahead of the build stopped: %r", problem)
            self._failed = True
            self._waiting, self._arrived, self._groups = [], [], []
            self._pending.clear()
            self.close()
        return not self._failed


def _last_told(batch: Batch) -> Batch:
    """By paper id, the last told of each: an id told by a file that rolled back can be
    told again by the next, with another paper."""
    order = np.argsort(batch.paper_ids, kind="stable")  # written in id order, but sure
    ids = batch.paper_ids[order]
    last = np.ones(len(ids), dtype=bool)
    last[:-1] = ids[1:] != ids[:-1]
    order = order[last]
    if len(order) == len(ids) and np.array_equal(order, np.arange(len(order))):
        return batch
    return batch.take(order)


def _worker_pool(
    workers: int, tokenizer_type: type[Tokenizer], niceness: int = 0
) -> ProcessPoolExecutor:
    """Tokenising processes, each with a tokenizer of its own."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),  # fork is unsafe in a threaded bot
        initializer=_start_worker,
        initargs=(tokenizer_type, niceness),
    )


# A worker process keeps one tokenizer (and its stem cache) for all its batches.
_worker_tokenizer: Tokenizer | None = None


def _start_worker(tokenizer_type: type[Tokenizer], niceness: int = 0) -> None:
    global _worker_tokenizer  # noqa: PLW0603 - one tokenizer per worker process, made as it starts
    if niceness and hasattr(os, "nice"):
        os.nice(niceness)
    _worker_tokenizer = tokenizer_type()


# Papers go to a worker as plain tuples: a dataclass is pickled with a dict of its
# fields, a third slower, and the pickling is on the importing process's critical path
# (2,000 papers: 40 -> 28 ms; at all of arXiv 1,300 batches).
_ROW = operator.attrgetter(*(f.name for f in fields(IndexedPaper)))


def _as_rows(papers: list[IndexedPaper]) -> list[tuple[Any, ...]]:
    return list(map(_ROW, papers))


def _tokenise_in_worker(rows: list[tuple[Any, ...]]) -> Batch:
    assert _worker_tokenizer is not None
    with without_cycle_collection():  # its stem cache only grows
        return Batch.of([IndexedPaper(*row) for row in rows], _worker_tokenizer)

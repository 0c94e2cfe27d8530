"""The search service: hands out the index of the corpus's current revision.

A process loads the index version an import wrote (bot.search.builtin.files) instead of
re-tokenising, and builds (or extends) one only when none is there for the current
revision; a new revision is served by swapping one reference, so a search holds the
index (bot.search.builtin.index) it started with.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import sys
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, runtime_checkable

import numpy as np

from bot.corpus.indexed import IndexedPaper
from bot.search.builtin import loops
from bot.search.builtin.batch import Batch
from bot.search.builtin.bm25 import Stats
from bot.search.builtin.content import IndexContent
from bot.search.builtin.files import (
    IndexStore,
    StoredVersion,
    default_index_dir,
    fingerprint,
)
from bot.search.builtin.index import SearchIndex
from bot.search.builtin.segments import joined, merge_plan
from bot.search.builtin.tokenising import TokenisedAhead
from bot.search.engine import StoredIndex
from bot.search.params import Bm25Params
from bot.search.tokens import Tokenizer

if TYPE_CHECKING:
    from bot.corpus.library import Library
    from bot.search.engine import SearchBackend

log = logging.getLogger(__name__)


class Corpus(Protocol):
    """What the service reads of every corpus it indexes (see SearchService)."""

    def revision(self) -> int: ...

    def papers(self) -> Iterable[IndexedPaper]: ...


@runtime_checkable
class ChangingCorpus(Corpus, Protocol):
    """A corpus that says which papers changed after a revision: a new revision of the
    index is a segment of them."""

    def papers_changed(self, since: int) -> Iterable[IndexedPaper]: ...


@runtime_checkable
class ChangesById(Corpus, Protocol):
    """A corpus that says which papers changed after a revision by id, with the revision
    of each, and reads papers by id: a build takes those an import told `ahead` from
    there and reads the rest (tokenising.Told.split)."""

    def changes(self, since: int | None) -> tuple[Sequence[int], Sequence[int]]: ...

    def papers_with(self, ids: Sequence[int]) -> Iterable[IndexedPaper]: ...


# Every service of this process, for finish_merges, each with its number in the order
# they were made. A merge thread still running when the main thread returns is cut by the
# interpreter's shutdown ("cannot schedule new futures after interpreter shutdown"), and
# its work is lost.
_SERVICES: weakref.WeakKeyDictionary[SearchService, int] = weakref.WeakKeyDictionary()
_NUMBERS = itertools.count(1)


def services_made() -> int:
    """How many services this process has made so far: finish_merges(after=) of it
    leaves those alone."""
    return max(_SERVICES.values(), default=0)


def finish_merges(after: int = 0) -> None:
    """Before the process exits (the command line calls it whatever the command): no
    service made after the first `after` starts another merge, and a merge under way
    finishes. The next process merges what is left."""
    for service, number in list(_SERVICES.items()):
        if number > after:
            service.close()


def open_search(library: Library, short_lived: bool = False) -> SearchBackend:
    """The built-in engine over the library, its index beside the database
    (files.default_index_dir): what the bot and the command line run. `short_lived`:
    the process does one thing and exits (`paperclub search`, `paperclub import`), so
    it searches and builds a small segment with the numpy loops (loops.short_lived)."""
    if short_lived:
        loops.short_lived()
    return SearchService(library)


class SearchService:
    """Hands out the index for the corpus's current revision: the built-in engine's
    backend (bot.search.engine.SearchBackend).

    With an index directory (by default next to a SQLite database, see
    bot.search.builtin.files.default_index_dir) it loads the version another process wrote, or
    makes one and writes it for the others. When the loader can tell which papers
    changed since a revision (`papers_changed`, and `identity` to tell its database from
    a recreated one), a new revision adds a segment of those papers to the previous
    version; otherwise the index is rebuilt, reusing the rows of unchanged papers.
    Segments are merged in a background thread (bot.search.builtin.segments.merge_plan).

    The swap is a single reference assignment: a search holds the index it started
    with. While one thread updates, the others go on with the old index.
    """

    def __init__(
        self,
        loader: Corpus,
        tokenizer: Tokenizer | None = None,
        params: Bm25Params = Bm25Params(),
        index_dir: Path | str | None = "auto",
        merge_in_background: bool = True,
    ):
        # loader: revision() and papers() (Corpus); optionally papers_changed(since: int),
        # identity() -> str and stamp() -> str, and changes(since) with papers_with(ids)
        # to take what an import told `ahead` (bot.corpus.library.Library has them all).
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
        self._lock = threading.Lock()
        self._merger: threading.Thread | None = None
        self._merging = threading.Lock()  # starting a merge, and closing, one at a time
        self._closed = False  # no merge starts any more: the process is ending
        self._ahead: TokenisedAhead | None = None
        _SERVICES[self] = next(_NUMBERS)

    def warm(self) -> SearchIndex:
        """For a process that serves members: the index loaded and the compiled loops
        ready now, not inside the first search's 3-second ack. A one-off command skips
        it: each loop loads (from numba's disk cache) when a search first runs it."""
        loops.warm()
        return self.current()

    @contextmanager
    def ahead(self) -> Iterator[TokenisedAhead]:
        """For an import followed by an index update (`paperclub import`): the papers an
        import tells what is yielded (its `written`) are tokenised meanwhile, and the
        next build within the block takes them from there (TokenisedAhead)."""
        ahead = TokenisedAhead(type(self.tokenizer))
        self._ahead = ahead
        try:
            yield ahead
        finally:
            self._ahead = None
            ahead.close()

    def _papers(self, since: int | None) -> tuple[Iterable[IndexedPaper], Batch | None]:
        """The papers to index, those changed after revision `since` (None: every one),
        as the rows an import's TokenisedAhead holds for those it told and nobody
        changed since (Told.split), and the rest to read. The rows are taken once: a
        later build reads the papers again."""
        ahead, self._ahead = self._ahead, None
        told = ahead.result() if ahead is not None else None
        loader = self.loader
        if told is None or not isinstance(loader, ChangesById):
            return self._read(since), None
        ids, changed = (np.asarray(a, dtype=np.int64) for a in loader.changes(since))
        rows, read = told.split(ids, changed)
        return loader.papers_with(read.tolist()), rows

    def _read(self, since: int | None) -> Iterable[IndexedPaper]:
        """Every paper (`since` None), or those changed after revision `since`."""
        if since is None:
            return self.loader.papers()
        assert isinstance(self.loader, ChangingCorpus)  # a revision only when _changes_known
        return self.loader.papers_changed(since)

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

    def close(self) -> None:
        """For a process that is ending: start no merge from now on, and wait for the one
        under way (its segment is written to a temporary directory and renamed into
        place, so a merge either is in the index or left no trace but a temp dir)."""
        with self._merging:
            self._closed = True
        self.wait_for_merges()

    def location(self) -> str | None:
        """The index directory, or None for an index this process holds in memory."""
        return str(self.store.root) if self.store is not None else None

    def stored_index(self) -> StoredIndex | None:
        """The version in the index directory, as its files say (nothing is loaded or
        built): None without one this code reads, or without a directory."""
        if self.store is None:
            return None
        version = self.store.current()
        if version is None or not self._same_format(version):
            return None
        return StoredIndex(version.papers(), self._matches(version, self.loader.revision()))

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
                # Its segments only: an index of them would compute global statistics
                # that the new segment's replace (0.5 s at all of arXiv in segments).
                named, stats = self._with_changes(self._segments(stored), stored.revision)
                segments = [
                    name if name else self.store.write_segment(content.arrays())
                    for name, content in named
                ]
            else:
                stats = None
                previous = self._index if self._index and len(self._index.parts) == 1 else None
                if previous is None and stored is not None and self._same_format(stored):
                    opened = self._open(stored)
                    previous = opened if len(opened.parts) == 1 else None
                content = self._build(revision, previous).content
                named = [("", content)]
                segments = [self.store.write_segment(content.arrays())]
            version = self.store.save_version(segments, self._meta(revision, named))
            contents = [(name, content) for name, (_n, content) in zip(version.segments, named, strict=True)]
            # The new segment is served from memory, the others from the mapped files.
            return SearchIndex(
                revision, self.tokenizer, contents, self.params, version.name, stats
            )

    def _in_memory(self, revision: int) -> SearchIndex:
        previous = self._index
        if previous is not None and self._changes_known() and previous.revision <= revision:
            named, stats = self._with_changes(
                [(p.name, p.content) for p in previous.parts], previous.revision
            )
            index = SearchIndex(revision, self.tokenizer, named, self.params, stats=stats)
            start = merge_plan([p.live_count for p in index.parts])
            return index if start is None else self._merged(index, start)
        single = previous if previous is not None and len(previous.parts) == 1 else None
        return self._build(revision, single)

    def _with_changes(
        self, named: list[tuple[str, IndexContent]], revision: int
    ) -> tuple[list[tuple[str, IndexContent]], list[Stats] | None]:
        """The segments of the index at `revision` and, when papers changed since, a new
        one of them (named "" until it is stored), its impacts from the new global
        statistics; and those statistics, when there is a new segment."""
        started = time.perf_counter()
        named = list(named)
        papers, told = self._papers(revision)
        content = IndexContent.build(papers, self.tokenizer, self.params, told=told)
        stats = None
        if content.doc_count:
            new, stats = joined([c for _name, c in named], content, self.params)
            named.append(("", new))
        log.info(
            "search index: a segment of %d changed papers after revision %d in %.2f s",
            content.doc_count,
            revision,
            time.perf_counter() - started,
        )
        return named, stats

    def _changes_known(self) -> bool:
        return isinstance(self.loader, ChangingCorpus)

    def _extendable(self, stored: StoredVersion | None, revision: int) -> TypeGuard[StoredVersion]:
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

    def _matches(self, stored: StoredVersion | None, revision: int) -> TypeGuard[StoredVersion]:
        return (
            stored is not None
            and stored.revision == revision
            and self._same_format(stored)
            and stored.meta.get("stamp") == self._stamp()
        )

    def _meta(self, revision: int, named: list[tuple[str, IndexContent]]) -> dict[str, Any]:
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
        named = self._segments(stored)
        return SearchIndex(stored.revision, self.tokenizer, named, self.params, stored.name)

    def _segments(self, stored: StoredVersion) -> list[tuple[str, IndexContent]]:
        """The stored version's segments by name, those this process has open reused."""
        have = {p.name: p.content for p in self._index.parts} if self._index else {}
        named = []
        for name in stored.segments:
            content = have.get(name)
            if content is None:
                content = IndexContent.from_arrays(stored.segment_arrays(name), self.params)
                self._complete(name, content)
            named.append((name, content))
        return named

    def _complete(self, name: str, content: IndexContent) -> None:
        """A segment written before its title sets or its digests' order were stored gets
        them now, once for every process after (0.2 s at a million papers)."""
        if self.store is None:
            return
        missing = {} if content.title_sets is not None else content.title_set_arrays()
        if content.term_key_order is None:
            missing["vocabulary.key_order"] = content.key_order()
        if missing:
            self.store.add_arrays(name, missing)

    def _build(self, revision: int, previous: SearchIndex | None) -> SearchIndex:
        started = time.perf_counter()
        papers, told = self._papers(None)
        previous_content = previous.content if previous else None
        content = IndexContent.build(papers, self.tokenizer, self.params, previous_content, told=told)
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
        return joined([p.content for p in index.parts[:start]], merged, self.params)[0]

    def _merge_soon(self) -> None:
        index = self._index
        if self.store is None or index is None or index.version is None:
            return
        if merge_plan([p.live_count for p in index.parts]) is None:
            return
        if not self.merge_in_background:
            self._merge_stored()
            return
        with self._merging:
            # Closed, or the interpreter going away: a merge started now could not finish.
            if self._closed or sys.is_finalizing():
                return
            if self._merger is not None and self._merger.is_alive():
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
                if now is None or at is None or not self._same_format(now):
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

"""The vectors a serving process holds under one model, kept current: read from the files
beside the index and the database, indexed for nearest neighbours when the library is
large, and saved beside the index for the next process to start from.

- On first need: the newest snapshot (bot.search.vector_files), memory-mapped, and the
  rows the database has written since; without one, every row from the database.
- Before each search: one row read (the vectors' version); the rows written since it last
  looked, when it moved (so a paper one replica embedded is found on every replica).
- From NEIGHBOURS_FROM vectors: the neighbour index built on a thread of its own (searches
  stay exact by brute force meanwhile), the vectors that arrive during the build added.
- From SNAPSHOT_FROM vectors: a snapshot written on a thread when none is there yet or the
  rows read since the last one reach a tenth of the library, carrying the index once it
  is built (a restart at 1M papers then maps 400 MB instead of reading a million rows
  and building the index for 100 s).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bot.corpus.embedded import StoredVectors
from bot.corpus.revisions import corpus_identity
from bot.search.vector_files import VectorFiles
from bot.search.vectors import VectorMatrix

log = logging.getLogger(__name__)

# Vectors from which a snapshot is kept: below, reading them all from the database takes a
# second or so.
SNAPSHOT_FROM = 20_000


class LiveVectors:
    def __init__(self, stored: StoredVectors, model: str, index_dir: str | Path | None = None):
        self.stored = stored
        self.model = model
        self._index_dir = index_dir
        self._lock = threading.Lock()
        self._matrix = VectorMatrix.empty(model, 0)
        self._version = -1  # nothing read yet (0: the database has no vectors)
        self._files: VectorFiles | None = None
        self._unsaved = 0  # rows read since the last snapshot
        self._threads: list[threading.Thread] = []
        self._saving = False
        # While a neighbour index is built: the vectors that arrived since it began.
        self._arrived: list[VectorMatrix] | None = None
        self._index_failed = False  # not tried again in this process: searches stay exact

    def current(self) -> VectorMatrix:
        """The vectors, with those written since the last look."""
        version = self.stored.version()
        if version == self._version:
            return self._matrix
        with self._lock:
            if version != self._version:
                self._read(version)
                self._index_when_large()
                self._save_when_due()
        return self._matrix

    def wait(self) -> None:
        """Until the index being built and the snapshot being written are done (for the
        benchmarks, `paperclub embed` and tests)."""
        while self._threads:
            self._threads.pop(0).join()

    # --- reading ----------------------------------------------------------------------------

    def _read(self, version: int) -> None:
        if self._version < 0:
            self._matrix = self._first_read(version)
        else:
            newer = VectorMatrix.from_stored(self.model, self.stored.rows(self.model, self._version))
            self._matrix = self._matrix.updated(newer) if len(self._matrix) else newer
            self._unsaved += len(newer)
            if self._arrived is not None:
                self._arrived.append(newer)
        self._version = version

    def _first_read(self, version: int) -> VectorMatrix:
        """The newest snapshot with the rows written since, or every row."""
        files = self._vector_files()
        snapshot = files.latest(version) if files is not None else None
        if snapshot is None:
            matrix = VectorMatrix.from_stored(self.model, self.stored.rows(self.model))
            self._unsaved = len(matrix)
            return matrix
        dimension = snapshot.part.dimension
        newer = VectorMatrix.from_stored(self.model, self.stored.rows(self.model, snapshot.version), dimension)
        matrix = VectorMatrix.of_parts(self.model, snapshot.part, newer.tail)
        if snapshot.neighbours is not None:
            for ids, rows in newer.blocks():
                snapshot.neighbours.add(ids, rows)
            matrix.neighbours = snapshot.neighbours
        self._unsaved = len(newer)
        log.info("read %d vectors saved beside the index and %d from the database", len(snapshot.part), len(newer))
        return matrix

    def _vector_files(self) -> VectorFiles | None:
        if self._files is None and self._index_dir is not None:
            self._files = VectorFiles(self._index_dir, corpus_identity(self.stored.db), self.model)
        return self._files

    # --- the neighbour index ------------------------------------------------------------------

    def _index_when_large(self) -> None:
        """(Holding the lock.) Start building the neighbour index of a matrix that wants
        one, unless one is being built."""
        if self._arrived is not None or self._index_failed or not self._matrix.wants_index():
            return
        self._arrived = []
        self._start(self._index, self._matrix)

    def _index(self, matrix: VectorMatrix) -> None:
        """Build the index of `matrix`, add what arrived meanwhile, and give it to the
        current matrix (its searcher reads it on the next search)."""
        started = time.monotonic()
        try:
            index = matrix.new_index()
        except Exception as problem:  # noqa: BLE001 - searches stay exact by brute force
            log.warning("no neighbour index, searching every vector: %s: %s", type(problem).__name__, problem)
            with self._lock:
                self._arrived, self._index_failed = None, True
            return
        with self._lock:
            for newer in self._arrived or ():
                for ids, rows in newer.blocks():
                    index.add(ids, rows)
            self._matrix.neighbours = index
            self._arrived = None
            self._save_when_due()
        log.info("indexed %d vectors for nearest neighbours in %.0f s", len(index), time.monotonic() - started)

    # --- snapshots ----------------------------------------------------------------------------

    def _save_when_due(self) -> None:
        """(Holding the lock.) Write a snapshot on a thread when one is due: a library of
        SNAPSHOT_FROM vectors or more, a tenth of it read since the last, and its index
        built if it wants one (so the snapshot carries it)."""
        matrix = self._matrix
        if self._saving or self._vector_files() is None or len(matrix) < SNAPSHOT_FROM:
            return
        if self._unsaved < max(len(matrix) // 10, 1) or self._arrived is not None:
            return
        self._saving = True
        self._start(self._save, matrix, self._version, self._unsaved)

    def _save(self, matrix: VectorMatrix, version: int, unsaved: int) -> None:
        files = self._vector_files()
        part = matrix.stored_part()
        try:
            saved = files is not None and part is not None and files.save(version, part, matrix.neighbours)
        except OSError as problem:  # a full or read-only disk: the database is read at each start
            log.warning("not saving the vectors beside the index: %s", problem)
            return  # _saving stays set: not tried again in this process
        with self._lock:
            self._saving = False
            # Saved, or another process is saving or saved as new: either way covered.
            self._unsaved = max(self._unsaved - unsaved, 0)
        if saved:
            log.info("saved %d vectors beside the index (version %d)", len(matrix), version)

    def _start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name="paperclub-vectors", daemon=True)
        self._threads.append(thread)
        thread.start()

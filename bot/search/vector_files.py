"""The papers' vectors beside the search index: a snapshot of one model's vectors, int8
codes as stored, that a starting process memory-maps instead of reading every row from
the database, with the neighbour index built over them when the library has one.

    <index dir>/vectors/<corpus identity>-<model digest>/
        lock                                  held (flock) by the one process writing
        v<version>/paper_ids.npy codes.npy scales.npy meta.json [neighbours.faiss]

The database stays the truth: a process maps the newest snapshot no newer than the
database's vectors version (one of a recreated database, whose identity differs, is never
read) and reads the rows written since. A snapshot is written into a temporary directory
and renamed into place; older ones are removed after (a process still mapping one keeps
reading it until it lets go: POSIX unlink).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.search.neighbours import NeighbourIndex
from bot.search.vectors import Part

log = logging.getLogger(__name__)

ARRAYS = ("paper_ids", "codes", "scales")
INDEX_FILE = "neighbours.faiss"


@dataclass(frozen=True)
class Snapshot:
    version: int  # the vectors' version it holds every row up to
    part: Part  # memory-mapped
    neighbours: NeighbourIndex | None


class VectorFiles:
    """The snapshots of one database's vectors under one model."""

    def __init__(self, index_dir: Path | str, identity: str, model: str):
        digest = hashlib.blake2b(model.encode(), digest_size=6).hexdigest()
        self.root = Path(index_dir) / "vectors" / f"{identity}-{digest}"

    def latest(self, at_most: int) -> Snapshot | None:
        """The newest whole snapshot of at most version `at_most`; None when there is
        none or it cannot be read (then the database is read, as with none)."""
        for version in sorted(self._versions(), reverse=True):
            if version > at_most:
                continue  # the database was restored to an older state: not this one
            try:
                return self._read(self.root / f"v{version}", version)
            except (OSError, ValueError, RuntimeError) as problem:  # removed meanwhile, or damaged
                log.warning("not reading the vectors saved in %s: %s", self.root / f"v{version}", problem)
                return None
        return None

    def save(self, version: int, part: Part, neighbours: NeighbourIndex | None) -> bool:
        """Write a snapshot of `part` at `version` unless another process is writing one
        (False then) or one as new is there; then remove the older ones."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "lock", "a+b") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            if any(v >= version for v in self._versions()):
                return False
            temp = Path(tempfile.mkdtemp(prefix="tmp-", dir=self.root))
            try:
                self._write(temp, version, part, neighbours)
                os.replace(temp, self.root / f"v{version}")
            finally:
                shutil.rmtree(temp, ignore_errors=True)
            for older in self._versions():
                if older < version:
                    shutil.rmtree(self.root / f"v{older}", ignore_errors=True)
        return True

    def _versions(self) -> list[int]:
        if not self.root.is_dir():
            return []
        return [int(p.name[1:]) for p in self.root.iterdir()
                if p.name.startswith("v") and p.name[1:].isdigit() and (p / "meta.json").exists()]

    @staticmethod
    def _write(directory: Path, version: int, part: Part, neighbours: NeighbourIndex | None) -> None:
        np.save(directory / "paper_ids.npy", part.paper_ids)
        np.save(directory / "codes.npy", part.codes)
        np.save(directory / "scales.npy", part.scales if part.scales is not None else np.ones(len(part), np.float32))
        meta = {"version": version, "vectors": len(part), "dimension": part.dimension}
        if neighbours is not None:
            neighbours.save(directory / INDEX_FILE)
            meta["index_trained_on"] = neighbours.trained_on
        # meta.json last: a directory without it is not a snapshot.
        (directory / "meta.json").write_text(json.dumps(meta), encoding="utf-8")

    @staticmethod
    def _read(directory: Path, version: int) -> Snapshot:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        arrays = {name: np.load(directory / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
        part = Part(arrays["paper_ids"], arrays["codes"], arrays["scales"])
        if len(part.codes) != len(part.paper_ids) or part.scales is None or len(part.scales) != len(part.paper_ids):
            raise ValueError("its arrays disagree in length")
        index = directory / INDEX_FILE
        neighbours = NeighbourIndex.load(index, meta["index_trained_on"]) if index.exists() else None
        return Snapshot(version, part, neighbours)

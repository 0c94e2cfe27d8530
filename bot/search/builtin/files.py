"""Where the search index lives on disk, and how a new version replaces the old one.

An index directory holds versions side by side and a pointer to the live one:

    CURRENT                     the live version's directory name, replaced atomically
    lock                        held (flock) by the one process making a version
    merge.lock                  held by the one process merging segments
    r12-3f9a...-8c1d/meta.json  a version: its revision and its segments, oldest first
    segments/s5e0c.../          a segment (bot.search.builtin.segments): one .npy file per array

A segment is written into a temporary directory and renamed into place; a version's
meta.json likewise; only then is the version named in CURRENT (write + os.replace): a
reader sees the old version or the new one, never a half-written one, and a crash
mid-merge leaves the previous version whole. Readers memory-map the arrays, so an old version deleted while
a process still serves it stays readable until that process lets go (POSIX unlink).
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import logging
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.engine import make_url

from bot.search.params import Bm25Params
from bot.search.tokens import Tokenizer

log = logging.getLogger(__name__)

FORMAT_VERSION = 5  # 2: filter values as written, did-you-mean words; 3: segments;
# 4: postings of frequencies, no document -> terms rows; 5: the year filter. Arrays a later change adds to
# every segment (title sets) are added to an older one when it is opened (add_arrays).
SEGMENTS = "segments"  # the directory of segments, each one directory of arrays
MMAP_FROM = 1 << 16  # bytes; smaller arrays are read into memory (and empty ones cannot be mapped)
STALE_TEMP = 3600  # seconds after which a temp dir is a crashed build's leftover


def default_index_dir(database_url: str, env: Mapping[str, str] | None = None) -> Path | None:
    """PAPERCLUB_INDEX_DIR; else next to a SQLite file (`paperclub.db.index/`); else, for a
    server database, a per-user cache directory keyed by the URL; None for in-memory SQLite."""
    env = os.environ if env is None else env
    if env.get("PAPERCLUB_INDEX_DIR"):
        return Path(env["PAPERCLUB_INDEX_DIR"])
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            return None
        return Path(url.database + ".index")
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(url.render_as_string(hide_password=True).encode()).hexdigest()[:16]
    return cache / "paperclub" / f"index-{key}"


def fingerprint(tokenizer: Tokenizer, params: Bm25Params) -> str:
    """Changes whenever an index built before would answer differently: the file format,
    the BM25 parameters or the tokenizer's code."""
    module = sys.modules[type(tokenizer).__module__]
    parts = [
        str(FORMAT_VERSION),
        type(tokenizer).__qualname__,
        json.dumps(asdict(params)),
        inspect.getsource(module),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class StoredVersion:
    path: Path
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def revision(self) -> int:
        return int(self.meta["revision"])

    @property
    def segments(self) -> list[str]:
        return list(self.meta.get("segments", []))

    def segment_arrays(self, name: str) -> dict[str, np.ndarray]:
        """The arrays of one of its segments."""
        return load_arrays(self.path.parent / SEGMENTS / name)

    def load(self) -> dict[str, np.ndarray]:
        """The arrays of a version of one segment."""
        (only,) = self.segments
        return self.segment_arrays(only)

    def papers(self) -> int:
        """How many papers it finds, read from its segments' paper ids alone: each paper
        once (a later segment's copy of a paper replaces the earlier ones)."""
        ids = [load_array(self.path.parent / SEGMENTS / name / "paper_ids.npy") for name in self.segments]
        return len(np.unique(np.concatenate(ids))) if ids else 0


def load_arrays(directory: Path) -> dict[str, np.ndarray]:
    """Every array, memory-mapped where it is large enough to matter."""
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    return {name: load_array(directory / f"{name}.npy") for name in meta["arrays"]}


def load_array(file: Path) -> np.ndarray:
    """One array, memory-mapped where it is large enough to matter."""
    mapped = file.stat().st_size >= MMAP_FROM
    # asarray drops the memmap subclass, whose per-operation overhead shows in queries.
    return np.asarray(np.load(file, mmap_mode="r" if mapped else None))


class IndexStore:
    """The versions and segments under one directory."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def current_name(self) -> str | None:
        try:
            return (self.root / "CURRENT").read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None

    def current(self) -> StoredVersion | None:
        name = self.current_name()
        if name is None:
            return None
        try:
            meta = json.loads((self.root / name / "meta.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return StoredVersion(self.root / name, meta)

    @contextmanager
    def building(self) -> Iterator[None]:
        """Held while a version is made, so processes that notice the same new revision
        build it once: the others wait, then find it in CURRENT."""
        with self._locked("lock", blocking=True):
            yield

    @contextmanager
    def merging(self) -> Iterator[bool]:
        """Held by the one process merging segments; yields False when another is."""
        with self._locked("merge.lock", blocking=False) as held:
            yield held

    @contextmanager
    def _locked(self, name: str, blocking: bool) -> Iterator[bool]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / name, "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def write_segment(self, arrays: Mapping[str, np.ndarray]) -> Path:
        """The arrays in a new temporary directory; `save_version` puts it in place."""
        self.root.mkdir(parents=True, exist_ok=True)
        temp = self.root / f"tmp-seg-{uuid.uuid4().hex}"
        temp.mkdir()
        for key, array in arrays.items():
            np.save(temp / f"{key}.npy", np.ascontiguousarray(array))
        meta = {"arrays": sorted(arrays), "written_at": time.time()}
        (temp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        return temp

    def add_arrays(self, segment: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Arrays a stored segment was written without (a later format made them part of
        every segment), added beside its others: each file is written under a temporary
        name and renamed, then the segment's meta.json that lists them, so a reader opens
        the segment with or without them, never half of one. Best effort: a segment
        another process has pruned meanwhile keeps them in memory only."""
        directory = self.root / SEGMENTS / segment
        token = uuid.uuid4().hex[:8]
        try:
            meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
            for key, array in arrays.items():
                temp = directory / f"tmp-{token}-{key}.npy"
                np.save(temp, np.ascontiguousarray(array))
                os.replace(temp, directory / f"{key}.npy")
            meta["arrays"] = sorted({*meta["arrays"], *arrays})
            temp = directory / f"tmp-{token}-meta.json"
            temp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
            os.replace(temp, directory / "meta.json")
        except OSError as problem:
            log.info("search index: segment %s kept its arrays in memory: %s", segment, problem)

    def save_version(
        self, segments: list[str | Path], meta: Mapping[str, Any]
    ) -> StoredVersion:
        """A version made of these segments (names of stored ones, or directories from
        `write_segment`), named in CURRENT. Call it holding `building`."""
        (self.root / SEGMENTS).mkdir(parents=True, exist_ok=True)
        names = []
        for segment in segments:
            if isinstance(segment, Path):
                name = f"s{uuid.uuid4().hex[:16]}"
                os.rename(segment, self.root / SEGMENTS / name)
                segment = name
            names.append(segment)
        name = f"r{meta['revision']}-{meta['fingerprint']}-{uuid.uuid4().hex[:8]}"
        temp = self.root / f"tmp-{name}"
        temp.mkdir()
        full_meta = {**meta, "segments": names, "written_at": time.time()}
        (temp / "meta.json").write_text(json.dumps(full_meta, indent=1), encoding="utf-8")
        os.rename(temp, self.root / name)
        pointer = self.root / f"CURRENT.{uuid.uuid4().hex[:8]}"
        pointer.write_text(name + "\n", encoding="utf-8")
        os.replace(pointer, self.root / "CURRENT")
        self._prune(keep=name)
        return StoredVersion(self.root / name, full_meta)

    def save(self, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> StoredVersion:
        """A version of one segment holding these arrays."""
        with self.building():
            return self.save_version([self.write_segment(arrays)], meta)

    def _prune(self, keep: str) -> None:
        """Drop all but the live version and the one before it (a process that read the
        old CURRENT a moment ago may still be opening it), the segments neither uses,
        and crashed builds' leftovers."""
        versions = sorted(
            (
                p
                for p in self.root.iterdir()
                if p.is_dir()
                and (p / "meta.json").exists()
                and p.name != keep
                and not p.name.startswith("tmp-")  # being written (a merge's segment)
            ),
            key=lambda p: p.stat().st_mtime,
        )
        for old in versions[:-1]:
            shutil.rmtree(old, ignore_errors=True)
        used: set[str] = set()
        for name in [keep, *(v.name for v in versions[-1:])]:
            try:
                meta = json.loads((self.root / name / "meta.json").read_text(encoding="utf-8"))
            except (FileNotFoundError, ValueError):
                continue
            used.update(meta.get("segments", []))
        for segment in (self.root / SEGMENTS).iterdir():
            if segment.name not in used:
                shutil.rmtree(segment, ignore_errors=True)
        for temp in self.root.glob("tmp-*"):
            if time.time() - temp.stat().st_mtime > STALE_TEMP:
                shutil.rmtree(temp, ignore_errors=True)

"""Where the search index lives on disk, and how a new version replaces the old one.

An index directory holds versions side by side and a pointer to the live one:

    CURRENT                     the live version's directory name, replaced atomically
    lock                        held (flock) by the one process building a version
    r12-3f9a...-8c1d/           meta.json and one .npy file per array

A version is written into a temporary directory, renamed into place, and only then
named in CURRENT (write + os.replace): a reader sees the old version or the new one,
never a half-written one. Readers memory-map the arrays, so an old version deleted while
a process still serves it stays readable until that process lets go (POSIX unlink).
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
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

from bot.search.bm25 import Bm25Params
from bot.search.tokens import Tokenizer

FORMAT_VERSION = 2  # 2: filter values as written, did-you-mean words
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
    def revision(self) -> int:
        return int(self.meta["revision"])

    def load(self) -> dict[str, np.ndarray]:
        """Every array, memory-mapped where it is large enough to matter."""
        arrays = {}
        for name in self.meta["arrays"]:
            file = self.path / f"{name}.npy"
            mapped = file.stat().st_size >= MMAP_FROM
            # asarray drops the memmap subclass, whose per-operation overhead shows in queries.
            arrays[name] = np.asarray(np.load(file, mmap_mode="r" if mapped else None))
        return arrays


class IndexStore:
    """The versions under one directory."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def current(self) -> StoredVersion | None:
        try:
            name = (self.root / "CURRENT").read_text(encoding="utf-8").strip()
            meta = json.loads((self.root / name / "meta.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return StoredVersion(self.root / name, meta)

    @contextmanager
    def building(self) -> Iterator[None]:
        """Held while a version is built, so processes that notice the same new revision
        build it once: the others wait, then find it in CURRENT."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def save(self, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> StoredVersion:
        self.root.mkdir(parents=True, exist_ok=True)
        name = f"r{meta['revision']}-{meta['fingerprint']}-{uuid.uuid4().hex[:8]}"
        temp = self.root / f"tmp-{name}"
        temp.mkdir()
        for key, array in arrays.items():
            np.save(temp / f"{key}.npy", np.ascontiguousarray(array))
        full_meta = {**meta, "arrays": sorted(arrays), "written_at": time.time()}
        (temp / "meta.json").write_text(json.dumps(full_meta, indent=1), encoding="utf-8")
        os.rename(temp, self.root / name)
        pointer = self.root / f"CURRENT.{uuid.uuid4().hex[:8]}"
        pointer.write_text(name + "\n", encoding="utf-8")
        os.replace(pointer, self.root / "CURRENT")
        self._prune(keep={name})
        return StoredVersion(self.root / name, full_meta)

    def _prune(self, keep: set[str]) -> None:
        """Drop all but the live version and the one before it (a process that read the
        old CURRENT a moment ago may still be opening it), and crashed builds' leftovers."""
        versions = sorted(
            (
                p
                for p in self.root.iterdir()
                if p.is_dir() and (p / "meta.json").exists() and p.name not in keep
            ),
            key=lambda p: p.stat().st_mtime,
        )
        for old in versions[:-1]:
            shutil.rmtree(old, ignore_errors=True)
        for temp in self.root.glob("tmp-*"):
            if time.time() - temp.stat().st_mtime > STALE_TEMP:
                shutil.rmtree(temp, ignore_errors=True)

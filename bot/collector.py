"""Bulk work with Python's cycle collector paused, and its free memory given back.

An import or a tokenising worker makes millions of objects that live until it ends
(records, drafts, lookups, a stem cache) and next to no reference cycles. The collector
traverses every one of them again each time the heap has grown by a quarter: a fifth of
a 100k import's time, and of a worker's. Reference counting frees the rest as ever.
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """The collector paused for the block; a nested pause leaves it to the outermost
    (gc.disable is for the whole process: a thread's pause pauses it for all)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def give_back_free_memory() -> None:
    """Hand the C heap's free pages back to the system, where the C library can (glibc's
    malloc_trim; elsewhere nothing happens). A large import frees the records of one file
    in many small pieces among live ones: the heap keeps them, and at a million papers
    the process would carry some 250 MB of them into the index build, its peak."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):  # not glibc
        return
    trim(0)

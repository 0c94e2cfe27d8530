"""Bulk work with Python's cycle collector paused.

An import or a tokenising worker makes millions of objects that live until it ends
(records, drafts, lookups, a stem cache) and next to no reference cycles. The collector
traverses every one of them again each time the heap has grown by a quarter: a fifth of
a 100k import's time, and of a worker's. Reference counting frees the rest as ever.
"""

from __future__ import annotations

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

"""What the search index reads of a paper: a plain record the library hands out.

It lives with the corpus, which makes it, so that the corpus never imports the search
package above it; the search reads it, and a second engine would read the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class IndexedPaper:
    """What the index needs of one paper: its text and the fields filters look at."""

    paper_id: int
    title: str
    text: str  # everything searchable: title, abstract, reviewer notes
    authors: Sequence[str] = ()
    track: str | None = None
    award: str | None = None
    collections: Sequence[str] = ()
    tags: Sequence[str] = ()
    year: int | None = None  # the `year:` filter

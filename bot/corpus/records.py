"""What every corpus reader produces: plain paper records and the one error type.

Readers are pure functions from text to records; storing them is the library's job
(`bot.corpus.library`). Keeping readers free of the database makes each format testable on
its own and lets a whole file be rejected before anything from it is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.search.tokens import fold


@dataclass
class PaperRecord:
    """One paper as a source describes it.

    `line` is the 1-based line where the record starts in its file, so that later
    problems (a duplicate, a bad field) can still be reported as FILE:LINE.
    """

    title: str
    line: int = 1
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    url: str | None = None
    # Identifiers exactly as the source gave them: {"beir": "4983", "arxiv": "2101.00001",
    # "doi": "10.1000/xyz", "openreview": "..."}; the scheme names are lower case.
    external_ids: dict[str, str] = field(default_factory=dict)
    track: str | None = None  # Oral / Spotlight / Poster, or a decision such as "top 5%"
    presentation: str | None = None  # e.g. "In-Person Poster presentation"
    award: str | None = None  # e.g. "Outstanding Paper", "Honorable Mention"
    venue: str | None = None
    year: int | None = None
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # True when the source had no title and a display title was derived from the text.
    title_derived: bool = False


class CorpusFormatError(ValueError):
    """A corpus file that cannot be read; str() is `FILE:LINE: what is wrong`."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


_SPACE = re.compile(r"\s+")


def clean_space(text: str) -> str:
    """Collapse runs of whitespace (including newlines and NBSP) to one space."""
    return _SPACE.sub(" ", text.replace("\u00a0", " ")).strip()


def title_key(title: str) -> str:
    """The normalised title used to recognise the same paper from two sources.

    Case, accents, punctuation and spacing are ignored: "How Do Vision Transformers
    Work?" and "how do vision transformers work" are one paper.
    """
    return " ".join(re.findall(r"\w+", fold(title)))

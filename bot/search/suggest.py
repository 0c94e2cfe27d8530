"""Did you mean: which words a member typed get a suggestion, and the replies that say so.

A suggestion is an indexed word as written (the BM25 vocabulary holds stems, which a
member cannot retype) within a few edits of a typed plain word; every engine suggests
for the same words (`correctable`) within the same distance (`max_edits`) and answers
in a `Spellcheck`. How an engine finds the closest word is its own: the built-in one
keeps a sorted table of the words (bot.search.builtin.spelling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SHORTEST = 3  # shorter words are left alone: "gp" or "rl" are as likely meant as typed
LONGEST = 40  # longer runs of letters are not words anyone types
WORD = re.compile(rf"[a-z]{{{SHORTEST},{LONGEST}}}")


def correctable(word: str) -> bool:
    """Plain words only: numbers, model names (gpt-4, l2) and short words stay as typed."""
    return WORD.fullmatch(word) is not None


def max_edits(word: str) -> int:
    """One edit in a short word, two in a longer one (one in four letters is already a
    different word: "cat", "car")."""
    return 1 if len(word) <= 4 else 2


@dataclass(frozen=True)
class Spellcheck:
    """A query's words no paper contains, and the indexed words they may have meant."""

    unknown: tuple[str, ...] = ()
    corrections: dict[str, str] = field(default_factory=dict)  # typed word -> suggestion
    filters: re.Pattern[str] | None = None  # the query's filters, whose values stay as typed

    def no_match(self, raw: str) -> str:
        """The reply to a search that found nothing."""
        meant = self.did_you_mean(raw)
        if meant is None:
            return f"No papers match `{raw}`. Try fewer or broader words."
        return f"No papers match `{raw}`. Did you mean `{meant}`?"

    def did_you_mean(self, raw: str) -> str | None:
        """`raw` with the corrections made (filter values left alone), or None."""
        if not self.corrections:
            return None
        parts, last = [], 0
        for match in self.filters.finditer(raw) if self.filters else ():
            parts += [self._corrected(raw[last : match.start()]), match.group(0)]
            last = match.end()
        meant = "".join(parts) + self._corrected(raw[last:])
        return meant if meant != raw else None

    def _corrected(self, text: str) -> str:
        for typed, meant in self.corrections.items():
            text = re.sub(rf"\b{re.escape(typed)}\b", meant, text, flags=re.IGNORECASE)
        return text

    def note(self) -> str | None:
        """The line under a search's results when some of its words matched nothing."""
        if not self.corrections:
            return None
        typed = ", ".join(f"`{w}`" for w in self.corrections)
        meant = ", ".join(f"`{w}`" for w in self.corrections.values())
        return f"(no paper has {typed}; did you mean {meant}?)"

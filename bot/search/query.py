"""A member's search as typed: free text and filters (`author:`, `track:`, `in:`, `tag:`).

Parsing knows nothing of an index, so every engine reads the same queries, and a typo in
a filter is refused before any engine is asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A filter is a field name, a colon and a value: one word, or words in double quotes.
FILTER_PATTERN = re.compile(r'\b(author|track|in|tag):(?:"([^"]*)"|(\S+))', re.IGNORECASE)


class QueryError(ValueError):
    """A query that cannot be run; the message says what to type instead."""


@dataclass
class Query:
    text: str  # the free text, filters removed
    filters: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: str) -> Query:
        filters: dict[str, list[str]] = {}
        for match in FILTER_PATTERN.finditer(raw):
            value = (match.group(2) if match.group(2) is not None else match.group(3)).strip()
            if not value:
                raise QueryError(
                    f'{match.group(1)}: needs a value, e.g. {match.group(1)}:"some words"'
                )
            filters.setdefault(match.group(1).lower(), []).append(value)
        text = " ".join(FILTER_PATTERN.sub(" ", raw).split())
        return cls(text=text, filters=filters)

    def is_empty(self) -> bool:
        return not self.text and not self.filters

"""A member's search as typed: free text and filters (`author:`, `track:`, `in:`, `tag:`,
`year:`).

Parsing knows nothing of an index, so every engine reads the same queries, and a typo in
a filter is refused before any engine is asked. A search written as a sentence is read
as one means it: `papers about graph networks from 2021` is `graph networks year:2021`
(a year after from/in/since/published, a range as 2019-2021 or "2019 to 2021"; the
leading "papers about" is how people ask, not what the papers say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A filter is a field name, a colon and a value: one word, or words in double quotes.
FILTER_PATTERN = re.compile(r'\b(author|track|in|tag|year):(?:"([^"]*)"|(\S+))', re.IGNORECASE)
YEARS = re.compile(r"((?:19|20)\d\d)(?:\s*(?:-|–|to)\s*((?:19|20)\d\d))?")
# "from 2021", "in 2019-2021", "published in 2020", "since 2022" at the end of a sentence.
_YEAR_PHRASE = re.compile(r"\s*\b(?:published\s+)?(from|in|since)\s+(" + YEARS.pattern + r")\s*$", re.IGNORECASE)
_ASKING = re.compile(r"^\s*(?:find\s+|show\s+me\s+)?(?:papers?|works?|articles?)\s+(?:about|on|for)\s+", re.IGNORECASE)
SINCE_TOP = 2100  # "since 2022": up to a year no paper has


class QueryError(ValueError):
    """A query that cannot be run; the message says what to type instead."""


@dataclass
class Query:
    text: str  # the free text, filters removed
    filters: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: str) -> Query:
        raw = _as_filters(raw)
        filters: dict[str, list[str]] = {}
        for match in FILTER_PATTERN.finditer(raw):
            value = (match.group(2) if match.group(2) is not None else match.group(3)).strip()
            if not value:
                raise QueryError(
                    f'{match.group(1)}: needs a value, e.g. {match.group(1)}:"some words"'
                )
            if match.group(1).lower() == "year":
                years_of(value)  # refused here, before any engine is asked
            filters.setdefault(match.group(1).lower(), []).append(value)
        text = " ".join(FILTER_PATTERN.sub(" ", raw).split())
        return cls(text=text, filters=filters)

    def is_empty(self) -> bool:
        return not self.text and not self.filters


def years_of(value: str) -> range:
    """The years `year:VALUE` names: 2021, or a range 2019-2021 (at most a century)."""
    found = YEARS.fullmatch(value.strip())
    if not found:
        raise QueryError(f"year:{value} is not a year: write year:2021 or year:2019-2021")
    low, high = int(found.group(1)), int(found.group(2) or found.group(1))
    if high < low:
        raise QueryError(f"year:{value}: the range runs backwards; write year:{high}-{low}")
    return range(low, high + 1)


def _as_filters(raw: str) -> str:
    """A sentence's year and its "papers about" as the query means them (module docstring)."""
    if FILTER_PATTERN.search(raw) and "year:" in raw.lower():
        return raw  # the filter is written already
    found = _YEAR_PHRASE.search(raw)
    if found and found.start() > 0:
        low, high = found.group(3), found.group(4)
        years = f"{low}-{SINCE_TOP - 1}" if found.group(1).lower() == "since" else f"{low}-{high}" if high else low
        raw = f"{raw[:found.start()]} year:{years}"
    return _ASKING.sub("", raw, count=1) if _ASKING.match(raw) and _ASKING.sub("", raw, count=1).strip() else raw

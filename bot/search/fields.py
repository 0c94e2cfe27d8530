"""The filters a query names (`author:`, `track:`, `in:`, `tag:`, `year:`): what a paper
holds under each, and the reply when a value matches no paper.

Values are compared with case, accents and punctuation ignored (`field_value_key`); an
author is matched word by word, a tag as a whole or by any of its words. Every engine
reads a paper's filters here and refuses a value in the same words, so a filter means
the same whichever engine serves it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from bot.corpus.folding import fold
from bot.corpus.indexed import IndexedPaper

FILTER_FIELDS = ("author", "track", "in", "tag", "year")
# Fields whose values a reply lists when one typed matches nothing ("tracks: Oral, ...");
# author keys are single words of names, which nobody needs listed.
LISTED_FIELDS = ("track", "in", "tag", "year")
LISTED_MAX = 10  # values an unknown filter's reply lists: the most used ones, then "…"
_FIELD_NAMES = {
    "track": ("track", "tracks"),
    "in": ("collection", "collections"),
    "tag": ("tag", "tags"),
    "year": ("paper from", "years"),
}


@lru_cache(maxsize=100_000)
def field_value_key(value: str) -> str:
    """How filter values are compared: case, accents and punctuation ignored. Cached:
    the same author names come back on thousands of papers."""
    return "-".join(re.findall(r"\w+", fold(value)))


def filter_keys(paper: IndexedPaper) -> dict[str, set[str]]:
    tags = {field_value_key(t) for t in paper.tags}
    return {
        "author": {w for name in paper.authors for w in _words(name)},
        "track": {field_value_key(v) for v in (paper.track, paper.award) if v},
        "in": {field_value_key(c) for c in paper.collections},
        "tag": tags.union(*(_words(t) for t in paper.tags)),
        "year": {str(paper.year)} if paper.year else set(),
    }


@lru_cache(maxsize=100_000)
def _words(value: str) -> tuple[str, ...]:
    return tuple(w for w in field_value_key(value).split("-") if w)


def display_names(papers: Iterable[IndexedPaper]) -> dict[str, dict[str, str]]:
    """Per listed field, each key's value as first written ("top-25" -> "top 25%")."""
    names: dict[str, dict[str, str]] = {f: {} for f in LISTED_FIELDS}
    for paper in papers:
        values = {"track": (paper.track, paper.award), "in": paper.collections, "tag": paper.tags,
                  "year": (str(paper.year),) if paper.year else ()}
        for fld, written in values.items():
            for value in written:
                if value:
                    names[fld].setdefault(field_value_key(value), value)
    return names


def unknown_value(fld: str, value: str, counted: Mapping[str, int]) -> str:
    """The reply when a filter's value matches no paper: it names the value and, for
    tracks, collections and tags, lists the values there are (`counted`: each as
    written, with how many papers have it), the most used when there are too many."""
    if fld == "author":
        return f"No author matching `{value}`."
    if fld == "year" and counted:
        years = sorted(counted, key=int)
        return f"No paper from `{value}`; the papers here are from {years[0]} to {years[-1]}."
    one, many = _FIELD_NAMES[fld]
    listed = list(counted.items())
    if not listed:
        return f"No {one} `{value}`; no paper has {many}."
    # The most used values when there are too many to list, shown alphabetically.
    shown = sorted(listed, key=lambda v: -v[1])[:LISTED_MAX]
    names = sorted((name for name, _papers in shown), key=str.casefold)
    more = ", …" if len(listed) > LISTED_MAX else ""
    return f"No {one} `{value}`; {many}: {', '.join(names)}{more}"

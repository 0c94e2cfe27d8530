"""One paper from several sources: each source's own fields, and the one value shown per field.

Every source that names a paper keeps its record's fields (`source_fields`, stored on its
paper_sources row). What the paper shows is recomputed from all of them by `merged`, a
rule that depends only on the sources, never on the order they were imported in:

- sources are taken in (collection, source file, line) order, "the earliest" below, with
  the sources a provider filled in (collection "filled:...", bot/enrich) after all the
  others: they fill what no person or file says, and never overwrite it;
- title: the earliest source's own title; a title derived from an abstract only when no
  source has an own one;
- abstract and authors: the longest (the most names); on a tie, the earliest source's;
  a filled-in source's only when no other source has any;
- url, track, presentation, award, venue, year: the earliest source's that has one;
- tags and notes: every source's, each once, in source order;
- external ids: every source's (one paper is found by any of them), unless another paper
  holds it already; shown, per scheme, the earliest source's (`store.models.Paper.ids`).

So re-importing a source in any order ends in the same paper, and a file cut short and
imported again whole corrects its own fields without touching the other sources'.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

from bot.corpus.records import PaperRecord
from store.models import FILLED_PREFIX, source_order

SourceKey = tuple[str, str, int]  # (collection, source file, line)


class Placed(Protocol):
    """A source: anything with a collection, a source file and a line."""

    @property
    def collection(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def line(self) -> int: ...


Row = TypeVar("Row", bound=Placed)

EARLIEST_WITH_VALUE = ("url", "track", "presentation", "award", "venue", "year")
# The paper's columns the merge rule fills (`merged`): what an import writes and compares,
# and what an export shows.
SHOWN = (
    "title", "title_derived", "authors", "abstract", "url", "track", "presentation", "award",
    "venue", "year", "tags", "notes",
)
# A source's fields, as stored and exported: everything a record says about its paper but
# where it says it (the line is a column of its own); each as it reads when absent.
EMPTY: dict[str, Any] = {
    "title": "", "title_derived": False, "authors": [], "abstract": "", "url": None,
    "track": None, "presentation": None, "award": None, "venue": None, "year": None,
    "tags": [], "notes": [], "external_ids": {},
}


def source_fields(record: PaperRecord) -> dict[str, Any]:
    """The record's fields as plain JSON values, in one canonical form (ids sorted), so
    that the same record always stores, and compares, equal."""
    return {
        "title": record.title,
        "title_derived": record.title_derived,
        "authors": list(record.authors),
        "abstract": record.abstract,
        "url": record.url,
        "track": record.track,
        "presentation": record.presentation,
        "award": record.award,
        "venue": record.venue,
        "year": record.year,
        "tags": list(record.tags),
        "notes": list(record.notes),
        "external_ids": dict(sorted(record.external_ids.items())),
    }


def merged(sources: Iterable[tuple[SourceKey, dict[str, Any]]]) -> dict[str, Any]:
    """The paper's shown fields, but its ids, from its sources' fields (the rule above)."""
    placed = sorted(sources, key=lambda s: source_order(*s[0]))
    if not placed:
        raise ValueError("a paper has at least one source")
    ordered = [{**EMPTY, **fields} for _, fields in placed]
    if len(ordered) == 1:
        return _alone(ordered[0])
    own = sum(1 for (collection, _, _), _ in placed if not collection.startswith(FILLED_PREFIX))
    return _of_several(ordered, own or len(ordered))


def in_merge_order(sources: Iterable[Row]) -> list[Row]:
    """A paper's sources (PaperSource rows, or an import's drafts of them) in the order the
    rule above takes them."""
    # Sorted here, not by the database: PostgreSQL's collation and SQLite's byte order
    # disagree on case and accents, and the export must not depend on the database.
    return sorted(sources, key=lambda s: source_order(s.collection, s.source, s.line))


def _of_several(ordered: list[dict[str, Any]], own: int | None = None) -> dict[str, Any]:
    """`ordered`: the sources in merge order, the first `own` given by a person or a file
    (the rest filled in by a provider; None: none is)."""
    own = len(ordered) if own is None else own
    titled = min(ordered[:own], key=lambda f: f["title_derived"])  # min keeps the first of equals
    values = {
        "title": titled["title"],
        "title_derived": titled["title_derived"],
        # max keeps the first of equals: the earliest source wins a tie
        "abstract": _longest([f["abstract"] for f in ordered], own),
        "authors": [*_longest([f["authors"] for f in ordered], own)],
        "tags": _union(f["tags"] for f in ordered),
        "notes": _union(f["notes"] for f in ordered),
    }
    for name in EARLIEST_WITH_VALUE:
        values[name] = next((f[name] for f in ordered if f[name] not in (None, "")), None)
    return values


def _longest(values: list[Any], own: int) -> Any:
    """The longest of the own sources' values, else of the filled-in sources'."""
    best = max(values[:own], key=len)
    return best if best or own == len(values) else max(values[own:], key=len)


def _alone(fields: dict[str, Any]) -> dict[str, Any]:
    """The rule above for a paper of one source (nearly every paper of a large import),
    without its comparisons: that source's fields, each list once per item."""
    values = {
        "title": fields["title"],
        "title_derived": fields["title_derived"],
        "abstract": fields["abstract"],
        "authors": list(fields["authors"]),
        "tags": list(dict.fromkeys(fields["tags"])),
        "notes": list(dict.fromkeys(fields["notes"])),
    }
    for name in EARLIEST_WITH_VALUE:
        value = fields[name]
        values[name] = None if value == "" else value
    return values


def _union(lists: Iterable[list[str]]) -> list[str]:
    return list(dict.fromkeys(item for items in lists for item in items))

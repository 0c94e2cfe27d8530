"""The export: every paper as one JSON line, the schema `paperclub import` reads back.

A paper is exported as it shows, with its sources in merge order, each carrying only the
fields in which it says something else: importing the export stores the same papers under
the same sources again (bot.corpus.jsonl reads it, bot.corpus.importing stores it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, Any

from bot.corpus.merge import EMPTY, SHOWN, in_merge_order
from store.models import Paper, PaperSource


def write_jsonl(papers: Iterable[Paper], out: IO[str]) -> int:
    """Write each paper as one JSON line; how many were written."""
    count = 0
    for paper in papers:
        out.write(json.dumps(export_record(paper), ensure_ascii=False) + "\n")
        count += 1
    return count


def export_record(paper: Paper) -> dict[str, Any]:
    """The paper as it shows, and its sources in merge order, each with the fields in which
    it says something else than the paper shows: together, everything needed to store
    the same paper again (`jsonl` reads it back)."""
    shown = {"external_ids": paper.ids(), **{name: getattr(paper, name) for name in SHOWN}}
    return {
        "id": paper.id,
        "external_ids": shown["external_ids"],
        "title": paper.title,
        "title_derived": paper.title_derived,
        "authors": paper.authors,
        "abstract": paper.abstract,
        "url": paper.url,
        "track": paper.track,
        "presentation": paper.presentation,
        "award": paper.award,
        "venue": paper.venue,
        "year": paper.year,
        "tags": paper.tags,
        "notes": paper.notes,
        "collections": paper.collections,
        "sources": [_exported_source(s, shown) for s in in_merge_order(paper.sources)],
    }


def _exported_source(source: PaperSource, shown: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "collection": source.collection,
        "source": source.source,
        "line": source.line,
        "format": source.format,
    }
    own = {**EMPTY, **(source.fields or {})}
    differs = {name: value for name, value in own.items() if shown.get(name) != value}
    if differs:
        entry["fields"] = differs
    return entry


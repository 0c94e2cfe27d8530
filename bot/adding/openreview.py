"""OpenReview's API (`/notes?id=`): a forum's note as a PaperRecord.

API v2 (api2.openreview.net) wraps every content field as {"value": ...}; v1 gave plain
values. Both are read.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from bot.corpus import identifiers
from bot.corpus.fetch import json_answer
from bot.corpus.records import PaperRecord, clean_space

_YEAR = re.compile(r"(?<!\d)(19|20)\d{2}(?!\d)")
# A venue of a submission still under review, or withdrawn, says so: not where it appeared.
_NOT_A_VENUE = re.compile(r"submitted|withdrawn|desk rejected", re.I)


class NotANote(ValueError):
    """No note in the answer (an unknown id answers with an empty list)."""


def parse_notes(body: str, forum: str) -> PaperRecord:
    try:
        answer = json_answer(body)  # strict, and nesting past reason is refused, not a RecursionError
    except ValueError as problem:
        raise NotANote(str(problem)) from None
    notes = answer.get("notes") if isinstance(answer, dict) else None
    if not notes or not isinstance(notes[0], dict):
        raise NotANote(f"no note {forum}")
    note = notes[0]
    held = note.get("content")
    content: dict[str, Any] = held if isinstance(held, dict) else {}
    title = clean_space(str(_value(content, "title") or ""))
    if not title:
        raise NotANote(f"note {forum} has no title")
    venue = clean_space(str(_value(content, "venue") or ""))
    forum_id = str(note.get("forum") or note.get("id") or forum)
    return PaperRecord(
        title=title,
        authors=[clean_space(str(a)) for a in _value(content, "authors") or [] if str(a).strip()],
        abstract=clean_space(str(_value(content, "abstract") or "")),
        url=f"https://openreview.net/forum?id={forum_id}",
        external_ids=identifiers.normalise_ids({identifiers.OPENREVIEW: forum_id}),
        venue=venue if venue and not _NOT_A_VENUE.search(venue) else None,
        year=_year(venue, note),
    )


def _value(content: dict[str, Any], name: str) -> Any:
    field = content.get(name)
    return field.get("value") if isinstance(field, dict) else field


def _year(venue: str, note: dict[str, Any]) -> int | None:
    found = _YEAR.search(venue)
    if found:
        return int(found.group())
    stamp = note.get("pdate") or note.get("cdate") or note.get("tcdate")
    if isinstance(stamp, int | float) and stamp > 0:
        return datetime.fromtimestamp(stamp / 1000, timezone.utc).year
    return None

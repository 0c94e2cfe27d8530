"""arXiv's API, as a category follow reads it: the entries submitted in a window, newest
last, paged with start/max_results by the polite fetcher (bot.corpus.fetch), each read
with the Atom reader (bot.corpus.arxiv_atom) and kept with its submission time.

    search_query=cat:cs.LG AND submittedDate:[202611250000 TO 202611260000]
                 (AND all:"retrieval augmented" for a follow with a query)

arXiv announces new submissions Sunday to Thursday evenings (US Eastern): an entry
appears in the API a day or more after its submission time, and all entries submitted
before an announcement's cut-off appear together. So a follow's high-water mark is the
latest submission time it has seen, not the clock: what was submitted after it but not
yet announced is asked for again next time, and nothing is missed.

This is the one place that checks what arXiv answers for a follow: an entry the library
could not store (no title, a title of thousands of characters, no submission time) is
skipped with why, and the others kept; the skipped entries' times still move the mark,
so a bad entry is not asked for every day.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import urlencode

from bot.cards.collection_names import arxiv_categories
from bot.corpus import arxiv_atom, identifiers
from bot.corpus.fetch import ATOM, Fetcher
from bot.corpus.records import CorpusFormatError, PaperRecord, check_record


@dataclass
class Entry:
    record: PaperRecord
    submitted: datetime  # the first version's submission time (Atom <published>), UTC


@dataclass
class Listing:
    """What a window holds: the entries, oldest first; those skipped, as (arXiv id, why);
    the latest submission time seen (the skipped entries' included); and whether that is
    all of them (False when the fetcher's cap cut the listing short)."""

    entries: list[Entry] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    newest: datetime | None = None
    complete: bool = True


def categories() -> dict[str, str]:
    """arXiv's category taxonomy, id -> name (bot/cards/arxiv_categories.json: cards name
    the follows' collections by it too)."""
    return dict(arxiv_categories())


def query(category: str, words: str, start: datetime, end: datetime) -> str:
    """The search_query for a category (and words) submitted in [start, end] (GMT)."""
    window = f"submittedDate:[{start:%Y%m%d%H%M} TO {end:%Y%m%d%H%M}]"
    text = f"cat:{category} AND {window}"
    if words:
        text += f' AND all:"{words}"' if " " in words else f" AND all:{words}"
    return text


class ArxivListing:
    def __init__(self, api_url: str, fetcher: Fetcher):
        self.api_url = api_url
        self.fetcher = fetcher

    def url(self, category: str, words: str, start: datetime, end: datetime) -> str:
        params = {"search_query": query(category, words, start, end), "sortBy": "submittedDate",
                  "sortOrder": "ascending", "max_results": self.fetcher.policy.max_entries}
        return f"{self.api_url}?{urlencode(params, safe=':[]')}"

    def entries(self, category: str, words: str, start: datetime, end: datetime,
                deadline: float | None = None) -> Listing:
        """The entries submitted in the window, oldest first, with those skipped; the
        pages read by `deadline` (time.monotonic()), the listing cut short there."""
        pages = self.fetcher.fetch(self.url(category, words, start, end), deadline)
        listing = Listing()
        seen = 0
        total = None
        for number, page in enumerate(pages, 1):
            where = f"arXiv API page {number}"
            if page.entries is None:
                raise CorpusFormatError(where, 1, f"not an Atom feed ({page.body[:60]!r})")
            if page.entries == 0:
                continue
            text = page.body.decode("utf-8", "replace")
            records = arxiv_atom.read_entries(text, where)
            facts = _facts(text, where)
            if len(facts) != len(records):
                raise CorpusFormatError(where, 1, "the feed's entries could not be told apart")
            for record, (entry_id, submitted, problem) in zip(records, facts, strict=True):
                if submitted is not None:
                    listing.newest = max(listing.newest or submitted, submitted)
                reason = problem or _unstorable(record, where)
                if reason or submitted is None or isinstance(record, CorpusFormatError):
                    listing.skipped.append((entry_id, reason or "unreadable"))
                else:
                    listing.entries.append(Entry(record, submitted))
            seen += len(records)
            total = page.total if page.total is not None else total
        listing.complete = total is None or seen >= total
        return listing


def _unstorable(record: PaperRecord | CorpusFormatError, where: str) -> str:
    """Why the library could not store this entry ("" when it can)."""
    if isinstance(record, CorpusFormatError):
        return record.message
    try:
        check_record(record, where)
    except CorpusFormatError as problem:
        return problem.message
    return ""


def _facts(text: str, where: str) -> list[tuple[str, datetime | None, str]]:
    """Each entry's arXiv id (or its place), submission time, and what is wrong with the
    time ("" when nothing)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as problem:
        raise CorpusFormatError(where, 1, f"broken XML ({problem})") from None
    found: list[tuple[str, datetime | None, str]] = []
    for place, entry in enumerate(root.findall(f"{ATOM}entry"), 1):
        given = (entry.findtext(f"{ATOM}id") or "").strip()
        parsed = identifiers.parse(given) if given and len(given) < 300 else None
        entry_id = parsed[1] if parsed and parsed[0] == identifiers.ARXIV else f"entry {place} of {where}"
        raw = (entry.findtext(f"{ATOM}published") or "").strip()
        try:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            found.append((entry_id, None, f"a <published> time that is not one: {raw[:40]!r}"))
            continue
        found.append((entry_id, moment.astimezone(timezone.utc) if moment.tzinfo
                      else moment.replace(tzinfo=timezone.utc), ""))
    return found

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
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from urllib.parse import urlencode

from bot.corpus import arxiv_atom
from bot.corpus.fetch import ATOM, Fetcher
from bot.corpus.records import CorpusFormatError, PaperRecord


@dataclass
class Entry:
    record: PaperRecord
    submitted: datetime  # the first version's submission time (Atom <published>), UTC


def categories() -> dict[str, str]:
    """arXiv's category taxonomy, id -> name (bot/follows/arxiv_categories.json)."""
    text = resources.files("bot.follows").joinpath("arxiv_categories.json").read_text(encoding="utf-8")
    return {row["id"]: row["name"] for row in json.loads(text)}


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

    def entries(self, category: str, words: str, start: datetime, end: datetime) -> tuple[list[Entry], bool]:
        """The entries submitted in the window, oldest first, and whether that is all of
        them (False when the fetcher's cap cut the listing short)."""
        pages = self.fetcher.fetch(self.url(category, words, start, end))
        found: list[Entry] = []
        total = None
        for number, page in enumerate(pages, 1):
            where = f"arXiv API page {number}"
            if page.entries is None:
                raise CorpusFormatError(where, 1, f"not an Atom feed ({page.body[:60]!r})")
            if page.entries == 0:
                continue
            text = page.body.decode("utf-8", "replace")
            records = arxiv_atom.parse(text, where)
            times = _submitted(text, where)
            if len(times) != len(records):
                raise CorpusFormatError(where, 1, "entries without a <published> time")
            found += [Entry(r, t) for r, t in zip(records, times, strict=True)]
            total = page.total if page.total is not None else total
        complete = total is None or len(found) >= total
        return found, complete


def _submitted(text: str, where: str) -> list[datetime]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as problem:
        raise CorpusFormatError(where, 1, f"broken XML ({problem})") from None
    times = []
    for entry in root.findall(f"{ATOM}entry"):
        raw = (entry.findtext(f"{ATOM}published") or "").strip()
        try:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            raise CorpusFormatError(where, 1, f"a <published> time that is not one: {raw[:40]!r}") from None
        times.append(moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc))
    return times

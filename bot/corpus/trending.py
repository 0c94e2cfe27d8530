"""A "trending papers" page copied as text: title and abstract lines alternate.

The page's own chrome (the "new" badge, the newsletter box, the "byAK" credit, the date
header) may appear anywhere and is skipped.
"""

from __future__ import annotations

import re

from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space
from bot.corpus.text import numbered_lines

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_CHROME = re.compile(
    r"^(?:new|subscribe|get trending papers in your email inbox!?"
    r"|by\s*ak and the research community|(?:trending|daily) papers"
    rf"|{_MONTH} \d{{1,2}}(?:,? \d{{4}})?)$",
    re.I,
)
_SIGNATURE = re.compile(r"^get trending papers\b", re.I | re.M)
# Titles here are at most a couple of lines' worth and always shorter than their
# abstract; anything else means a title or an abstract is missing and the pairs slipped.
_TITLE_MAX = 300


def looks_like(text: str) -> bool:
    return bool(_SIGNATURE.search(text))


def parse(text: str, path: str) -> list[PaperRecord]:
    lines = [(n, clean_space(line)) for n, line in numbered_lines(text)]
    content = [(n, line) for n, line in lines if not _CHROME.match(line)]
    records = []
    for i in range(0, len(content), 2):
        line, title = content[i]
        abstract = content[i + 1][1] if i + 1 < len(content) else None
        if len(title) > _TITLE_MAX or (abstract is not None and len(abstract) < len(title)):
            raise CorpusFormatError(
                path, line, "expected a paper title, found a paragraph; is a line missing?"
            )
        if abstract is None:
            raise CorpusFormatError(
                path, line, f"title {title[:60]!r} has no abstract; is the file truncated?"
            )
        records.append(PaperRecord(title=title, line=line, abstract=abstract))
    return records

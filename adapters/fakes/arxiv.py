"""A fake arXiv API (export.arxiv.org/api/query) on 127.0.0.1: Atom feeds as arXiv
writes them, with opensearch:totalResults and start/max_results paging, for queries of
the form the follows send:

    cat:cs.LG AND submittedDate:[202611250000 TO 202611260000] [AND all:"words"]

Papers are visible once "announced": `announced_through` (None: all) hides what was
submitted after it, as the real listing does until the evening announcement."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from xml.sax.saxutils import escape, quoteattr

from adapters.fakes.http import Answer, FakeServer

_CATEGORY = re.compile(r"cat:(\S+)")
_WINDOW = re.compile(r"submittedDate:\[(\d{12}) TO (\d{12})\]")
_WORDS = re.compile(r'all:(?:"([^"]*)"|(\S+))')


@dataclass
class ArxivPaper:
    id: str  # 2611.01234
    title: str
    abstract: str
    submitted: datetime
    categories: list[str]
    authors: list[str] = field(default_factory=lambda: ["Ada Lovelace"])
    doi: str | None = None


class FakeArxiv(FakeServer):
    def __init__(self, papers: list[ArxivPaper] | None = None):
        self.papers = list(papers or [])
        self.announced_through: datetime | None = None
        super().__init__(self.answer)

    @property
    def url(self) -> str:
        return f"{self.base}/api/query"

    def queries(self) -> list[dict[str, str]]:
        """Each request's parameters (first values)."""
        return [{k: v[0] for k, v in params.items()} for path, params in self.requests if path == "/api/query"]

    def answer(self, path: str, params: dict[str, list[str]]) -> Answer:
        if path != "/api/query":
            return 404, "text/plain", b"not found"
        query = params.get("search_query", [""])[0]
        start = int(params.get("start", ["0"])[0])
        size = int(params.get("max_results", ["10"])[0])
        found = sorted(self._matching(query), key=lambda p: (p.submitted, p.id))
        if params.get("sortOrder", ["descending"])[0] == "descending":
            found.reverse()
        return 200, "application/atom+xml; charset=utf-8", feed(query, found[start:start + size], len(found), start,
                                                                 size).encode()

    def _matching(self, query: str) -> list[ArxivPaper]:
        category = _CATEGORY.search(query)
        window = _WINDOW.search(query)
        words = _WORDS.search(query)
        wanted = (words.group(1) or words.group(2)).lower().split() if words else []
        low, high = ((datetime.strptime(w, "%Y%m%d%H%M").replace(tzinfo=timezone.utc) for w in window.groups())
                     if window else (None, None))
        out = []
        for paper in self.papers:
            moment = paper.submitted.replace(second=0, microsecond=0)
            if self.announced_through and paper.submitted > self.announced_through:
                continue
            if category and category.group(1) not in paper.categories:
                continue
            if low and not low <= moment <= high:
                continue
            text = f"{paper.title} {paper.abstract}".lower()
            if any(w not in text for w in wanted):
                continue
            out.append(paper)
        return out


def feed(query: str, papers: list[ArxivPaper], total: int, start: int, size: int) -> str:
    entries = "".join(_entry(p) for p in papers)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/fake</id>
  <title>arXiv Query: search_query={escape(query)}&amp;start={start}&amp;max_results={size}</title>
  <updated>2026-11-26T00:00:00Z</updated>
  <link href="https://arxiv.org/api/query" rel="self" type="application/atom+xml"/>
  <opensearch:itemsPerPage>{size}</opensearch:itemsPerPage>
  <opensearch:totalResults>{total}</opensearch:totalResults>
  <opensearch:startIndex>{start}</opensearch:startIndex>{entries}
</feed>
"""


def _entry(paper: ArxivPaper) -> str:
    when = paper.submitted.strftime("%Y-%m-%dT%H:%M:%SZ")
    categories = "".join(f'\n    <category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>'
                         for c in paper.categories)
    authors = "".join(f"\n    <author>\n      <name>{escape(a)}</name>\n    </author>" for a in paper.authors)
    doi = f"\n    <arxiv:doi>{escape(paper.doi)}</arxiv:doi>" if paper.doi else ""
    return f"""
  <entry>
    <id>http://arxiv.org/abs/{paper.id}v1</id>
    <title>{escape(paper.title)}</title>
    <updated>{when}</updated>
    <link href="https://arxiv.org/abs/{paper.id}v1" rel="alternate" type="text/html"/>
    <link href="https://arxiv.org/pdf/{paper.id}v1" rel="related" type="application/pdf" title="pdf"/>
    <summary>{escape(paper.abstract)}</summary>{categories}
    <published>{when}</published>
    <arxiv:primary_category term={quoteattr(paper.categories[0])}/>{authors}{doi}
  </entry>"""

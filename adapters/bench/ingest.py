"""`paperclub bench-ingest`: a day of new papers for many follows, from fakes of arXiv and
OpenAlex on loopback, ingested by the follows' tick and made searchable.

The papers are the realistic benchmark corpus's (a vocabulary that keeps growing, as
real abstracts' does: adapters/bench/search/realistic.py), dealt out to arXiv categories
and OpenAlex authors. Setup (the demo corpus, its index, the channels and follows) is
not timed; the ingest is, up to the search index being current with every new paper.
The fakes answer at once and the host spacing is off: the figure is paperclub's own
work (fetching, parsing, importing, arrivals, indexing), not arXiv's 3 s between requests,
which a real day spreads over many ticks.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from itertools import islice
from pathlib import Path

from adapters.bench.search.realistic import RealisticCorpus
from adapters.console import ConsoleSession
from adapters.fakes.arxiv import ArxivPaper, FakeArxiv
from adapters.fakes.openalex import FakeAuthor, FakeOpenAlex, FakeWork
from bot.app import build_services
from bot.corpus.fetch import Fetcher, FetchPolicy, HostLimiter
from bot.follows.arxiv import categories
from bot.follows.clients import FollowClients, FollowUrls
from store import Database

NOW = datetime(2026, 11, 26, 7, 0, tzinfo=timezone.utc)
PER_CHANNEL = 4  # follows per channel


@dataclass
class IngestBenchResult:
    database: str
    follows: int
    papers: int
    arrived: int
    requests: int
    seconds: float
    searchable: bool

    def line(self) -> str:
        return (f"{self.database}: {self.arrived:,} papers from {self.follows} follows ({self.requests} requests) "
                f"ingested and searchable in {self.seconds:.1f} s "
                f"({self.arrived / self.seconds if self.seconds else 0:,.0f} papers/s); "
                f"every new paper searchable: {'yes' if self.searchable else 'NO'}")


def run_ingest_bench(url: str | None, papers: int = 2000, follows: int = 100,
                     author_share: float = 0.2) -> IngestBenchResult:
    authors = max(1, round(follows * author_share))
    arxiv_follows = follows - authors
    listing, works, people = _day(papers, arxiv_follows, authors)
    with tempfile.TemporaryDirectory(prefix="paperclub-bench-ingest-") as tmp, \
            FakeArxiv(listing) as arxiv, FakeOpenAlex(works, people) as openalex:
        url = url or f"sqlite:///{Path(tmp, 'bench.db')}"
        schema = Database(url)
        schema.upgrade()
        schema.dispose()
        fetcher = Fetcher(FetchPolicy(max_entries=2000, page_size=100), limiter=HostLimiter(0.0),
                          sleep=lambda _s: None)
        clients = FollowClients(FollowUrls(arxiv.url, openalex.base, "bench@example.org"), fetcher, fetcher)
        services = build_services(url, clock=lambda: NOW, given=[clients])
        _demo_corpus(services)
        wanted = sorted({p.categories[0] for p in listing})
        _follow(services, [f"follow arxiv {c}" for c in wanted] + [f"follow author {a.id}" for a in people])
        ingest = services.feature("follows").ingest
        ingest.budget = float("inf")  # one tick does the whole day here
        before = len(arxiv.requests) + len(openalex.requests)
        start = time.perf_counter()
        counts = ingest.tick(NOW)
        seconds = time.perf_counter() - start
        index = services.search.current()
        sample = [services.library.find(f"arXiv:{p.id}") for p in listing[:: max(1, len(listing) // 50)]]
        searchable = all(p is not None and index.title(p.id) is not None for p in sample)
        result = IngestBenchResult(services.db.engine.dialect.name, len(wanted) + len(people), papers,
                                   counts["papers_arrived"], len(arxiv.requests) + len(openalex.requests) - before,
                                   seconds, searchable)
        services.db.dispose()
        return result


def _day(papers: int, arxiv_follows: int, authors: int):
    """The day's papers: four in five on arXiv, dealt to `arxiv_follows` categories; the
    rest OpenAlex works by `authors` people."""
    corpus = RealisticCorpus.from_seeds()
    ids = sorted(categories())[:arxiv_follows]
    people = [FakeAuthor(f"A5{n:09d}", f"Author Number{n}", "Some University", 100) for n in range(authors)]
    listing, works = [], []
    on_arxiv = round(papers * arxiv_follows / (arxiv_follows + authors))
    for n, paper in enumerate(islice(corpus.papers(papers), papers)):
        title, _, abstract = paper.text.partition("\n")
        when = NOW - timedelta(hours=20) + timedelta(seconds=20 * n)
        if n < on_arxiv:
            listing.append(ArxivPaper(f"2611.{n:05d}", title, abstract, when, [ids[n % len(ids)]],
                                      list(paper.authors)[:5]))
        else:
            works.append(FakeWork(f"W49{n:08d}", title, abstract, f"{when:%Y-%m-%d}", [people[n % authors]],
                                  doi=f"10.5555/bench.{n}"))
    return listing, works, people


def _demo_corpus(services) -> None:
    corpus = resources.files("bot") / "demo_corpus"
    for name in ("iclr2021-openreview.md", "iclr2023-poster-session.txt", "trending-papers.txt"):
        with resources.as_file(corpus / name) as path:
            services.library.import_file(Path(path))
    services.search.current()  # a running process has its index already


def _follow(services, lines: list[str]) -> None:
    for n, line in enumerate(lines):
        session = ConsoleSession(services.core, channel=f"bench-{n // PER_CHANNEL}", user="bench", manager=True)
        reply = session.send(line)
        if not reply.ok:
            raise RuntimeError(f"{line}: {reply.text}")

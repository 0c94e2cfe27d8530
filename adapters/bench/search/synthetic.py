"""Deterministic synthetic corpora and queries resampled from the seed documents.

A synthetic paper takes a seed title, four to ten sentences drawn from all the seed
abstracts and reviewer notes, and one to six seed authors. One random stream per corpus
seed makes the first 10k papers of the 1M corpus the 10k corpus, so sizes are nested.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from bot.corpus.indexed import IndexedPaper
from bot.corpus.readers import read_path
from bot.corpus.records import PaperRecord
from bot.search.tokens import STOP_WORDS

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
COLLECTIONS = ("arxiv-cs-lg", "arxiv-cs-cl", "arxiv-cs-cv", "arxiv-stat-ml")


def seed_records() -> list[PaperRecord]:
    records: list[PaperRecord] = []
    corpus = resources.files("bot") / "demo_corpus"
    for name in sorted(p.name for p in corpus.iterdir()):
        with resources.as_file(corpus / name) as path:
            records.extend(read_path(Path(path))[1])
    return records


@dataclass(frozen=True)
class SeedPools:
    titles: list[str]
    sentences: list[str]
    authors: list[str]
    tracks: list[str]
    topics: list[str]  # short topic phrases: the seed tags and the titles' common phrases

    @classmethod
    def from_records(cls, records: list[PaperRecord]) -> SeedPools:
        sentences = [
            s.strip()
            for r in records
            for text in (r.abstract, *r.notes)
            for s in _SENTENCE_END.split(" ".join(text.split()))
            if len(s.split()) >= 4
        ]
        return cls(
            titles=sorted({r.title for r in records if not r.title_derived}),
            sentences=sentences,
            authors=sorted({a for r in records for a in r.authors}),
            tracks=sorted({r.track for r in records if r.track}),
            topics=sorted(
                {t for r in records for t in r.tags}
                | set(_common_phrases(r.title for r in records))
            ),
        )


def _common_phrases(titles: Iterable[str], count: int = 200) -> list[str]:
    """The most frequent two- and three-word runs of title words ("graph neural networks",
    "language models"): how members name a topic."""
    counts: Counter[str] = Counter()
    for title in titles:
        words = re.findall(r"[a-z][a-z-]+", title.lower())
        for n in (2, 3):
            for i in range(len(words) - n + 1):
                run = words[i : i + n]
                if not any(w in STOP_WORDS for w in run):
                    counts[" ".join(run)] += 1
    return [phrase for phrase, seen in counts.most_common(count) if seen > 1]


def synthetic_papers(size: int, pools: SeedPools, seed: int = 2024) -> Iterator[IndexedPaper]:
    """`size` papers, streamed (a million do not fit comfortably as objects)."""
    rng = random.Random(seed)
    for paper_id in range(1, size + 1):
        title = rng.choice(pools.titles)
        abstract = " ".join(rng.choices(pools.sentences, k=rng.randint(4, 10)))
        yield IndexedPaper(
            paper_id=paper_id,
            title=title,
            text=f"{title}\n{abstract}",
            authors=tuple(rng.choices(pools.authors, k=rng.randint(1, 6))),
            track=rng.choice(pools.tracks),
            collections=(rng.choice(COLLECTIONS),),
        )


def bench_queries(pools: SeedPools, count: int = 300, seed: int = 7) -> list[str]:
    """What members type: titles as half-remembered (lower case, a word dropped) for two
    thirds, topic phrases for the rest."""
    rng = random.Random(seed)
    queries = []
    for i in range(count):
        if i % 3 == 2 and pools.topics:
            queries.append(rng.choice(pools.topics).lower())
            continue
        words = re.sub(r"[^\w\s-]", " ", rng.choice(pools.titles).lower()).split()
        if len(words) > 3:
            del words[rng.randrange(len(words))]
        queries.append(" ".join(words))
    return queries


def parse_size(text: str) -> int:
    """ "10k" -> 10000, "1M" -> 1000000, "2500" -> 2500."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not match:
        raise ValueError(f"not a corpus size: {text!r} (e.g. 10k, 100k, 1M)")
    factor = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(float(match.group(1)) * factor)


def size_label(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1_000_000 and size % 100_000 == 0:  # all of arXiv: 2.6M
        return f"{size / 1_000_000:.1f}M"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return str(size)

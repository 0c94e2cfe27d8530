"""A benchmark corpus whose vocabulary keeps growing, as real abstracts' does.

Resampling the seed sentences stops at about 8,000 distinct words whatever the size;
real text follows Heaps' law. SciFact's 5,183 abstracts (title and text, lower-cased
\\w+ words) hold 35,954 distinct words, and its growth fits V = 26.7 * n ** 0.516 for n
words. This generator draws words so that its corpora follow that curve:

- a head of the 100 most frequent seed words (the function words) takes 40% of the
  tokens with Zipf weights 1/r, as SciFact's top 100 words do;
- the tail is a Zipf-Mandelbrot law, P(rank >= x) = ((x + Q) / (1 + Q)) ** (1 - S),
  sampled by its inverse (no vocabulary array: the tail is unbounded); S and Q are fitted
  so that head plus tail match SciFact's curve from 10^5 to 2 * 10^8 words;
- topical co-occurrence: tail ranks are dealt round-robin to TOPICS topics, and most of
  a paper's tail words come from the two or three topics it is about (a word drawn at
  some frequency level is moved to the paper's topic at the same level, which keeps
  every word's overall frequency);
- ranks map to the seed corpus's own words by frequency, then to pronounceable
  generated words ("tavoremin") for the rare tail.

Papers come in chunks of CHUNK, each from its own random stream (seed, chunk number):
a corpus is the same whatever it is generated for, and the first 10k papers of the
100k corpus are the 10k corpus. Everything inside a chunk is vectorised with numpy.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import IO

import numpy as np

from bot.corpus.indexed import IndexedPaper

CHUNK = 1_000
HEAD = 100  # function words, Zipf weights 1/r
HEAD_SHARE = 0.40  # SciFact's top 100 words are 40% of its tokens
S, Q = 1.95, 504.0  # the tail's Zipf-Mandelbrot law, fitted on SciFact's growth
TOPICS = 40
OWN_TOPIC = 0.75  # share of a paper's tail words drawn from its own topics
ABSTRACT_WORDS = (190, 45)  # mean and spread of an abstract's length in words
TITLE_WORDS = (6, 12)
SENTENCE_WORDS = 22
SURNAMES = 50_000
TABLE = 1 << 16  # ranks whose words are made up front (99% of the tokens)
REPEATED_POOL = 100  # the titles repeats share ("Editorial", "Reply"), Zipf weights
COLLECTIONS = ("arxiv-cs-lg", "arxiv-cs-cl", "arxiv-cs-cv", "arxiv-stat-ml")
HEAPS_K, HEAPS_BETA = 26.7, 0.516  # SciFact: distinct words = K * words ** beta

_WORD = re.compile(r"\w+")
_CONSONANTS = "bcdfghklmnprstvz"
_VOWELS = "aeiou"
# Endings of made-up words (the first: none).
_ENDINGS = ("", "n", "r", "s", "l", "x", "m", "t", "ne", "in", "ol", "ase", "ide", "ium", "ene")


@dataclass(frozen=True)
class RealisticCorpus:
    """A recipe: the same (words, seed, repeat share) give the same papers."""

    words: tuple[str, ...]  # real words by frequency, the head first
    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    seed: int = 2024
    repeated_titles: float = 0.0  # the share of papers whose title is a common one

    @classmethod
    def from_seeds(cls, seed: int = 2024, repeated_titles: float = 0.0) -> RealisticCorpus:
        from adapters.bench.search.synthetic import seed_records

        records = seed_records()
        counts: Counter[str] = Counter()
        for r in records:
            for text in (r.title, r.abstract, *r.notes):
                counts.update(w for w in _WORD.findall(text.lower()) if w[0].isalpha())
        names = [a.split() for r in records for a in r.authors if len(a.split()) >= 2]
        # Surnames by how often the seeds name them: the Zipf draw favours the first.
        surnames = Counter(n[-1] for n in names if n[-1].isalpha() and not n[-1].isupper())
        return cls(
            words=tuple(w for w, _n in counts.most_common()),
            first_names=tuple(sorted({n[0] for n in names if n[0].isalpha()})),
            last_names=tuple(w for w, _n in surnames.most_common()),
            seed=seed,
            repeated_titles=repeated_titles,
        )

    # --- words ---------------------------------------------------------------------

    def word(self, rank: int) -> str:
        """The word at a 0-based frequency rank: a seed word, then a made-up one."""
        if rank < len(self.words):
            return self.words[rank]
        return _made_up(rank - len(self.words))

    @cached_property
    def _topic_cdf(self) -> np.ndarray:
        # Topics differ in popularity (a mild Zipf), as fields of research do.
        weights = 1.0 / np.arange(10, TOPICS + 10) ** 0.7
        return np.cumsum(weights) / weights.sum()

    def topic_words(self, topic: int, count: int) -> list[str]:
        """A topic's most frequent words: the tail ranks dealt to it."""
        return [self.word(HEAD + level * TOPICS + topic) for level in range(count)]

    def _ranks(
        self, rng: np.random.Generator, topics: np.ndarray, head_share: float, own: float
    ) -> np.ndarray:
        """One word rank per entry of `topics` (the topic each word's paper would draw from)."""
        size = len(topics)
        tail = rng.random(size, dtype=np.float32) >= head_share
        ranks = np.empty(size, dtype=np.int64)
        # The head: P(rank k) = log((k + 2) / (k + 1)) / log(HEAD + 1), about 1 / (k + 1.5).
        head = rng.random(size - int(tail.sum()), dtype=np.float32)
        head_ranks = np.exp(head * np.float32(np.log(HEAD + 1))).astype(np.int64) - 1
        ranks[~tail] = np.minimum(head_ranks, HEAD - 1)  # float32 rounding must not leave it
        u = rng.random(int(tail.sum()))
        # Inverse of the tail's survival function; float64 keeps ranks exact to 2**53.
        x = (1.0 + Q) * (1.0 - u) ** (-1.0 / (S - 1.0)) - Q
        index = np.minimum(x, 2.0**52).astype(np.int64) - 1
        moved = rng.random(len(index), dtype=np.float32) < own
        index[moved] = (index[moved] // TOPICS) * TOPICS + topics[tail][moved]
        ranks[tail] = HEAD + index
        return ranks

    # --- papers --------------------------------------------------------------------

    def papers(self, size: int) -> Iterator[IndexedPaper]:
        """The first `size` papers, streamed, numbered from 1."""
        for chunk in range((size + CHUNK - 1) // CHUNK):
            for paper in self._chunk(chunk):
                if paper.paper_id > size:
                    return
                yield paper

    def papers_after(self, size: int, count: int) -> Iterator[IndexedPaper]:
        """Papers size+1 to size+count, without making the first `size` again."""
        for chunk in range(size // CHUNK, (size + count + CHUNK - 1) // CHUNK):
            for paper in self._chunk(chunk):
                if size < paper.paper_id <= size + count:
                    yield paper

    def _chunk(self, chunk: int) -> list[IndexedPaper]:
        rng = np.random.default_rng([self.seed, chunk])
        n = CHUNK
        # Each paper is about one to three topics; its first topic weighs most.
        topic_count = rng.choice([1, 2, 3], size=n, p=[0.3, 0.45, 0.25])
        topics = np.searchsorted(self._topic_cdf, rng.random((n, 3)))

        def own_topics(lengths: np.ndarray) -> np.ndarray:
            # For each word, one of its paper's topics, the first one the likeliest.
            paper = np.repeat(np.arange(n), lengths)
            count = topic_count[paper]
            u = rng.random(len(paper), dtype=np.float32)
            slot = np.minimum((u * u * count).astype(np.int64), count - 1)
            return topics.ravel()[paper * 3 + slot]

        title_lengths = rng.integers(TITLE_WORDS[0], TITLE_WORDS[1] + 1, size=n)
        abstract_lengths = np.clip(rng.normal(*ABSTRACT_WORDS, size=n), 60, 420).astype(np.int64)
        title_ranks = self._ranks(rng, own_topics(title_lengths), head_share=0.2, own=0.9)
        text_ranks = self._ranks(
            rng, own_topics(abstract_lengths), head_share=HEAD_SHARE, own=OWN_TOPIC
        )
        repeat = rng.random(n) < self.repeated_titles
        common = np.searchsorted(self._common_cdf, rng.random(n))
        sentence_ends = (
            rng.random(int(abstract_lengths.sum()), dtype=np.float32) < 1.0 / SENTENCE_WORDS
        )
        author_counts = np.minimum(rng.geometric(0.35, size=n), 12)
        firsts = rng.integers(0, len(self.first_names), size=int(author_counts.sum()))
        lasts = _zipf_ranks(rng, int(author_counts.sum()), len(self._surnames))
        tracks = rng.integers(0, len(COLLECTIONS), size=n)

        titles = _as_sentences(self._strings(title_ranks), title_lengths, np.zeros(0, dtype=bool))
        abstracts = _as_sentences(self._strings(text_ranks), abstract_lengths, sentence_ends)
        names = (
            np.array(self.first_names, dtype=object)[firsts] + " " + self._surnames[lasts]
        ).tolist()
        author_ends = np.cumsum(author_counts).tolist()
        author_counts, tracks, repeat, common = (
            a.tolist() for a in (author_counts, tracks, repeat, common)
        )
        papers = []
        for i in range(n):
            title = self.common_titles[common[i]] if repeat[i] else titles[i]
            papers.append(
                IndexedPaper(
                    paper_id=chunk * CHUNK + i + 1,
                    title=title,
                    text=f"{title}\n{abstracts[i]}",
                    authors=tuple(names[author_ends[i] - author_counts[i] : author_ends[i]]),
                    collections=(COLLECTIONS[tracks[i]],),
                )
            )
        return papers

    def _strings(self, ranks: np.ndarray) -> np.ndarray:
        """The words at `ranks`: frequent ones from a table, rare ones made once and kept."""
        words = np.empty(len(ranks), dtype=object)
        common = ranks < len(self._table)
        words[common] = self._table[ranks[common]]
        rare, inverse = np.unique(ranks[~common], return_inverse=True)
        cache = self._rare
        made = [cache.get(r) or cache.setdefault(r, self.word(r)) for r in rare.tolist()]
        words[~common] = np.array(made, dtype=object)[inverse] if made else []
        return words

    @cached_property
    def _table(self) -> np.ndarray:
        return np.array([self.word(r) for r in range(TABLE)], dtype=object)

    @cached_property
    def _rare(self) -> dict[int, str]:
        return {}

    @cached_property
    def _surnames(self) -> np.ndarray:
        """Authors' surnames: the seeds', then made-up ones, SURNAMES in all."""
        made = (_made_up(i).capitalize() for i in range(SURNAMES - len(self.last_names)))
        return np.array([*self.last_names, *made], dtype=object)

    @cached_property
    def common_titles(self) -> list[str]:
        """The titles repeated papers share, from a stream of their own."""
        rng = np.random.default_rng([self.seed, 2**31])
        lengths = rng.integers(TITLE_WORDS[0], TITLE_WORDS[1] + 1, size=REPEATED_POOL)
        topics = np.repeat(np.searchsorted(self._topic_cdf, rng.random(REPEATED_POOL)), lengths)
        words = self._strings(self._ranks(rng, topics, head_share=0.2, own=0.9))
        return _as_sentences(words, lengths, np.zeros(0, dtype=bool))

    @cached_property
    def _common_cdf(self) -> np.ndarray:
        weights = 1.0 / np.arange(1, REPEATED_POOL + 1)
        return np.cumsum(weights) / weights.sum()

    # --- queries -------------------------------------------------------------------

    def queries(self, count: int = 200, among: int = 10_000, seed: int = 7) -> list[str]:
        """What members type: half-remembered titles of the first `among` papers (some
        words of the title, perhaps one dropped or replaced) for half, topic phrases
        (two or three of a topic's top words) for the rest."""
        rng = np.random.default_rng(seed)
        titles = [p.title for p in self.papers(among)]
        queries = []
        for i in range(count):
            if i % 2:
                topic = int(np.searchsorted(self._topic_cdf, rng.random()))
                top = self.topic_words(topic, 8)
                chosen = rng.choice(len(top), size=int(rng.integers(2, 4)), replace=False)
                queries.append(" ".join(top[int(c)] for c in chosen))
                continue
            words = _WORD.findall(titles[int(rng.integers(len(titles)))].lower())
            keep = int(rng.integers(max(2, len(words) * 6 // 10), len(words) + 1))
            start = int(rng.integers(0, len(words) - keep + 1))
            words = words[start : start + keep]
            change = rng.random()
            if change < 0.4 and len(words) > 3:
                del words[int(rng.integers(len(words)))]
            elif change < 0.6:
                words[int(rng.integers(len(words)))] = self.word(
                    HEAD + int(rng.integers(0, 20 * TOPICS))
                )
            queries.append(" ".join(words))
        return queries


def _made_up(index: int) -> str:
    """A pronounceable word for a rare rank: three or more consonant-vowel syllables and
    an ending, one word per index (syllables parse back unambiguously)."""
    index, ending = divmod(index, len(_ENDINGS))
    syllables = []
    for _ in range(3):
        index, s = divmod(index, len(_CONSONANTS) * len(_VOWELS))
        syllables.append(_CONSONANTS[s // len(_VOWELS)] + _VOWELS[s % len(_VOWELS)])
    while index:
        index, s = divmod(index - 1, len(_CONSONANTS) * len(_VOWELS))
        syllables.append(_CONSONANTS[s // len(_VOWELS)] + _VOWELS[s % len(_VOWELS)])
    return "".join(syllables) + _ENDINGS[ending]


def _zipf_ranks(rng: np.random.Generator, count: int, limit: int) -> np.ndarray:
    """Ranks below `limit` with Zipf-like weights about 1 / (r + 5) ** 2.1 (surnames)."""
    u = rng.random(count)
    return np.minimum((6.0 * (1.0 - u) ** (-1.0 / 1.1) - 5.0).astype(np.int64) - 1, limit - 1)


def _as_sentences(words: np.ndarray, lengths: np.ndarray, ends: np.ndarray) -> list[str]:
    """One text per length of `words`: a capital after each end, a full stop at each end
    (ends empty: no full stops, one capital per text, as a title)."""
    starts = np.zeros(len(words), dtype=bool)
    starts[np.cumsum(lengths)[:-1]] = True
    starts[0] = True
    if len(ends):
        ends = ends.copy()
        ends[np.cumsum(lengths) - 1] = True
        starts[1:] |= ends[:-1]
        words[ends] = words[ends] + "."
    words[starts] = [w[:1].upper() + w[1:] for w in words[starts].tolist()]
    flat = words.tolist()
    cuts = np.cumsum(lengths).tolist()
    return [" ".join(flat[b - n : b]) for b, n in zip(cuts, lengths.tolist(), strict=True)]


@dataclass(frozen=True)
class CorpusChoice:
    """Which corpus `paperclub bench` runs on; small and picklable, as each engine's
    build runs in a process of its own and makes the papers there."""

    kind: str = "realistic"  # or "resampled": the seed sentences, as before
    repeated_titles: float = 0.0  # realistic only
    seed: int = 2024

    def papers(self, size: int) -> Iterator[IndexedPaper]:
        if self.kind == "resampled":
            from adapters.bench.search.synthetic import SeedPools, seed_records, synthetic_papers

            return synthetic_papers(size, SeedPools.from_records(seed_records()), self.seed)
        return self._realistic().papers(size)

    def papers_after(self, size: int, count: int) -> Iterator[IndexedPaper]:
        """The `count` papers that follow the first `size` (a day's new papers)."""
        if self.kind == "resampled":
            return islice(self.papers(size + count), size, None)
        return self._realistic().papers_after(size, count)

    def queries(self, count: int, among: int) -> list[str]:
        """`count` queries about the first `among` papers (present at every size)."""
        if self.kind == "resampled":
            from adapters.bench.search.synthetic import SeedPools, bench_queries, seed_records

            return bench_queries(SeedPools.from_records(seed_records()), count)
        return self._realistic().queries(count, among)

    def _realistic(self) -> RealisticCorpus:
        return RealisticCorpus.from_seeds(self.seed, self.repeated_titles)

    def describe(self) -> str:
        if self.kind == "resampled":
            return "resampled seed sentences"
        repeats = f", {self.repeated_titles:.0%} repeated titles" if self.repeated_titles else ""
        return f"realistic (Heaps' law on SciFact's growth, Zipf, topics{repeats})"


# --- measuring and writing ----------------------------------------------------------------


def heaps_points(papers: Iterator[IndexedPaper], at: list[int]) -> list[tuple[int, int, int]]:
    """(papers, words, distinct words) after each count in `at`: lower-cased \\w+ words of
    title and text, as SciFact's figures are counted."""
    seen: set[str] = set()
    words = 0
    points = []
    marks = set(at)
    for count, paper in enumerate(papers, 1):
        found = _WORD.findall(paper.text.lower())
        words += len(found)
        seen.update(found)
        if count in marks:
            points.append((count, words, len(seen)))
    return points


def heaps_fit(points: list[tuple[int, int, int]]) -> tuple[float, float]:
    """(K, beta) of distinct = K * words ** beta, least squares in log-log."""
    words = np.log([p[1] for p in points])
    distinct = np.log([p[2] for p in points])
    beta, log_k = np.polyfit(words, distinct, 1)
    return float(np.exp(log_k)), float(beta)


def write_jsonl(papers: Iterator[IndexedPaper], out: IO[str]) -> int:
    """The papers as JSON Lines for `paperclub import`, each with an id of its own (so
    papers that share a title stay distinct papers, as two BEIR documents do)."""
    count = 0
    for paper in papers:
        out.write(_jsonl_line(paper))
        count += 1
    return count


def write_jsonl_parts(papers: Iterator[IndexedPaper], stem: Path, part_bytes: int) -> list[Path]:
    """The same lines in files `stem-001.jsonl`, ... of at most `part_bytes` each."""
    files: list[Path] = []
    out, written = None, 0
    try:
        for paper in papers:
            line = _jsonl_line(paper).encode("utf-8")
            if out is None or written + len(line) > part_bytes:
                if out is not None:
                    out.close()
                files.append(stem.with_name(f"{stem.name}-{len(files) + 1:03d}.jsonl"))
                out, written = open(files[-1], "wb"), 0  # noqa: SIM115 - one file after another, closed above and below
            out.write(line)
            written += len(line)
    finally:
        if out is not None:
            out.close()
    return files


def _jsonl_line(paper: IndexedPaper) -> str:
    title, _, abstract = paper.text.partition("\n")
    record = {
        "external_ids": {"bench": f"p{paper.paper_id}"},
        "title": title,
        "authors": list(paper.authors),
        "abstract": abstract,
        "tags": list(paper.collections),
    }
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_corpus(corpus: RealisticCorpus, size: int, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl(corpus.papers(size), out)
    return path

"""The picker needs nothing but the search interface: over the demo corpus, the built-in
engine and rank-bm25 behind the same interface (tests/search/simple_engine.py) choose
the same papers, day after day, for channels with topics, collections, votes, a shared
tick ranking and a tour that runs out."""

from __future__ import annotations

import pytest

from bot.channels.channels import ChannelSettings
from bot.messages import ChannelRef
from bot.search.engine import Engine
from bot.services.picks import Feedback, Picker
from tests.search.simple_engine import SimpleEngine

DAYS = 20
# (topics, collections, whether members vote on its posts)
CHANNELS = [
    (("graph neural networks",), (), True),
    (("diffusion models", "image generation"), ("poster-session", "Trending"), True),
    ((), (), True),  # a tour until the first vote, then the votes steer it
    ((), ("topic-abstracts",), False),  # 17 papers: a tour that runs out
    (("zzqxv",), (), True),  # no paper has the word: a tour, away from disliked papers
    (("reinforcement learning",), ("openreview",), True),
    # Two channels with one query: a tick ranks once for both, each leaves its own out.
    (("graph neural networks",), (), False),
    (("graph neural networks",), (), False),
]
OLD_CHANNEL = 7  # had every paper with an even id before the first day


@pytest.fixture(scope="module")
def papers(seeded):
    library, _search, _core = seeded
    return list(library.papers())


@pytest.fixture(scope="module")
def engines(seeded, papers):
    _library, search, _core = seeded
    return {"built-in": search.current(), "rank-bm25": SimpleEngine(papers, search.tokenizer)}


def _days(engine: Engine, picker: Picker, titles: dict[int, str]) -> list[tuple]:
    """Every channel's pick, day after day: even days a tick (one ranking shared by the
    channels), odd days each channel alone (`next`). Members like the picks of every
    third day and dislike those of the day after."""
    posted: dict[int, list[int]] = {n: [] for n in range(len(CHANNELS))}
    posted[OLD_CHANNEL] = [p for p in sorted(titles) if p % 2 == 0]
    liked: dict[int, list[int]] = {n: [] for n in range(len(CHANNELS))}
    disliked: dict[int, list[int]] = {n: [] for n in range(len(CHANNELS))}
    picks = []
    for day in range(DAYS):
        rankings: dict | None = {} if day % 2 == 0 else None
        for n, (topics, collections, votes) in enumerate(CHANNELS):
            channel = ChannelSettings(n, ChannelRef("test", "w", f"c{n}"), None, True, None, topics, collections)
            recent = [titles[p] for p in reversed(posted[n])]
            feedback = Feedback(tuple(reversed(liked[n])), tuple(reversed(disliked[n])))
            pick = picker.choose(engine, channel, set(posted[n]), recent, rankings, feedback)
            picks.append((day, n, pick))
            if pick is None:
                continue
            posted[n].append(pick.paper_id)
            if votes and day % 3 == 0:
                liked[n].append(pick.paper_id)
            elif votes and day % 3 == 1:
                disliked[n].append(pick.paper_id)
    return picks


@pytest.fixture(scope="module")
def runs(engines, papers, seeded):
    _library, search, _core = seeded
    titles = {p.paper_id: p.title for p in papers}
    return {name: _days(engine, Picker(search.tokenizer), titles) for name, engine in engines.items()}


def test_both_engines_choose_the_same_papers_for_the_same_reasons(runs):
    built, simple = runs["built-in"], runs["rank-bm25"]

    def chosen(run):
        return [
            (day, n, None if p is None else (p.paper_id, p.matched, p.toured, p.resembles))
            for day, n, p in run
        ]

    assert chosen(simple) == chosen(built)
    scores = [p.score for _day, _n, p in simple if p is not None]
    assert scores == pytest.approx([p.score for _day, _n, p in built if p is not None], rel=1e-9)


def test_the_days_cover_what_a_pick_can_be(runs, papers):
    """What makes the comparison worth having: no paper twice in a channel, collections
    kept, and ranked picks, tours, resemblances and a tour that ran out all happen."""
    collections = {p.paper_id: set(p.collections) for p in papers}
    picks = [(day, n, p) for day, n, p in runs["built-in"]]
    for n, (_topics, wanted, _votes) in enumerate(CHANNELS):
        ids = [p.paper_id for _day, m, p in picks if m == n and p is not None]
        assert len(ids) == len(set(ids)), f"channel {n} got a paper twice"
        if wanted:
            names = {w.lower() for w in wanted}
            assert all(collections[i] & names for i in ids), f"channel {n} left its collections"
    made = [p for _day, _n, p in picks if p is not None]
    assert any(p.toured for p in made) and any(not p.toured for p in made)
    assert any(p.resembles for p in made)
    ran_out = [day for day, n, p in picks if n == 3 and p is None]
    assert ran_out and ran_out[0] == 17  # the collection's 17 papers, then nothing
    old = [p.paper_id for _day, n, p in picks if n == OLD_CHANNEL]
    assert all(p % 2 for p in old)
    assert old != [p.paper_id for _day, n, p in picks if n == OLD_CHANNEL - 1]

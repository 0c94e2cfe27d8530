"""Choosing a channel's next paper: relevant to its topics and to what its members
liked, away from what they disliked, new to it, not a rerun of its last few posts,
and with a reason a member can read.

Learning is relevance feedback on the BM25 query (Rocchio's idea): the most
distinctive terms of liked papers join the topic terms; those of disliked papers
score candidates down. The picker only ranks; recording and posting are
`bot.services.posts`'s job. It sees the search only through its interface
(`bot.search.engine.Engine`): paper ids, terms and scores, so any engine that ranks
alike picks alike (tests/daily/test_picks_engines.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from bot.channels.channels import ChannelSettings
from bot.search.engine import Engine, Hit
from bot.search.tokens import Tokenizer

POOL = 40  # candidates considered per pick
RECENT = 3  # posts whose topics the next pick should not simply repeat
DIVERSITY = 0.35  # weight of "like the recent posts" against relevance (0..1 scale)
DISLIKE = 0.6  # weight of "like the disliked papers" against relevance
FEEDBACK_TERMS = 12  # distinctive terms taken from each liked or disliked paper
TOPIC_WEIGHT = 2  # a topic term counts as much as this many feedback terms


@dataclass(frozen=True)
class Feedback:
    """What a channel's votes say: papers it liked and disliked, latest first."""

    liked: tuple[int, ...] = ()
    disliked: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.liked or self.disliked)


# A tick's BM25 rankings, shared by its channels with the same query and collections:
# (query terms, collections) -> (the depth asked for, the hits, best first).
Rankings = dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[int, list[Hit]]]

# Per channel id, what its votes say: the votes feature answers this (Votes.feedback).
FeedbackSource = Callable[[list[int]], dict[int, Feedback]]


@dataclass(frozen=True)
class Candidate:
    """A paper offered for a channel's paper of the day ahead of the corpus, and why, in
    words a member can check ("new on arXiv 25 Nov in cs.LG")."""

    paper_id: int
    reason: str


# Per channel id, candidates newest first, for the channels given, at `now`. A feature
# above daily supplies one (the follows' fresh picks); daily never imports it.
CandidateSource = Callable[[list[ChannelSettings], datetime], dict[int, list[Candidate]]]


@dataclass(frozen=True)
class Pick:
    paper_id: int
    matched: tuple[str, ...]  # query terms (stemmed) the paper contains; empty on a tour
    score: float
    toured: bool  # True when nothing steered the pick (no topics, no liked papers)
    resembles: tuple[int, ...] = ()  # liked papers this one shares terms with
    reason: str = ""  # a candidate's own reason (Candidate.reason), when it came from one


class Picker:
    """Ranks through the search's narrow interface (bot.search.engine.Engine): terms,
    collections, exclusions, paper ids and scores go in and out, whichever engine it is."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer

    def choose(
        self,
        engine: Engine,
        channel: ChannelSettings,
        excluded: set[int],
        recent_titles: list[str],
        rankings: Rankings | None = None,
        feedback: Feedback = Feedback(),
    ) -> Pick | None:
        """The best paper for `channel` that is not in `excluded`, or None if none is left.

        `rankings` may be shared between calls on one engine (a tick): channels with the
        same query and collections then share one BM25 ranking.
        """
        liked_terms = {pid: engine.distinctive_terms(pid, FEEDBACK_TERMS) for pid in feedback.liked}
        query = [t for t in self.tokenizer.tokens(" ".join(channel.topics)) for _ in range(TOPIC_WEIGHT)]
        query += [t for terms in liked_terms.values() for t in terms]
        penalty_terms = [t for pid in feedback.disliked for t in engine.distinctive_terms(pid, FEEDBACK_TERMS)]
        # Diversity is against recent posts the channel did not ask for more of: a run of
        # liked papers on one theme is what the votes want, not a rut.
        liked_titles = {title for title in map(engine.title, liked_terms) if title is not None}
        recent_titles = [t for t in recent_titles if t not in liked_titles]
        if query:
            pick = self._ranked(engine, channel, query, excluded, recent_titles, rankings, penalty_terms)
            if pick is not None:
                return _with_resemblance(pick, liked_terms)
        return self._tour(engine, channel, excluded, recent_titles, penalty_terms)

    def choose_from(self, engine: Engine, channel: ChannelSettings, candidates: list[Candidate],
                    excluded: set[int]) -> Pick | None:
        """The best of `candidates` (newest first) not in `excluded`: for a channel with
        topics, the one that matches them best (None when none matches: the corpus
        decides then); without topics, the newest."""
        fresh = list({c.paper_id: c for c in reversed(candidates)
                      if c.paper_id not in excluded and engine.title(c.paper_id) is not None}.values())[::-1]
        if not fresh:
            return None
        topics = self.tokenizer.tokens(" ".join(channel.topics))
        if not topics:
            return Pick(fresh[0].paper_id, (), 0.0, toured=False, reason=fresh[0].reason)
        scores = engine.scores(topics, [c.paper_id for c in fresh])
        relevant = [c for c in fresh if scores.get(c.paper_id, 0.0) > 0]
        if not relevant:
            return None
        best = max(relevant, key=lambda c: scores[c.paper_id])  # ties: the newest
        matched = tuple(t for t in dict.fromkeys(topics) if engine.scores([t], [best.paper_id]).get(best.paper_id))
        return Pick(best.paper_id, matched, scores[best.paper_id], toured=False, reason=best.reason)

    def _ranked(self, engine: Engine, channel: ChannelSettings, query: list[str], excluded: set[int],
                recent_titles: list[str], rankings: Rankings | None, penalty_terms: list[str]) -> Pick | None:
        hits = self._candidates(engine, channel, query, excluded, rankings)
        if not hits:
            return None
        ids = [h.paper_id for h in hits]
        redundancy = self._likeness(engine, self.tokenizer.tokens(" ".join(recent_titles[:RECENT])), ids)
        dislike = self._likeness(engine, penalty_terms, ids)
        best_score = hits[0].score or 1.0

        def value(hit: Hit) -> float:
            penalty = DIVERSITY * redundancy.get(hit.paper_id, 0.0) + DISLIKE * dislike.get(hit.paper_id, 0.0)
            return hit.score / best_score - penalty

        best = max(hits, key=value)
        return Pick(best.paper_id, best.matched, best.score, toured=False)

    def _candidates(self, engine: Engine, channel: ChannelSettings, query: list[str], excluded: set[int],
                    rankings: Rankings | None) -> list[Hit]:
        if rankings is None:  # one channel's pick: the engine leaves its papers out
            return engine.rank(query, POOL, channel.collections, excluded)
        # A ranking shared by a tick's channels cannot leave out one channel's papers:
        # it goes deep enough to survive the exclusions (the posted papers rank high too).
        # Rankings are ordered by score, then paper id, so this is the same top POOL.
        depth = POOL + len(excluded)
        key = (tuple(query), channel.collections)
        cached = rankings.get(key)
        # A cached ranking serves any depth it covers; one shorter than its own depth
        # already holds every matching paper.
        if cached is None or (cached[0] < depth and len(cached[1]) == cached[0]):
            cached = rankings[key] = (depth, engine.rank(query, depth, channel.collections))
        return [h for h in cached[1] if h.paper_id not in excluded][:POOL]

    def _tour(self, engine: Engine, channel: ChannelSettings, excluded: set[int], recent_titles: list[str],
              penalty_terms: list[str]) -> Pick | None:
        """Nothing to steer by: a varied walk through the corpus instead of file order.

        A sample of unposted papers, drawn with a seed fixed by the channel and its
        history (so a replay picks the same), and of those the least like the last posts
        and the disliked papers.
        """
        seed = f"{channel.ref.key()}:{len(excluded)}"
        sample = engine.sample(POOL, seed, channel.collections, excluded)
        if not sample:
            return None
        redundancy = self._likeness(engine, self.tokenizer.tokens(" ".join(recent_titles[:RECENT])), sample)
        dislike = self._likeness(engine, penalty_terms, sample)
        best = min(sample, key=lambda p: DIVERSITY * redundancy.get(p, 0.0) + DISLIKE * dislike.get(p, 0.0))
        return Pick(best, (), 0.0, toured=True)

    @staticmethod
    def _likeness(engine: Engine, terms: list[str], candidates: list[int]) -> dict[int, float]:
        """How much each candidate matches `terms` (0..1): BM25 scaled by the best."""
        if not terms or not candidates:
            return {}
        scores = engine.scores(terms, candidates)
        top = max(scores.values(), default=0.0)
        return {pid: score / top for pid, score in scores.items()} if top > 0 else {}


def _with_resemblance(pick: Pick, liked_terms: dict[int, list[str]]) -> Pick:
    """Name the liked papers the pick shares the most terms with (two at most)."""
    matched = set(pick.matched)
    shared = sorted(
        ((len(matched & set(terms)), pid) for pid, terms in liked_terms.items() if pid != pick.paper_id),
        reverse=True,
    )
    resembles = tuple(pid for count, pid in shared[:2] if count >= 2)
    return Pick(pick.paper_id, pick.matched, pick.score, pick.toured, resembles)

"""Choosing a channel's next paper: relevant to its topics and to what its members
liked, away from what they disliked, new to it, not a rerun of its last few posts,
and with a reason a member can read.

Learning is relevance feedback on the BM25 query (Rocchio's idea): the most
distinctive terms of liked papers join the topic terms; those of disliked papers
score candidates down. Where papers have vectors (a hybrid index, bot.search.hybrid),
meaning joins in the same way: the channel's profile is what its topics mean and the
average of the papers it liked, candidates come from both BM25 and the profile's
nearest papers, scores are fused as a search fuses them, and papers close to a
disliked one are pushed away. The picker only ranks; recording and posting are
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
from bot.search.fusion import fused, normalised
from bot.search.hybrid import HybridSearcher
from bot.search.tokens import Tokenizer

POOL = 40  # candidates considered per pick
RECENT = 3  # posts whose topics the next pick should not simply repeat
DIVERSITY = 0.35  # weight of "like the recent posts" against relevance (0..1 scale)
DISLIKE = 0.6  # weight of "like the disliked papers" against relevance
FEEDBACK_TERMS = 12  # distinctive terms taken from each liked or disliked paper
TOPIC_WEIGHT = 2  # a topic term counts as much as this many feedback terms
# A liked paper at least this close in meaning is named as the reason: under all-MiniLM-L6-v2
# papers on one subject in other words measured 0.34-0.47, papers on other subjects that
# share a word (a database "migration", a runtime called "Reef") 0.07-0.29.
RESEMBLES_COSINE = 0.3
# A fresh paper from a follow this close to the channel's profile is on its subject, though
# it shares no topic word (the same measure as RESEMBLES_COSINE).
RELEVANT_COSINE = 0.3


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
    resembles: tuple[int, ...] = ()  # liked papers this one shares terms with (or is close to in meaning)
    reason: str = ""  # a candidate's own reason (Candidate.reason), when it came from one
    by_meaning: bool = False  # ranked by meaning as well as words


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
        if isinstance(engine, HybridSearcher):
            pick = self._by_meaning(engine, channel, excluded, recent_titles, rankings, penalty_terms, feedback)
            if pick is not None:
                return pick
        if query:
            pick = self._ranked(engine, channel, query, excluded, recent_titles, rankings, penalty_terms)
            if pick is not None:
                return _with_resemblance(pick, liked_terms)
        return self._tour(engine, channel, excluded, recent_titles, penalty_terms)

    def choose_from(self, engine: Engine, channel: ChannelSettings, candidates: list[Candidate],
                    excluded: set[int], feedback: Feedback = Feedback()) -> Pick | None:
        """The best of `candidates` (newest first) not in `excluded`: for a channel with
        topics, the one that matches them best (None when none matches: the corpus
        decides then); without topics, the newest. Where papers have vectors, "matches"
        is by words and meaning, the channel's profile (its topics, the papers it liked)."""
        fresh = list({c.paper_id: c for c in reversed(candidates)
                      if c.paper_id not in excluded and engine.title(c.paper_id) is not None}.values())[::-1]
        if not fresh:
            return None
        topics = self.tokenizer.tokens(" ".join(channel.topics))
        if isinstance(engine, HybridSearcher) and (topics or feedback.liked):
            return self._fresh_by_meaning(engine, channel, fresh, topics, feedback)
        if not topics:
            return Pick(fresh[0].paper_id, (), 0.0, toured=False, reason=fresh[0].reason)
        scores = engine.scores(topics, [c.paper_id for c in fresh])
        relevant = [c for c in fresh if scores.get(c.paper_id, 0.0) > 0]
        if not relevant:
            return None
        best = max(relevant, key=lambda c: scores[c.paper_id])  # ties: the newest
        matched = tuple(t for t in dict.fromkeys(topics) if engine.scores([t], [best.paper_id]).get(best.paper_id))
        return Pick(best.paper_id, matched, scores[best.paper_id], toured=False, reason=best.reason)

    def relevance(self, engine: Engine, channel: ChannelSettings, paper_ids: list[int],
                  feedback: Feedback = Feedback()) -> dict[int, float]:
        """How well each of these papers suits the channel, for ordering them (the digest's
        new papers): by words and meaning against its profile where papers have vectors,
        else BM25 for its topics (a paper matching none scores 0, or is left out)."""
        topics = list(dict.fromkeys(self.tokenizer.tokens(" ".join(channel.topics))))
        if isinstance(engine, HybridSearcher) and paper_ids:
            profile = engine.profile(channel.topics, feedback.liked)
            if profile is not None:
                lexical = engine.scores(topics, paper_ids) if topics else {}
                return dict(fused(lexical, engine.closeness(profile, paper_ids), paper_ids))
        return engine.scores(topics, paper_ids) if topics else {}

    def _fresh_by_meaning(self, engine: HybridSearcher, channel: ChannelSettings, fresh: list[Candidate],
                          topics: list[str], feedback: Feedback) -> Pick | None:
        """The fresh paper closest to the channel's profile, words and meaning fused; only
        one that shares a topic word or is close in meaning (RELEVANT_COSINE) is relevant.
        Without a profile (neither topics nor liked papers with a vector): the newest."""
        profile = engine.profile(channel.topics, feedback.liked)
        if profile is None:
            return Pick(fresh[0].paper_id, (), 0.0, toured=False, reason=fresh[0].reason)
        ids = [c.paper_id for c in fresh]
        lexical = engine.scores(topics, ids) if topics else {}
        close = engine.closeness(profile, ids)
        relevant = [p for p in ids if lexical.get(p, 0.0) > 0 or close.get(p, -1.0) >= RELEVANT_COSINE]
        if not relevant:
            return None
        ranked = fused(lexical, close, relevant)
        order = {paper: n for n, paper in enumerate(ids)}  # newest first
        best_id, score = max(ranked, key=lambda pair: (pair[1], -order[pair[0]]))  # ties: the newest
        best = fresh[order[best_id]]
        matched = tuple(t for t in dict.fromkeys(topics) if engine.scores([t], [best_id]).get(best_id))
        return Pick(best_id, matched, score, toured=False, reason=best.reason,
                    resembles=_closest_liked(engine, best_id, feedback.liked), by_meaning=True)

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

    def _by_meaning(self, engine: HybridSearcher, channel: ChannelSettings, excluded: set[int],
                    recent_titles: list[str], rankings: Rankings | None, penalty_terms: list[str],
                    feedback: Feedback) -> Pick | None:
        """The best of BM25's candidates for the channel's topics and the profile's nearest
        papers, by fused score, less the same penalties for repeating recent posts and
        resembling disliked ones (in words, or in meaning, whichever is the stronger).
        None without a profile.

        The words are the topics' alone: liked papers speak through the profile. Their
        distinctive terms, the lexical stand-in for what they mean, measured worse: three
        upvoted papers on the sea brought "Migration of legacy databases" and "Reef: a
        runtime" ahead of papers on kelp and tuna (tests/search/test_meaning_picks.py)."""
        profile = engine.profile(channel.topics, feedback.liked)
        if profile is None:
            return None
        query = [t for t in self.tokenizer.tokens(" ".join(channel.topics)) for _ in range(TOPIC_WEIGHT)]
        hits = self._candidates(engine, channel, query, excluded, rankings) if query else []
        near = engine.nearest(profile, POOL, channel.collections, excluded)
        ids = list(dict.fromkeys([*(hit.paper_id for hit in hits), *(paper for paper, _ in near)]))
        if not ids:
            return None
        scores = dict(fused(engine.scores(query, ids) if query else {}, engine.closeness(profile, ids), ids))
        redundancy = self._likeness(engine, self.tokenizer.tokens(" ".join(recent_titles[:RECENT])), ids)
        dislike = self._likeness(engine, penalty_terms, ids)
        pushed = normalised(engine.closest_of(feedback.disliked, ids))

        def value(paper: int) -> tuple[float, int]:
            penalty = DIVERSITY * redundancy.get(paper, 0.0)
            penalty += DISLIKE * max(dislike.get(paper, 0.0), pushed.get(paper, 0.0))
            return scores[paper] - penalty, -paper  # ties: the lower id

        best = max(ids, key=value)
        matched = tuple(t for t in dict.fromkeys(query) if engine.scores([t], [best]).get(best))
        return Pick(best, matched, scores[best], toured=False, resembles=_closest_liked(engine, best, feedback.liked),
                    by_meaning=True)

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


def _closest_liked(engine: HybridSearcher, paper: int, liked: tuple[int, ...]) -> tuple[int, ...]:
    """The liked papers (two at most) this one is closest to in meaning, when close."""
    vector = engine.vector(paper)
    if vector is None:
        return ()
    near = engine.closeness(vector, [p for p in liked if p != paper])
    ranked = sorted(((cosine, -p) for p, cosine in near.items() if cosine >= RESEMBLES_COSINE), reverse=True)
    return tuple(-neg for _cosine, neg in ranked[:2])

"""Choosing a channel's next paper: relevant to its topics and to what its members
liked, away from what they disliked, new to it, not a rerun of its last few posts,
and with a reason a member can read.

Learning is relevance feedback on the BM25 query (Rocchio's idea): the most
distinctive terms of liked papers join the topic terms; those of disliked papers
score candidates down. The picker only ranks; recording and posting are
`bot.daily.posts`'s job.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bot.channels.channels import ChannelSettings
from bot.search.index import Hit, SearchIndex
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


# Per channel id, what its votes say: the votes feature answers this (Votes.feedback).
FeedbackSource = Callable[[list[int]], dict[int, Feedback]]


@dataclass(frozen=True)
class Pick:
    paper_id: int
    matched: tuple[str, ...]  # query terms (stemmed) the paper contains; empty on a tour
    score: float
    toured: bool  # True when nothing steered the pick (no topics, no liked papers)
    resembles: tuple[int, ...] = ()  # liked papers this one shares terms with


class Picker:
    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer

    def choose(
        self,
        index: SearchIndex,
        channel: ChannelSettings,
        excluded: set[int],
        recent_titles: list[str],
        rankings: dict | None = None,
        feedback: Feedback = Feedback(),
    ) -> Pick | None:
        """The best paper for `channel` that is not in `excluded`, or None if none is left.

        `rankings` may be shared between calls on one index (a tick): channels with the
        same query and collections then share one BM25 ranking.
        """
        allowed = self.collection_mask(index, channel.collections)
        liked_terms = {pid: self.terms_of(index, pid) for pid in feedback.liked}
        query = [t for t in self.tokenizer.tokens(" ".join(channel.topics)) for _ in range(TOPIC_WEIGHT)]
        query += [t for terms in liked_terms.values() for t in terms]
        penalty_terms = [t for pid in feedback.disliked for t in self.terms_of(index, pid)]
        # Diversity is against recent posts the channel did not ask for more of: a run of
        # liked papers on one theme is what the votes want, not a rut.
        liked_titles = {index.title(pid) for pid in liked_terms if index.doc_of(pid) is not None}
        recent_titles = [t for t in recent_titles if t not in liked_titles]
        if query:
            pick = self._ranked(index, channel, query, allowed, excluded, recent_titles, rankings, penalty_terms)
            if pick is not None:
                return _with_resemblance(pick, liked_terms)
        return self._tour(index, channel, allowed, excluded, recent_titles, penalty_terms)

    @staticmethod
    def collection_mask(index: SearchIndex, collections: tuple[str, ...]) -> np.ndarray | None:
        if not collections:
            return None
        mask = np.zeros(len(index), dtype=bool)
        for name in collections:
            mask |= index.filter_mask({"in": [name]})
        return mask

    def terms_of(self, index: SearchIndex, paper_id: int) -> list[str]:
        doc = index.doc_of(paper_id)
        return index.distinctive_terms(doc, FEEDBACK_TERMS) if doc is not None else []

    def _ranked(self, index, channel, query, allowed, excluded, recent_titles, rankings, penalty_terms):
        hits = self._candidates(index, channel, query, allowed, excluded, rankings)
        if not hits:
            return None
        ids = [h.paper_id for h in hits]
        redundancy = self._likeness(index, self.tokenizer.tokens(" ".join(recent_titles[:RECENT])), ids)
        dislike = self._likeness(index, penalty_terms, ids)
        best_score = hits[0].score or 1.0

        def value(hit: Hit) -> float:
            penalty = DIVERSITY * redundancy.get(hit.paper_id, 0.0) + DISLIKE * dislike.get(hit.paper_id, 0.0)
            return hit.score / best_score - penalty

        best = max(hits, key=value)
        return Pick(best.paper_id, best.matched, best.score, toured=False)

    def _candidates(self, index, channel, query, allowed, excluded, rankings) -> list[Hit]:
        # Ask for enough to survive the exclusions: the posted papers rank high too.
        depth = POOL + len(excluded)
        key = (tuple(query), channel.collections)
        cached = rankings.get(key) if rankings is not None else None
        # A cached ranking serves any depth it covers; one shorter than its own depth
        # already holds every matching paper.
        if cached is None or (cached[0] < depth and len(cached[1]) == cached[0]):
            cached = (depth, index.rank(query, depth, allowed))
            if rankings is not None:
                rankings[key] = cached
        return [h for h in cached[1] if h.paper_id not in excluded][:POOL]

    def _tour(self, index, channel, allowed, excluded, recent_titles, penalty_terms) -> Pick | None:
        """Nothing to steer by: a varied walk through the corpus instead of file order.

        A sample of unposted papers, drawn with a seed fixed by the channel and its
        history (so a replay picks the same), and of those the least like the last posts
        and the disliked papers.
        """
        # Live documents only: a paper changed since is also in an older segment.
        docs = np.flatnonzero(index.live if allowed is None else allowed & index.live)
        rng = random.Random(f"{channel.ref.key()}:{len(excluded)}")
        sample: list[int] = []
        for _attempt in range(POOL * 20):
            if len(sample) == POOL or len(sample) + len(excluded) >= len(docs):
                break
            paper_id = int(index.paper_ids[docs[rng.randrange(len(docs))]])
            if paper_id not in excluded and paper_id not in sample:
                sample.append(paper_id)
        if not sample:
            sample = [int(index.paper_ids[d]) for d in docs if int(index.paper_ids[d]) not in excluded][:POOL]
        if not sample:
            return None
        redundancy = self._likeness(index, self.tokenizer.tokens(" ".join(recent_titles[:RECENT])), sample)
        dislike = self._likeness(index, penalty_terms, sample)
        best = min(sample, key=lambda p: DIVERSITY * redundancy.get(p, 0.0) + DISLIKE * dislike.get(p, 0.0))
        return Pick(best, (), 0.0, toured=True)

    @staticmethod
    def _likeness(index: SearchIndex, terms: list[str], candidates: list[int]) -> dict[int, float]:
        """How much each candidate matches `terms` (0..1): BM25 scaled by the best."""
        if not terms or not candidates:
            return {}
        hits = index.rank(terms, len(candidates), index.mask_of(candidates))
        top = max((h.score for h in hits), default=0.0)
        return {h.paper_id: h.score / top for h in hits} if top > 0 else {}


def _with_resemblance(pick: Pick, liked_terms: dict[int, list[str]]) -> Pick:
    """Name the liked papers the pick shares the most terms with (two at most)."""
    matched = set(pick.matched)
    shared = sorted(
        ((len(matched & set(terms)), pid) for pid, terms in liked_terms.items() if pid != pick.paper_id),
        reverse=True,
    )
    resembles = tuple(pid for count, pid in shared[:2] if count >= 2)
    return Pick(pick.paper_id, pick.matched, pick.score, pick.toured, resembles)

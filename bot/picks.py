"""Choosing a channel's next paper: relevant to its topics, new to it, not a rerun of
its last few posts, and with a reason a member can read.

The picker only ranks; recording and posting are `bot.daily`'s job.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from bot.channels import ChannelSettings
from bot.search import SearchIndex
from bot.tokens import Tokenizer

POOL = 40  # candidates considered per pick
RECENT = 3  # posts whose topics the next pick should not simply repeat
DIVERSITY = 0.35  # weight of "like the recent posts" against relevance (0..1 scale)


@dataclass(frozen=True)
class Pick:
    paper_id: int
    matched: tuple[str, ...]  # topic terms (stemmed) the paper contains; empty on a tour
    score: float
    toured: bool  # True when the channel has no topics (or none match any more)


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
    ) -> Pick | None:
        """The best paper for `channel` that is not in `excluded`, or None if none is left.

        `rankings` may be shared between calls on one index (a tick): channels with the
        same topics and collections then share one BM25 ranking.
        """
        allowed = self.collection_mask(index, channel.collections)
        if channel.topics:
            pick = self._by_topics(index, channel, allowed, excluded, recent_titles, rankings)
            if pick is not None:
                return pick
        return self._tour(index, channel, allowed, excluded, recent_titles)

    @staticmethod
    def collection_mask(index: SearchIndex, collections: tuple[str, ...]) -> np.ndarray | None:
        if not collections:
            return None
        mask = np.zeros(len(index), dtype=bool)
        for name in collections:
            mask |= index.filter_mask({"in": [name]})
        return mask

    def _by_topics(self, index, channel, allowed, excluded, recent_titles, rankings) -> Pick | None:
        tokens = self.tokenizer.tokens(" ".join(channel.topics))
        # Ask for enough to survive the exclusions: the posted papers rank high too.
        depth = POOL + len(excluded)
        key = (tuple(tokens), channel.collections)
        cached = rankings.get(key) if rankings is not None else None
        # A cached ranking serves any depth it covers; one shorter than its own depth
        # already holds every matching paper.
        if cached is None or (cached[0] < depth and len(cached[1]) == cached[0]):
            cached = (depth, index.rank(tokens, depth, allowed))
            if rankings is not None:
                rankings[key] = cached
        hits = [h for h in cached[1] if h.paper_id not in excluded][:POOL]
        if not hits:
            return None
        redundancy = self._redundancy(index, recent_titles, [h.paper_id for h in hits])
        best_score = hits[0].score or 1.0
        best = max(hits, key=lambda h: h.score / best_score - DIVERSITY * redundancy.get(h.paper_id, 0.0))
        return Pick(best.paper_id, best.matched, best.score, toured=False)

    def _tour(self, index, channel, allowed, excluded, recent_titles) -> Pick | None:
        """No topics: a varied walk through the corpus instead of file order.

        A sample of unposted papers, drawn with a seed fixed by the channel and its
        history (so a replay picks the same), and of those the least like the last posts.
        """
        docs = np.flatnonzero(allowed) if allowed is not None else np.arange(len(index))
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
        redundancy = self._redundancy(index, recent_titles, sample)
        best = min(sample, key=lambda p: redundancy.get(p, 0.0))
        return Pick(best, (), 0.0, toured=True)

    def _redundancy(self, index: SearchIndex, recent_titles: list[str], candidates: list[int]) -> dict[int, float]:
        """How much each candidate resembles the recent posts (0..1): BM25 of the recent
        titles' terms against the candidates, scaled by the best."""
        tokens = self.tokenizer.tokens(" ".join(recent_titles[:RECENT]))
        if not tokens:
            return {}
        hits = index.rank(tokens, len(candidates), index.mask_of(candidates))
        top = max((h.score for h in hits), default=0.0)
        return {h.paper_id: h.score / top for h in hits} if top > 0 else {}

"""Words and meaning in one ranking: a convex combination of normalised scores.

Each candidate (the best by BM25 and the best by meaning, together) carries its exact
BM25 score (0 where it shares no word with the query) and its cosine with the query.
Each kind of score is min-max normalised over the candidates, and the two are mixed:
(1 - w) * words + w * meaning. On SciFact this beats either alone and reciprocal rank
fusion (docs/relevance.md); w = 0.5, weighing both alike, was fixed before measuring.

A candidate without a vector yet (not embedded) is ranked by its words alone: its
meaning counts as much as its words do, so it is neither lifted nor sunk.
"""

from __future__ import annotations

from collections.abc import Mapping

DENSE_WEIGHT = 0.5


def normalised(scores: Mapping[int, float]) -> dict[int, float]:
    """Scores mapped onto 0..1 (all 1 when they are all equal)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {key: (value - low) / span if span > 0 else 1.0 for key, value in scores.items()}


def fused(
    lexical: Mapping[int, float],
    dense: Mapping[int, float],
    candidates: list[int],
    weight: float = DENSE_WEIGHT,
) -> list[tuple[int, float]]:
    """(paper id, fused score) of every candidate, best first, ties to the lower id.

    `lexical`: BM25 scores (a candidate missing scores 0); `dense`: cosines (a candidate
    missing has no vector)."""
    words = normalised({paper: lexical.get(paper, 0.0) for paper in candidates})
    meaning = normalised({paper: dense[paper] for paper in candidates if paper in dense})
    scored = [
        (paper, (1 - weight) * words[paper] + weight * meaning.get(paper, words[paper]))
        for paper in candidates
    ]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))

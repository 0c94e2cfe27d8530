"""What the search engine's tests share."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def corpus_tokens(seeded) -> list[list[str]]:
    """The seed corpus as the engine's tokens, one list a paper."""
    library, search, _core = seeded
    return [search.tokenizer.tokens(paper.text) for paper in library.papers()]

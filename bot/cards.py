"""Paper cards: what a member sees of a paper, on every platform."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.messages import PaperCard
from bot.search import Hit
from bot.tokens import Tokenizer
from store.models import Paper

AUTHORS_SHOWN = 5
SNIPPET_WORDS = 40


def authors_display(authors: list[str], shown: int = AUTHORS_SHOWN) -> str:
    """"A, B, C, D, E +3 more": long author lists would swamp a chat card."""
    if len(authors) <= shown:
        return ", ".join(authors)
    return f"{', '.join(authors[:shown])} +{len(authors) - shown} more"


def venue_line(paper: Paper) -> str:
    parts = [*paper.collections, paper.track, paper.award]
    return " · ".join(p for p in parts if p)


def matched_words(text: str, stems: Iterable[str], tokenizer: Tokenizer) -> list[str]:
    """The words of `text` as written that carry the matched stems ("robustness" for
    the stem "robust"), one per stem, in the order the stems were given."""
    wanted = list(stems)
    surface: dict[str, str] = {}
    for word in tokenizer.words(text):
        surface.setdefault(tokenizer.stem(word), word)
    return [surface.get(stem, stem) for stem in wanted]


def snippet(text: str, stems: set[str], tokenizer: Tokenizer, width: int = SNIPPET_WORDS) -> str:
    """The window of `width` words of `text` showing the most distinct matched terms
    (then the most matches): a window of one term repeated is a worse preview than one
    where several query terms meet."""
    words = text.split()
    if len(words) <= width:
        return " ".join(words)
    found = [stems & set(tokenizer.tokens(w)) if stems else set() for w in words]
    best, best_rank = 0, (0, 0)
    for start in range(len(words) - width + 1):
        window = found[start : start + width]
        rank = (len(set().union(*window)), sum(1 for f in window if f))
        if rank > best_rank:
            best, best_rank = start, rank
    # Start a couple of words early so the first match has some context, unless that
    # would push a match off the end of the window.
    if not any(found[best + width - 2 : best + width]):
        best = max(0, best - 2)
    text_window = " ".join(words[best : best + width])
    return ("… " if best else "") + text_window + (" …" if best + width < len(words) else "")


def card(paper: Paper, tokenizer: Tokenizer, hit: Hit | None = None, reason: str = "") -> PaperCard:
    stems = set(hit.matched) if hit else set()
    body = paper.abstract or " ".join(paper.notes)
    return PaperCard(
        paper_id=paper.id,
        title=paper.title,
        url=paper.url,
        authors=list(paper.authors),
        authors_display=authors_display(paper.authors),
        venue=venue_line(paper),
        matched_terms=matched_words(f"{paper.title} {body}", hit.matched, tokenizer) if hit else [],
        snippet=_clean(snippet(body, stems, tokenizer)),
        score=round(hit.score, 4) if hit else None,
        reason=reason,
        tags=list(paper.tags),
        notes=list(paper.notes),
    )


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()

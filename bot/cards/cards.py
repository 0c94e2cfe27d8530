"""Paper cards: what a member sees of a paper, on every platform."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.cards.latex import readable, spoken
from bot.cards.links import id_link, web_link
from bot.messages import PaperCard
from bot.search.engine import Hit
from bot.search.tokens import Tokenizer
from store.models import FILLED_PREFIX, Paper, PaperSource

AUTHORS_SHOWN = 5
SNIPPET_WORDS = 40
FULL_WORDS = 160  # `show`: most of an abstract, still inside a chat message's limits


def authors_display(authors: list[str], shown: int = AUTHORS_SHOWN) -> str:
    """"A, B, C, D, E +3 more": long author lists would swamp a chat card."""
    if len(authors) <= shown:
        return ", ".join(authors)
    return f"{', '.join(authors[:shown])} +{len(authors) - shown} more"


def venue_line(paper: Paper) -> str:
    """"NeurIPS 2021 · Oral · Outstanding Paper": where and when it was published, its
    track and award. Not the collections that hold it: they are how an operator or a
    channel groups papers (`collections` lists them), nothing the paper says of itself."""
    parts = [published(paper), paper.track, paper.award]
    return " · ".join(p for p in parts if p)


def published(paper: Paper) -> str:
    """"NeurIPS 2021", the venue alone, the year alone, or "" when neither is known."""
    venue = " ".join(readable(paper.venue or "").split())
    year = str(paper.year) if paper.year else ""
    if year and re.search(rf"(?<!\d){year}(?!\d)", venue):  # "NeurIPS 2021" says it already
        return venue
    return " ".join(p for p in (venue, year) if p)


def paper_link(paper: Paper) -> str | None:
    """The paper's own url, else one made from its arXiv id, DOI or OpenReview id."""
    return web_link(paper.url) or id_link(paper.ids())


def source_lines(paper: Paper) -> list[str]:
    """Where the paper came from, "march: sample.bib:5 (bibtex)", and what a provider filled
    in, "filled:openalex: openalex.org:1 (openalex): link, year from OpenAlex": operator
    detail, for `paperclub search --sources`, never in chat."""
    return [f"{s.collection}: {s.source}:{s.line} ({s.format})" + _filled_note(paper, s) for s in paper.sources]


# The fields a filled-in source may give, as the operator reads them.
_FILLED_FIELDS = (("url", "link"), ("year", "year"), ("venue", "venue"), ("authors", "authors"))


def _filled_note(paper: Paper, source: PaperSource) -> str:
    """": link, DOI, year from OpenAlex": what this filled-in source gives that no other says."""
    if not source.collection.startswith(FILLED_PREFIX):
        return ""
    own = [s.fields or {} for s in paper.sources if not s.collection.startswith(FILLED_PREFIX)]
    said = source.fields or {}
    given = [label for name, label in _FILLED_FIELDS if said.get(name) and not any(f.get(name) for f in own)]
    if "doi" in said.get("external_ids", {}) and not any("doi" in f.get("external_ids", {}) for f in own):
        given.insert(1 if given[:1] == ["link"] else 0, "DOI")
    provider = source.collection.removeprefix(FILLED_PREFIX)
    named = {"openalex": "OpenAlex"}.get(provider, provider)
    return f": {', '.join(given)} from {named}" if given else f": nothing {named} knows is missing"


def matched_words(text: str, stems: Iterable[str], tokenizer: Tokenizer) -> list[str]:
    """The words of `text` as written that carry the matched stems ("robustness" for
    the stem "robust"), one per stem, in the order the stems were given."""
    surface: dict[str, str] = {}
    for term, word in tokenizer.terms_with_words(text):
        surface.setdefault(term, word)
    return [surface.get(stem, stem) for stem in stems]


def snippet(text: str, stems: set[str], tokenizer: Tokenizer, width: int = SNIPPET_WORDS) -> str:
    """The window of `width` words of `text` showing the most distinct matched terms
    (then the most matches): a window of one term repeated is a worse preview than one
    where several query terms meet."""
    words = text.split()
    if len(words) <= width:
        return " ".join(words)
    # Each distinct word is looked up once: an abstract repeats most of its words.
    terms_of = {w: stems & tokenizer.word_terms(spoken(w)) for w in set(words)} if stems else {}
    empty: set[str] = set()
    found = [terms_of.get(w, empty) for w in words]
    best = _best_window(found, width)
    # Start a couple of words early so the first match has some context, unless that
    # would push a match off the end of the window.
    if not any(found[best + width - 2 : best + width]):
        best = max(0, best - 2)
    text_window = " ".join(words[best : best + width])
    return ("… " if best else "") + text_window + (" …" if best + width < len(words) else "")


def _best_window(found: list[set[str]], width: int) -> int:
    """The first start of the window of `width` words ranked best by (distinct matched
    terms, words with a match): one slide over the words, counting what enters and leaves
    (most words match nothing and cost one test)."""
    counts: dict[str, int] = {}
    matching = 0

    def enter(terms: set[str]) -> None:
        for term in terms:
            counts[term] = counts.get(term, 0) + 1

    for terms in found[:width]:
        if terms:
            enter(terms)
            matching += 1
    best, best_rank = 0, (len(counts), matching)
    for start in range(1, len(found) - width + 1):
        leaving, entering = found[start - 1], found[start + width - 1]
        if not leaving and not entering:
            continue  # the same counts as the window before: not better
        for term in leaving:
            counts[term] -= 1
            if not counts[term]:
                del counts[term]
        enter(entering)
        matching += bool(entering) - bool(leaving)
        rank = (len(counts), matching)
        if rank > best_rank:
            best, best_rank = start, rank
    return best


# Why a search shows a paper that has none of the query's words; why `similar` shows one
# that has none of the paper's distinctive words.
NEAR_IN_MEANING = "close in meaning to your words, though it uses none of them"
NEAR_TO_PAPER = "close in meaning, though it shares none of the paper's distinctive words"


def card(
    paper: Paper, tokenizer: Tokenizer, hit: Hit | None = None, reason: str = "", full: bool = False,
    added_by: str = "", sources: bool = False,
) -> PaperCard:
    """The card for `paper`; `hit` adds matched terms and a snippet around them, `full`
    shows most of the abstract instead of a preview; `added_by` says who added it in chat;
    `sources` lists the files it came from (the operator's command line asks for them)."""
    stems = set(hit.matched) if hit else set()
    # LaTeX is shown as Unicode; the preview window and the matched words are found in
    # that shown text, so the words a renderer marks are the words the member sees.
    title = readable(paper.title)
    # A paper known only from a review reads through its notes: a preview of them in a
    # result list, all of them (and no preview repeating them) on `show`.
    preview = readable(paper.abstract or ("" if full else " ".join(paper.notes)))
    return PaperCard(
        paper_id=paper.id,
        title=title,
        url=paper_link(paper),
        authors=list(paper.authors),
        authors_display=authors_display(paper.authors),
        venue=venue_line(paper),
        matched_terms=matched_words(f"{title} {preview}", hit.matched, tokenizer) if hit else [],
        snippet=_clean(snippet(preview, stems, tokenizer, FULL_WORDS if full else SNIPPET_WORDS)),
        # A filter-only search (or a redrawn post) ranks nothing: no score to show.
        score=round(hit.score, 4) if hit and hit.score > 0 else None,
        title_match=bool(hit and hit.title_match),
        reason=reason or (NEAR_IN_MEANING if hit and hit.by_meaning and not hit.matched else ""),
        tags=list(paper.tags),
        notes=[readable(note) for note in paper.notes] if full else [],
        sources=source_lines(paper) if sources else [],
        added_by=added_by,
    )


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()

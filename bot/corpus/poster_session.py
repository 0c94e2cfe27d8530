"""A conference poster-session page copied as text (ICLR 2023 style).

    Poster Session 3                                   <- page heading, not a paper
    In-Person Poster presentation / top 5% paper       <- starts a paper
    Outstanding Paper                                  <- optional award line(s)
    Title
    Author A · Author B
    Abstract paragraph(s)
"""

from __future__ import annotations

import re

from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space
from bot.corpus.text import numbered_lines

_PRESENTATION = re.compile(r"^.*\bpresentation / \S.*$", re.I)
# Award lines sit between the presentation line and the title. They are recognised by
# their vocabulary, and only when short, so that a title such as "Best Arm
# Identification ..." is never taken for an award.
_AWARD = re.compile(
    r"^(?:(?:outstanding|best|distinguished)\s+(?:student\s+)?(?:paper|poster|presentation)"
    r"|honou?rable\s+mentions?|runner[- ]up|test\s+of\s+time)\b|\bawards?$",
    re.I,
)
_AWARD_MAX = 60
_HEADING_MAX = 100


def looks_like(text: str) -> bool:
    return any(_PRESENTATION.match(line.strip()) for _, line in numbered_lines(text)[:50])


def parse(text: str, path: str) -> list[PaperRecord]:
    lines = [(n, clean_space(line)) for n, line in numbered_lines(text)]
    starts = [i for i, (_, line) in enumerate(lines) if _PRESENTATION.match(line)]
    for n, line in lines[: starts[0] if starts else len(lines)]:
        if len(line) > _HEADING_MAX:
            raise CorpusFormatError(path, n, "text before the first presentation line")
    ends = starts[1:] + [len(lines)]
    return [_paper(lines[start:end], path) for start, end in zip(starts, ends, strict=True)]


def _paper(block: list[tuple[int, str]], path: str) -> PaperRecord:
    line, presentation = block[0]
    how, _, decision = presentation.partition(" / ")
    rest = block[1:]
    awards = []
    while rest and len(rest[0][1]) <= _AWARD_MAX and _AWARD.search(rest[0][1]):
        awards.append(rest.pop(0)[1])
    if len(rest) < 3:
        last = (rest or block)[-1][0]
        raise CorpusFormatError(
            path, last, "paper without title, authors and abstract; is the file truncated?"
        )
    (_, title), (_, authors), *abstract = rest
    return PaperRecord(
        title=title,
        line=line,
        authors=[a for a in (clean_space(x) for x in authors.split("·")) if a],
        abstract=clean_space(" ".join(text for _, text in abstract)),
        track=_decision(decision),
        presentation=how,
        award="; ".join(awards) or None,
    )


def _decision(text: str) -> str:
    """"top 25% paper" -> "top 25%"; "poster accept" stays as it is."""
    return re.sub(r"\s+paper$", "", clean_space(text).lower())

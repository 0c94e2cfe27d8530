"""OpenReview listings saved as Markdown: one `## [Title](url)` block per paper.

    ## [Title](#)            (or "## Title" without the link)
    - Author A, Author B
    - abstract@[open-review\\(Poster\\)](#): The abstract...
    continuation paragraphs of the abstract, until the next "## "
"""

from __future__ import annotations

import re

from bot.corpus.identifiers import normalise_ids
from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space

_HEADING = re.compile(r"^## (.*)$", re.M)
_LINKED_TITLE = re.compile(r"^\[(.*)\]\(([^)]*)\)$")
_ABSTRACT = re.compile(r"^- abstract@\[(.*?)\]\(([^)]*)\):(.*)$")
_ABSTRACT_LINE = re.compile(r"^- abstract@\[", re.M)
# The Markdown escapes a converter puts before punctuation; escaped backslashes too, so
# `\\$` needs two passes (`\$`, then `$`).
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!$|~<>'\"])")
_TRACK = re.compile(r"\(([^()]+)\)\s*$")
# A LaTeX command whose backslash the export lost, right after a tie ("AdaGCN~footnote{...}"):
# read as prose, its closing brace was left on the card ("available at ....}.").
_LOST_BACKSLASH = re.compile(r"(?<=~)(footnote|cite[pt]?|ref|eqref|url|href|emph|textbf|textit)(?=\{)")


def looks_like(text: str) -> bool:
    return bool(_HEADING.search(text)) and bool(_ABSTRACT_LINE.search(text))


def unescape(text: str) -> str:
    while (plain := _ESCAPE.sub(r"\1", text)) != text:
        text = plain
    return text


def parse(text: str, path: str) -> list[PaperRecord]:
    lines = text.split("\n")
    starts = [n for n, line in enumerate(lines) if line.startswith("## ")]
    for n, line in enumerate(lines[: starts[0] if starts else len(lines)], 1):
        if line.strip():
            raise CorpusFormatError(path, n, "text before the first '## ' paper heading")
    ends = starts[1:] + [len(lines)]
    return [_block(lines[start:end], start + 1, path) for start, end in zip(starts, ends, strict=True)]


def _block(lines: list[str], line: int, path: str) -> PaperRecord:
    """One paper: heading, optional author bullet, abstract bullet and its continuation."""
    heading = lines[0][3:].strip()
    linked = _LINKED_TITLE.match(heading)
    title = clean_space(unescape(linked.group(1) if linked else heading))
    if not title:
        raise CorpusFormatError(path, line, "paper heading without a title")
    record = PaperRecord(title=title, line=line, url=_url(linked.group(2)) if linked else None)
    abstract: list[str] | None = None
    for text in lines[1:]:
        marker = _ABSTRACT.match(text)
        if abstract is not None:
            abstract.append(text)
        elif marker:
            label = unescape(marker.group(1))
            track = _TRACK.search(label)
            record.track = track.group(1).strip() if track else None
            record.url = record.url or _url(marker.group(2))
            abstract = [marker.group(3)]
        elif text.startswith("- ") and not record.authors:
            record.authors = [a for a in (clean_space(x) for x in text[2:].split(",")) if a]
    record.abstract = _LOST_BACKSLASH.sub(r"\\\1", clean_space(" ".join(abstract or [])))
    record.external_ids = normalise_ids({}, record.url)  # a forum link names the paper
    if not record.abstract:
        raise CorpusFormatError(
            path, line, f"paper {title!r} has no abstract; is the file truncated?"
        )
    return record


def _url(target: str) -> str | None:
    """Link targets are "#" placeholders in these listings; keep only real addresses."""
    target = target.strip()
    return target if target and target != "#" else None

"""Abstracts grouped under topic headings, without paper titles.

    ICLR 2022 Interesting Paper Review        <- document title (first line, if short); one that
                                                   starts "VENUE YEAR" gives each paper both
    abstract paragraph                          <- a paper without a topic
    Continual Learning                          <- heading: the tag of what follows
    abstract paragraph                          <- a paper tagged "Continual Learning"

Each abstract gets a derived display title (`title_derived=True`).
"""

from __future__ import annotations

from bot.corpus.listing import ListingFacts, from_header
from bot.corpus.records import CorpusFormatError, PaperRecord
from bot.corpus.text import Paragraph, derive_title, ends_sentence, paragraphs, unique_title

# Headings are a few words; abstracts are hundreds of characters.
_HEADING_MAX = 120
_PROSE_MIN = 200
_PROSE_PARAGRAPHS = 3


def looks_like(text: str) -> bool:
    """Several long prose paragraphs, the rest short lines: the last-resort guess.

    The last paragraph may be anything, so that a truncated file is still recognised
    and then reported as truncated rather than as unknown.
    """
    found = paragraphs(text)
    prose = [p for p in found if len(p.text) >= _PROSE_MIN]
    return len(prose) >= _PROSE_PARAGRAPHS and all(
        len(p.text) >= _PROSE_MIN or _is_heading(p) for p in found[:-1]
    )


def parse(text: str, path: str) -> list[PaperRecord]:
    found = paragraphs(text)
    header = ListingFacts()
    if found and _is_heading(found[0]):
        header = from_header(found[0].text)  # "ICLR 2022 ...": the venue of every paper here
        found = found[1:]  # the document's own title
    _check_complete(found, path)
    records: list[PaperRecord] = []
    taken: set[str] = set()
    tag: str | None = None
    for paragraph in found:
        if _is_heading(paragraph):
            tag = paragraph.text
            continue
        title = unique_title(derive_title(paragraph.text), taken)
        records.append(
            PaperRecord(
                title=title,
                line=paragraph.line,
                abstract=paragraph.text,
                tags=[tag] if tag else [],
                title_derived=True,
            )
        )
    header.fill(records)
    return records


def _is_heading(paragraph: Paragraph) -> bool:
    return len(paragraph.lines) == 1 and len(paragraph.text) <= _HEADING_MAX


def _check_complete(found: list[Paragraph], path: str) -> None:
    """A file cut short ends on a heading or in the middle of a sentence."""
    if not found:
        return
    last = found[-1]
    if _is_heading(last):
        message = "heading with no abstract after it"
    elif not ends_sentence(last.text):
        message = "the last abstract stops mid-sentence"
    else:
        return
    raise CorpusFormatError(path, last.line, f"{message}; is the file truncated?")

"""A conference blog post reviewing papers, with a table of content and a reading list.

    intro paragraph
    Table of Content
    Category A                                 <- the categories (tags), never papers
    Category B
    Category A                                 <- optional category heading of a section
    Paper title                                <- or a paragraph quoting the title
    review paragraphs                          <- the paper's notes
    <Back to Table of Content>                 <- ends every section
    ...
    intro sentence of the closing list
      1. Title                                 <- title-only papers
        • remark                               <- a note of that paper
"""

from __future__ import annotations

import re

from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space, title_key
from bot.corpus.text import Paragraph, paragraphs

_TOC = re.compile(r"^\s*table of contents?\s*$", re.I | re.M)
_BACK = re.compile(r"^\s*<\s*back to table of contents?\s*>\s*$", re.I | re.M)
_ITEM = re.compile(r"^\s*\d+[.)]\s+(.+)$")
_BULLET = re.compile(r"^\s*[•*·–-]\s*")
_QUOTED = re.compile(r"[“\"]([^”\"]{10,})[”\"]")
_TITLE_MAX = 200


def looks_like(text: str) -> bool:
    return bool(_BACK.search(text) or _TOC.search(text))


def parse(text: str, path: str) -> list[PaperRecord]:
    lines = text.split("\n")
    body_start, categories = _table_of_content(lines)
    sections = _sections(lines, body_start)
    closing = sections.pop() if len(sections) > 1 else []
    reviewed = _reviews(sections, categories, path)
    if closing and not any(_ITEM.match(line) for p in closing for line in p.lines):
        raise CorpusFormatError(
            path, closing[0].line,
            "section not closed by <Back to Table of Content>; is the file truncated?",
        )
    return _merge(reviewed, _reading_list(closing))


def _table_of_content(lines: list[str]) -> tuple[int, list[str]]:
    """Where the reviews begin (0-based) and the category names the table lists."""
    for n, line in enumerate(lines):
        if _TOC.match(line):
            entries = paragraphs("\n".join(lines[n + 1 :]), n + 2)
            if not entries:
                return len(lines), []
            first = entries[0]
            return first.line - 1 + len(first.lines), [clean_space(x) for x in first.lines]
    return 0, []


def _sections(lines: list[str], start: int) -> list[list[Paragraph]]:
    """The paragraphs between the <Back to Table of Content> markers."""
    sections: list[list[Paragraph]] = []
    chunk_start = start
    for n in range(start, len(lines) + 1):
        if n == len(lines) or _BACK.match(lines[n]):
            sections.append(paragraphs("\n".join(lines[chunk_start:n]), chunk_start + 1))
            chunk_start = n + 1
    return sections


def _reviews(
    sections: list[list[Paragraph]], categories: list[str], path: str
) -> list[PaperRecord]:
    known = {title_key(c) for c in categories}
    records: list[PaperRecord] = []
    category: str | None = None
    for section in sections:
        if len(section) > 1 and _is_short(section[0]) and (
            title_key(section[0].text) in known or _is_short(section[1])
        ):
            category = section[0].text
            section = section[1:]
        if section:
            records.append(_review(section, path, category))
    return records


def _review(section: list[Paragraph], path: str, category: str | None) -> PaperRecord:
    """The title is the section's first short line, else the one quoted in its first paragraph."""
    head = section[0]
    if _is_short(head):
        title, notes = head.text, section[1:]
    else:
        quoted = _QUOTED.search(head.text)
        if quoted is None:
            raise CorpusFormatError(path, head.line, "cannot find the reviewed paper's title")
        title, notes = clean_space(quoted.group(1)), section
    if not notes:
        raise CorpusFormatError(
            path, head.line, f"no review text for {title!r}; is the file truncated?"
        )
    return PaperRecord(
        title=title,
        line=head.line,
        tags=[category] if category else [],
        notes=[_note(p.lines) for p in notes],
    )


def _reading_list(closing: list[Paragraph]) -> list[PaperRecord]:
    """Numbered titles, each with the lines under it as notes; text before item 1 is an intro."""
    records: list[PaperRecord] = []
    for paragraph in closing:
        for offset, line in enumerate(paragraph.lines):
            item = _ITEM.match(line)
            if item:
                title = clean_space(item.group(1))
                records.append(PaperRecord(title=title, line=paragraph.line + offset))
            elif records:
                records[-1].notes.append(clean_space(_BULLET.sub("", line, count=1)))
    return records


def _merge(reviewed: list[PaperRecord], listed: list[PaperRecord]) -> list[PaperRecord]:
    """A listed paper that was also reviewed is one paper: the review gains the list's notes."""
    by_key = {title_key(r.title): r for r in reviewed}
    for record in listed:
        key = title_key(record.title)
        if key in by_key:
            by_key[key].notes.extend(record.notes)
        else:
            by_key[key] = record
    return list(by_key.values())


def _is_short(paragraph: Paragraph) -> bool:
    """A title-like line: one line, short, not a sentence ending in "." or ":"."""
    text = paragraph.text
    return len(paragraph.lines) == 1 and len(text) <= _TITLE_MAX and not text.endswith((".", ":"))


def _note(lines: list[str]) -> str:
    """One note per paragraph; list items keep their own lines."""
    return "\n".join(clean_space(line) for line in lines)

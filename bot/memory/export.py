"""Papers for reference managers and for another library: what a channel read, a collection, or the
whole library. BibTeX here (with a channel's notes as `annote`, which Zotero imports as
notes), RIS and CSL-JSON in bot.memory.citations, and JSON Lines (papers only, not a backup: the schema
`paperclub import` reads; a channel's papers each with a "channel" object beside it:
when it was posted, its tally and the channel's notes)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import IO, Any

import bibtexparser
from bibtexparser.library import Library as BibLibrary
from bibtexparser.model import Entry as BibEntry
from bibtexparser.model import Field

from bot.cards.latex import readable
from bot.corpus.export import export_record
from bot.memory.citations import batches, csl_json_chunks, ris_chunks
from bot.memory.kinds import ARXIV_CATEGORY, publication_kind
from bot.memory.names import split_name
from bot.memory.record import Entry, posted_note
from bot.messages import ChannelRef
from store.models import Paper

FORMATS = ("bibtex", "ris", "csljson", "jsonl")
BIBTEX_TYPES = {"conference": ("inproceedings", "booktitle"), "journal": ("article", "journal"),
                "preprint": ("misc", None)}
# Characters LaTeX reads as commands: written escaped, so a title like "R&D at 50%" or
# "~1 dB" stays text (a bare ~ is a space to LaTeX, a bare ^ an error outside math).
_LATEX_SPECIAL = re.compile(r"[&%$#_~^]")
_COMMANDS = {"~": r"\textasciitilde", "^": r"\textasciicircum"}  # the others take a backslash
# An @ first on a line: bibtexparser starts a new entry there ("@x(" in a note pasted from
# a .bib file), even inside a value.
_LINE_START_AT = re.compile(r"^(\s*)@", re.M)
# A word BibTeX reads in an author field: "and" between two names, "others" for et al.
_NAME_WORD = re.compile(r"(?:^|\s)(?:and|others)(?:\s|$)", re.I)


def write(entries: Iterable[Entry], channel: ChannelRef | None, fmt: str, out: IO[str]) -> int:
    """Write the entries in `fmt` (one of FORMATS), a chunk at a time (a whole library
    is written without holding it); how many were written. `channel` is the channel they
    were read in, or None for a collection or the library."""
    counted = _Counted(entries)
    writer = {"bibtex": bibtex_chunks, "ris": ris_chunks, "csljson": csl_json_chunks}.get(fmt, _jsonl_chunks)
    for text in writer(counted, channel):
        out.write(text)
    return counted.count


class _Counted:
    """The entries, counted as they are read."""

    def __init__(self, entries: Iterable[Entry]):
        self.entries, self.count = entries, 0

    def __iter__(self) -> Iterator[Entry]:
        for entry in self.entries:
            self.count += 1
            yield entry


def _jsonl_chunks(entries: Iterable[Entry], channel: ChannelRef | None) -> Iterator[str]:
    for entry in entries:
        yield json.dumps(jsonl_record(entry, channel), ensure_ascii=False) + "\n"


def jsonl_record(entry: Entry, channel: ChannelRef | None) -> dict[str, Any]:
    record = export_record(entry.paper)
    if channel is None:
        return record
    record["channel"] = {
        "channel": channel.key(),
        "posted": entry.posted.isoformat() if entry.posted else None,
        "tally": vars(entry.tally) if entry.tally else None,
        "notes": [{"user": n.user, "date": n.day.isoformat(), "text": n.text} for n in entry.notes],
    }
    return record


def bibtex(entries: Iterable[Entry], channel: ChannelRef | None) -> str:
    return "".join(bibtex_chunks(entries, channel))


def bibtex_chunks(entries: Iterable[Entry], channel: ChannelRef | None) -> Iterator[str]:
    """The entries as BibTeX, a chunk at a time; keys are unique across the chunks."""
    keys: set[str] = set()
    for n, batch in enumerate(batches(entries)):
        library = BibLibrary()
        for entry in batch:
            kind, _ = entry_type(entry.paper)
            library.add(BibEntry(kind, _key(entry, keys), _fields(entry, channel)))
        yield ("\n" if n else "") + bibtexparser.write_string(library)


def entry_type(paper: Paper) -> tuple[str, str | None]:
    """The BibTeX entry type for the paper and the field its venue goes in: a conference
    paper is @inproceedings with booktitle, a journal's @article with journal, and a paper
    with no venue (a preprint: eprint and archivePrefix say where) @misc."""
    return BIBTEX_TYPES[publication_kind(paper)]


def _fields(entry: Entry, channel: ChannelRef | None) -> list[Field]:
    paper = entry.paper
    ids = paper.ids()
    arxiv = ids.get("arxiv", "")
    _, venue_field = entry_type(paper)
    primary = paper.tags[0] if arxiv and paper.tags and ARXIV_CATEGORY.match(paper.tags[0]) else ""
    values = {
        "title": entry.title,
        "author": " and ".join(filter(None, map(_author, paper.authors))),
        venue_field or "": paper.venue or "",
        "year": str(paper.year) if paper.year else "",
        "doi": ids.get("doi", ""),
        "url": entry.url or "",
        "eprint": arxiv,
        "archiveprefix": "arXiv" if arxiv else "",
        "primaryclass": primary,
        "abstract": readable(paper.abstract),  # whole: the entry's own is the page's preview
        "note": posted_note(entry, channel),
        "annote": "\n\n".join(f"@{n.user}, {n.day:%Y-%m-%d}: {n.text}" for n in entry.notes),
    }
    raw = ("url", "doi", "eprint", "primaryclass")  # identifiers are copied as they are, on one line
    # bibtexparser's writer encloses each value in braces itself.
    return [Field(name, v if name == "author" else " ".join(_braced(v).split()) if name in raw else _text(v))
            for name, v in values.items() if name and v]


def _author(name: str) -> str:
    """A name as BibTeX reads one person: as written ("Ada Lovelace", "Turing, Alan") when
    its rules split it as the other formats do (bot.memory.names), else in braces, whole
    ("{Barnes and Noble}", "{Smith, ?}", "{a, b, c, d}"), so that an "and" or a third comma
    in it makes no second person and no error. "Mallory }" is "Mallory": braces are dropped
    from every value."""
    text = _text(name, in_name=True)
    one_word = not re.search(r"[\s,]", text)  # BibTeX takes it whole anyway
    if text and (_NAME_WORD.search(text) or not (one_word or split_name(text))):
        return "{" + text + "}"
    return text


def _braced(value: str) -> str:
    """A value that cannot close its braces early: braces and backslashes dropped."""
    return re.sub(r"[{}\\]", "", value)


def _text(value: str, in_name: bool = False) -> str:
    """A value as BibTeX text: braces and backslashes dropped (nothing can close the value
    early or start a command), spaces collapsed unless it has paragraphs (notes; a line
    that starts with @ has it in braces, "{@}"), LaTeX's special characters escaped: "\\%",
    "\\textasciitilde{}". In a name each escape is a group of its own, "{\\%}", as BibTeX's
    name splitters read a word: bibtexparser's skips the character after a backslash, so
    "x \\% and y" would be one person, "x"."""
    value = _braced(value)
    if "\n" not in value or in_name:
        value = " ".join(value.split())

    def escaped(special: re.Match[str]) -> str:
        command = _COMMANDS.get(special[0], "\\" + special[0])
        return "{" + command + "}" if in_name else command + ("{}" if special[0] in _COMMANDS else "")

    return _LINE_START_AT.sub(r"\1{@}", _LATEX_SPECIAL.sub(escaped, value))


def _key(entry: Entry, taken: set[str]) -> str:
    """author + year + first title word (doe2021attention), made unique with a, b, ..."""
    first = next((words[-1] for name in entry.paper.authors if (words := name.split())), "paper")
    word = next((w for w in entry.title.split() if len(w) > 3), "paper")
    base = _ascii(first) + str(entry.paper.year or "") + _ascii(word) or f"paper{entry.paper_id}"
    key, n = base, 0
    while key in taken:
        n += 1
        key = f"{base}{chr(ord('a') + (n - 1) % 26)}{(n - 1) // 26 or ''}"
    taken.add(key)
    return key


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())

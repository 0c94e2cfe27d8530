"""What a channel read, for Zotero (BibTeX, with the channel's notes as `annote`, which
Zotero imports as notes) and for backups (JSON Lines in the schema `paperclub import`
reads, each paper with a "channel" object beside it: when it was posted, its tally and
the channel's notes)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from typing import IO

import bibtexparser
from bibtexparser.library import Library as BibLibrary
from bibtexparser.model import Entry as BibEntry
from bibtexparser.model import Field

from bot.cards.latex import readable
from bot.corpus.export import export_record
from bot.memory.record import Entry
from bot.messages import ChannelRef

FORMATS = ("bibtex", "jsonl")
# Characters LaTeX reads as commands: written escaped, so a title like "R&D at 50%" stays text.
_LATEX_SPECIAL = re.compile(r"([&%$#_])")


def write(entries: list[Entry], channel: ChannelRef, fmt: str, out: IO[str]) -> int:
    if fmt == "bibtex":
        out.write(bibtex(entries, channel))
    else:
        for entry in entries:
            out.write(json.dumps(jsonl_record(entry, channel), ensure_ascii=False) + "\n")
    return len(entries)


def jsonl_record(entry: Entry, channel: ChannelRef) -> dict:
    record = export_record(entry.paper)
    record["channel"] = {
        "channel": channel.key(),
        "posted": entry.posted.isoformat() if entry.posted else None,
        "tally": vars(entry.tally) if entry.tally else None,
        "notes": [{"user": n.user, "date": n.day.isoformat(), "text": n.text} for n in entry.notes],
    }
    return record


def bibtex(entries: Iterable[Entry], channel: ChannelRef) -> str:
    library = BibLibrary()
    keys: set[str] = set()
    for entry in entries:
        kind, _ = entry_type(entry.paper)
        library.add(BibEntry(kind, _key(entry, keys), _fields(entry, channel)))
    return bibtexparser.write_string(library)


# A venue that names a conference (or its proceedings, a workshop, a symposium): the paper
# is an @inproceedings; one that names arXiv is no venue at all; any other is a journal.
_CONFERENCE = re.compile(
    r"conference|proceedings|workshop|symposium|neural information processing systems|"
    r"\b(neurips|nips|iclr|icml|cvpr|iccv|eccv|acl|emnlp|naacl|coling|aaai|ijcai|kdd|sigir|www|colt|"
    r"aistats|uai|corl|rss|interspeech|icassp|miccai|wacv|bmvc|icra|iros|chi|uist|sigmod|vldb)\b",
    re.I,
)
_PREPRINT_VENUE = re.compile(r"^\s*(arxiv|corr)\b", re.I)
# An arXiv category (cs.LG, stat.ML, astro-ph.CO, cond-mat.stat-mech): arXiv papers carry
# their primary one as their first tag.
_ARXIV_CATEGORY = re.compile(r"^[a-z]+(-[a-z]+)?\.[A-Za-z]+(-[a-z]+)?$")


def entry_type(paper) -> tuple[str, str | None]:
    """The BibTeX entry type for the paper and the field its venue goes in: a conference
    paper (its venue names one, or it has a track or presentation such as "Poster") is
    @inproceedings with booktitle, a journal's @article with journal, and a paper with no
    venue (a preprint: eprint and archivePrefix say where) @misc."""
    venue = (paper.venue or "").strip()
    if not venue or _PREPRINT_VENUE.match(venue):
        return "misc", None
    if _CONFERENCE.search(venue) or paper.track or paper.presentation:
        return "inproceedings", "booktitle"
    return "article", "journal"


def _fields(entry: Entry, channel: ChannelRef) -> list[Field]:
    paper = entry.paper
    ids = paper.ids()
    arxiv = ids.get("arxiv", "")
    _, venue_field = entry_type(paper)
    primary = paper.tags[0] if arxiv and paper.tags and _ARXIV_CATEGORY.match(paper.tags[0]) else ""
    values = {
        "title": entry.title,
        "author": " and ".join(paper.authors),
        venue_field or "": paper.venue or "",
        "year": str(paper.year) if paper.year else "",
        "doi": ids.get("doi", ""),
        "url": entry.url or "",
        "eprint": arxiv,
        "archiveprefix": "arXiv" if arxiv else "",
        "primaryclass": primary,
        "abstract": readable(paper.abstract),  # whole: the entry's own is the page's preview
        "note": _posted(entry, channel),
        "annote": "\n\n".join(f"@{n.user}, {n.day:%Y-%m-%d}: {n.text}" for n in entry.notes),
    }
    raw = ("url", "doi", "eprint", "primaryclass")  # identifiers are copied as they are
    # bibtexparser's writer encloses each value in braces itself.
    return [Field(name, _braced(v) if name in raw else _text(v)) for name, v in values.items() if name and v]


def _posted(entry: Entry, channel: ChannelRef) -> str:
    if entry.posted is None:
        return f"Read in {channel.key()}"
    tally = entry.tally
    votes = f" ({tally.up} up, {tally.down} down, {tally.read} read)" if tally else ""
    return f"Posted in {channel.key()} on {entry.posted:%Y-%m-%d}{votes}"


def _braced(value: str) -> str:
    """A value that cannot close its braces early: braces and backslashes dropped."""
    return re.sub(r"[{}\\]", "", value)


def _text(value: str) -> str:
    return _LATEX_SPECIAL.sub(r"\\\1", _braced(" ".join(value.split()) if "\n" not in value else value))


def _key(entry: Entry, taken: set[str]) -> str:
    """author + year + first title word (doe2021attention), made unique with a, b, ..."""
    first = entry.paper.authors[0].split()[-1] if entry.paper.authors else "paper"
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

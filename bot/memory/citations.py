"""RIS and CSL-JSON: the two other formats reference managers read (Zotero, Mendeley,
EndNote take RIS; Zotero, Pandoc and citeproc take CSL-JSON).

Each paper gets the type its venue calls for, as in the BibTeX export (a conference
paper, a journal article, a preprint with its arXiv number), and keeps its year, venue,
DOI and link where known. Text is written as it reads: a title in LaTeX
("$\\epsilon$-Greedy") becomes "ε-Greedy", since neither format knows LaTeX.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import rispy

from bot.cards.latex import readable
from bot.memory.kinds import publication_kind
from bot.memory.names import split_name
from bot.memory.record import Entry, posted_note
from bot.messages import ChannelRef

# The kind of publication (bot.memory.kinds) -> RIS type (TY) and CSL type. A preprint is RIS's unpublished work
# and CSL's "article" (Zotero's own mapping of its preprint type), numbered by arXiv.
RIS_TYPES = {"conference": "CPAPER", "journal": "JOUR", "preprint": "UNPB"}
CHUNK = 500  # entries formatted at a time
CSL_TYPES = {"conference": "paper-conference", "journal": "article-journal", "preprint": "article"}


def ris(entries: Iterable[Entry], channel: ChannelRef | None) -> str:
    """The entries as RIS, written by rispy (so every tag and the ER line are right)."""
    return "".join(ris_chunks(entries, channel))


def ris_chunks(entries: Iterable[Entry], channel: ChannelRef | None) -> Iterator[str]:
    for batch in batches(entries):
        yield rispy.dumps([_ris_record(entry, channel) for entry in batch])


def _ris_record(entry: Entry, channel: ChannelRef | None) -> dict[str, str | list[str]]:
    paper = entry.paper
    kind = publication_kind(paper)
    ids = paper.ids()
    notes = [note for note in (posted_note(entry, channel), _arxiv_note(ids.get("arxiv"))) if note]
    notes += [f"@{n.user}, {n.day:%Y-%m-%d}: {n.text}" for n in entry.notes]
    record: dict[str, str | list[str]] = {
        "type_of_reference": RIS_TYPES[kind],
        "title": _line(entry.title),
        "authors": [name for name in map(_text, paper.authors) if name],
        "year": str(paper.year) if paper.year else "",
        # T2 is the journal of an article and the proceedings of a conference paper.
        "secondary_title": _text(paper.venue or "") if kind != "preprint" else "",
        "doi": _line(ids.get("doi", "")),  # identifiers on one line too: a line break ends the field
        # A reader splits UR at ";" (several links in one line): a link's own is percent-encoded.
        "urls": [_line(entry.url).replace(";", "%3B")] if entry.url else [],
        "abstract": _text(paper.abstract),
        "publisher": "arXiv" if kind == "preprint" and ids.get("arxiv") else "",
        "number": _line(ids.get("arxiv", "")) if kind == "preprint" else "",
        "keywords": [tag for tag in map(_text, paper.tags) if tag],
        "notes": [_line(n) for n in notes],
    }
    return {key: value for key, value in record.items() if value}


def csl_json(entries: Iterable[Entry], channel: ChannelRef | None) -> str:
    """The entries as a CSL-JSON array (one item each, `id` unique in the file)."""
    return "".join(csl_json_chunks(entries, channel))


def csl_json_chunks(entries: Iterable[Entry], channel: ChannelRef | None) -> Iterator[str]:
    """The array an item a line, written as the items come."""
    yield "["
    for n, entry in enumerate(entries):
        yield ("," if n else "") + "\n" + json.dumps(_csl_item(entry, channel), ensure_ascii=False)
    yield "\n]\n"


def batches(entries: Iterable[Entry], size: int = CHUNK) -> Iterator[list[Entry]]:
    """The entries in lists of `size`: formatted a list at a time, an export never holds
    the whole library."""
    batch: list[Entry] = []
    for entry in entries:
        batch.append(entry)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _csl_item(entry: Entry, channel: ChannelRef | None) -> dict[str, object]:
    paper = entry.paper
    kind = publication_kind(paper)
    ids = paper.ids()
    arxiv = ids.get("arxiv", "")
    item: dict[str, object] = {
        "id": f"paperclub-{paper.id}",
        "type": CSL_TYPES[kind],
        "title": _line(entry.title),
        "author": [_csl_name(name) for name in map(_text, paper.authors) if name],
        "issued": {"date-parts": [[paper.year]]} if paper.year else None,
        "container-title": _text(paper.venue or "") if kind != "preprint" else "",
        "DOI": ids.get("doi", ""),
        "URL": entry.url or "",
        "abstract": _text(paper.abstract),
        "number": arxiv if kind == "preprint" else "",
        "publisher": "arXiv" if kind == "preprint" and arxiv else "",
        "note": "\n".join(filter(None, [posted_note(entry, channel), _arxiv_note(arxiv)])),
    }
    return {key: value for key, value in item.items() if value}


def _csl_name(text: str) -> dict[str, str]:
    """"Alan M. Turing" -> family Turing, given Alan M. (bot.memory.names: "Ludwig van
    Beethoven" and "Turing, Alan" split as a reference manager expects); a name those rules
    do not fit ("Anonymous", "Mallory }") is a literal name, written as it reads."""
    name = split_name(text)
    if name is None:
        return {"literal": text}
    split = {"family": name.family, "given": name.given}
    if name.suffix:
        split["suffix"] = name.suffix
    return split


def _arxiv_note(arxiv: str | None) -> str:
    return f"arXiv:{arxiv}" if arxiv else ""


def _line(text: str) -> str:
    """One line: RIS ends a field at a line break."""
    return " ".join(text.split())


def _text(raw: str) -> str:
    """A field as stored (it may hold LaTeX) as one line of readable text."""
    return _line(readable(raw))

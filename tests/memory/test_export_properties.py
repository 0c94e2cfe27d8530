"""Every exporter takes any paper (issue 45): papers with arbitrary titles, authors, venues,
abstracts, identifiers and notes (anything the corpus stores: all of Unicode but NUL and
lone surrogates, with braces, backslashes, LaTeX's specials, "and", commas, line breaks
and RIS tags mixed in) are written by each exporter and read back by the parsers reference
managers use: CSL-JSON by json and citeproc-py, BibTeX by bibtexparser (its names split
as BibTeX splits them, its values decoded as paperclub's BibTeX reader decodes them), RIS
by rispy.

The suite runs EXAMPLES lists of papers per exporter (200); PAPERCLUB_EXPORT_EXAMPLES=10000
runs the issue's ten thousand (a few minutes each).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from datetime import date
from functools import cache

import bibtexparser
import rispy
from bibtexparser.middlewares.names import (
    parse_single_name_into_parts,
    split_multiple_persons_names,
)
from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cards.latex import readable
from bot.corpus.bibtex import _decode_latex
from bot.corpus.records import LIMITS
from bot.memory.citations import csl_json, ris
from bot.memory.export import bibtex, entry_type
from bot.memory.record import Entry, Note, entry_of
from bot.messages import ChannelRef
from bot.services.votes import Tally
from store.models import Paper, PaperExternalId
from tests.memory.test_citation_exports import STYLE

EXAMPLES = int(os.environ.get("PAPERCLUB_EXPORT_EXAMPLES", "200"))
CHANNEL = ChannelRef("console", "local", "reading")
# What the database stores (bot.corpus.records refuses NUL and lone surrogates), and the
# pieces that broke or could break a format: BibTeX's braces, escapes, "and" and commas in
# names, an @ first on a line; line breaks of every kind, RIS tags, ";" (rispy splits links
# at it) and a byte-order mark; LaTeX and markup.
STORABLE = st.characters(exclude_categories=("Cs",), exclude_characters="\0")
TRICKY = ["{", "}", "\\", "%", "$", "&", "#", "_", "~", "^", "@", ",", ", ", ";", " and ", "and", "others",
          " van ", "Mallory }", "Jr.", "Ada Lovelace", "A", " ", "\u0301",
          "\n", "\r\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\ufeff",
          "ER  - ", "\nER  - \n", "TY  - JOUR", "@misc{x,", "\n@misc(", "(",
          "$x^2$", r"\textit{", r"\'e", r"\\", "``", "''", '"', "}}", "{{", "<i>", "&amp;"]
TEXT = st.lists(st.one_of(st.sampled_from(TRICKY), st.text(STORABLE, max_size=6)), max_size=8).map("".join)
# A venue of each kind (conference, preprint, journal), as the exporters type papers by it.
VENUE = st.none() | st.builds(lambda kind, rest: (kind + rest)[: LIMITS["venue"]],
                              st.sampled_from(["", "ICLR ", "arXiv ", "Journal of "]), TEXT)


@st.composite
def papers(draw: st.DrawFn) -> list[Entry]:
    """One to three papers as an export gets them, each with the notes of a channel."""
    entries = []
    for paper_id in range(1, draw(st.integers(1, 3)) + 1):
        ids = draw(st.dictionaries(st.sampled_from(["doi", "arxiv"]), TEXT.filter(str.strip), max_size=2))
        paper = Paper(id=paper_id, title=draw(TEXT), title_key="", authors=draw(st.lists(TEXT, max_size=4)),
                      abstract=draw(TEXT), url=draw(st.none() | TEXT.map("https://example.org/".__add__)),
                      venue=draw(VENUE), year=draw(st.none() | st.integers(1000, 2200)),
                      tags=draw(st.lists(TEXT, max_size=2)), notes=[], sources=[],
                      external_ids=[PaperExternalId(scheme=s, value=v) for s, v in ids.items()])
        entry = entry_of(paper)
        entry.notes = [Note(draw(TEXT), date(2026, 10, 1), text) for text in draw(st.lists(TEXT, max_size=3))]
        if draw(st.booleans()):
            entry.posted, entry.tally = date(2026, 9, 30), Tally(up=2, down=1, read=0)
        entries.append(entry)
    return entries


CHECKED = settings(max_examples=EXAMPLES, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CHANNELS = st.sampled_from([CHANNEL, None])


def line(text: str) -> str:
    return " ".join(text.split())


def names(entry: Entry) -> list[str]:
    """The authors as the formats that read LaTeX write them (CSL-JSON, RIS): each as one
    line of readable text, blank ones left out."""
    return [name for name in (line(readable(a)) for a in entry.paper.authors) if name]


@cache
def style() -> CitationStylesStyle:
    return CitationStylesStyle(STYLE, validate=False)


@CHECKED
@given(papers(), CHANNELS)
def test_csl_json_of_any_paper_is_json_that_citeproc_renders(entries, channel):
    items = json.loads(csl_json(entries, channel))
    assert [item["id"] for item in items] == [f"paperclub-{e.paper_id}" for e in entries]
    for item, entry in zip(items, entries, strict=True):
        assert item.get("title", "") == line(entry.title)
        expected = names(entry)
        assert len(item.get("author", [])) == len(expected)
        for name, text in zip(item.get("author", []), expected, strict=True):
            # a literal name as it reads, or both parts of a split one, each taken from it
            assert name == {"literal": text} or (name["family"] in text and name["given"] in text), (name, text)
    bibliography = CitationStylesBibliography(style(), CiteProcJSON(items), formatter.plain)
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    assert len(bibliography.bibliography()) == len(items)


def bibtex_text(text: str) -> str:
    """What BibTeX keeps of a value: braces and backslashes dropped, one line, NFC (as
    paperclub's BibTeX reader gives it back)."""
    return unicodedata.normalize("NFC", line(re.sub(r"[{}\\]", "", text)))


@CHECKED
@given(papers(), CHANNELS)
def test_bibtex_of_any_paper_parses_with_each_title_author_venue_and_note_back(entries, channel):
    library = bibtexparser.parse_string(bibtex(entries, channel))
    assert not library.failed_blocks
    assert len(library.entries) == len(entries)
    assert len({e.key for e in library.entries}) == len(entries)
    for parsed, entry in zip(library.entries, entries, strict=True):
        fields = {field.key: str(field.value) for field in parsed.fields}
        assert parsed.entry_type == entry_type(entry.paper)[0]
        assert bibtex_text(_decode_latex(fields.get("title", ""))) == bibtex_text(entry.title)
        # each author one person, as BibTeX splits the field: no "and" in a name made two of
        # it, and no comma or brace made a name its parser refuses
        persons = split_multiple_persons_names(fields.get("author", ""))
        assert [bibtex_text(_decode_latex(p)) for p in persons] == [
            bibtex_text(a) for a in entry.paper.authors if bibtex_text(a)]
        assert all(parse_single_name_into_parts(person) for person in persons)
        _, venue_field = entry_type(entry.paper)
        if venue_field:
            assert bibtex_text(_decode_latex(fields[venue_field])) == bibtex_text(entry.paper.venue or "")
        notes = bibtex_text(_decode_latex(fields.get("annote", "")))
        assert all(bibtex_text(note.text) in notes for note in entry.notes)


@CHECKED
@given(papers(), CHANNELS)
def test_ris_of_any_paper_reads_back_with_each_field_on_its_line(entries, channel):
    records = rispy.loads(ris(entries, channel))
    assert len(records) == len(entries)
    for record, entry in zip(records, entries, strict=True):
        assert record.get("title", "") == line(entry.title)
        assert record.get("authors", []) == names(entry)
        assert record.get("doi", "") == line(entry.paper.ids().get("doi", ""))
        assert record.get("urls", []) == ([line(entry.url).replace(";", "%3B")] if entry.url else [])
        assert record.get("keywords", []) == [tag for tag in (line(readable(t)) for t in entry.paper.tags) if tag]
        if record["type_of_reference"] != "UNPB":
            assert record.get("secondary_title", "") == line(readable(entry.paper.venue or ""))
        notes = record.get("notes", [])
        assert all(any(line(note.text) in written for written in notes) for note in entry.notes)

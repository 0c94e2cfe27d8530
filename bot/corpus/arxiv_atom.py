"""arXiv API results: Atom feeds as export.arxiv.org/api/query returns them."""

from __future__ import annotations

import io
import re
import xml.sax
from typing import Any
from xml.parsers.expat import errors as expat_errors

from bot.corpus import identifiers
from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space

_ATOM_NAMESPACE = "http://www.w3.org/2005/Atom"
_ENTRY_TAG = re.compile(r"<(?:\w+:)?entry[\s>]")
_ENTRY_END = re.compile(r"</(?:\w+:)?entry\s*>")
# What expat says when the text runs out rather than breaks: the file was cut.
_RAN_OUT = {
    expat_errors.XML_ERROR_NO_ELEMENTS,
    expat_errors.XML_ERROR_UNCLOSED_TOKEN,
    expat_errors.XML_ERROR_PARTIAL_CHAR,
    expat_errors.XML_ERROR_UNCLOSED_CDATA_SECTION,
}
# The API answers a bad query with a feed whose only entry is the error message.
_API_ERROR = "arxiv.org/api/errors"


def looks_like(text: str) -> bool:
    head = text.lstrip()[:2000]
    return head.startswith(("<?xml", "<feed")) and _ATOM_NAMESPACE in head


def parse(text: str, path: str) -> list[PaperRecord]:
    """Every entry as a record; CorpusFormatError for the first one that cannot be read."""
    records = []
    for found in read_entries(text, path):
        if isinstance(found, CorpusFormatError):
            raise found
        records.append(found)
    return records


def read_entries(text: str, path: str) -> list[PaperRecord | CorpusFormatError]:
    """Each entry as a record, or the error of that entry alone (one without a title), so
    a reader that can do without one entry (a follow) keeps the others. Broken XML and
    the API's own error entry fail the whole feed (CorpusFormatError raised)."""
    import feedparser  # here: detecting formats (every import does) must not load it

    # Handed over as a stream so feedparser never takes the text for a file name or URL;
    # the header says UTF-8 because the text was decoded already, whatever its prolog says.
    feed = feedparser.parse(
        io.BytesIO(text.encode("utf-8")),
        response_headers={"content-type": "application/atom+xml; charset=utf-8"},
    )
    error = feed.get("bozo_exception")
    if isinstance(error, xml.sax.SAXParseException):
        # expat always knows the line; typeshed allows a locator that does not
        raise CorpusFormatError(path, error.getLineNumber() or 1, _broken(error, text))
    # feedparser keeps no positions: the n-th <entry> tag is taken as the n-th entry's
    # start. A tag inside a comment would shift the numbers but never drop an entry.
    lines = [text.count("\n", 0, m.start()) + 1 for m in _ENTRY_TAG.finditer(text)]
    found: list[PaperRecord | CorpusFormatError] = []
    for n, entry in enumerate(feed.entries):
        line = lines[n] if n < len(lines) else 1
        if _API_ERROR in entry.get("id", ""):
            raise CorpusFormatError(path, line, f"the arXiv API reported: {entry.get('summary')}")
        try:
            found.append(_record(entry, line, path))
        except CorpusFormatError as problem:
            found.append(problem)
    return found


def _broken(error: xml.sax.SAXParseException, text: str) -> str:
    """The parser's complaint; for a cut file, also where the cut entry begins."""
    message = f"broken XML ({error.getMessage()})"
    if error.getMessage() not in _RAN_OUT:
        return message
    starts = list(_ENTRY_TAG.finditer(text))
    if starts and not _ENTRY_END.search(text, starts[-1].end()):
        line = text.count("\n", 0, starts[-1].start()) + 1
        return f"{message}: the file ends inside the entry at line {line}; is it truncated?"
    return f"{message}: the file ends before the feed does; is it truncated?"


def _record(entry: Any, line: int, path: str) -> PaperRecord:
    entry_id = entry.get("id", "")
    title = clean_space(entry.get("title", ""))
    if not title:
        raise CorpusFormatError(path, line, "feed entry without a title")
    published = entry.get("published_parsed") or entry.get("updated_parsed")
    return PaperRecord(
        title=title,
        line=line,
        authors=[clean_space(a.get("name", "")) for a in entry.get("authors", []) if a.get("name")],
        abstract=clean_space(entry.get("summary", "")),
        url=_alternate_link(entry) or entry_id or None,
        external_ids=_ids(entry_id, entry.get("arxiv_doi")),
        venue=clean_space(entry.get("arxiv_journal_ref", "")) or "arXiv",
        year=published.tm_year if published else None,
        tags=_categories(entry),
    )


def _alternate_link(entry: Any) -> str | None:
    for link in entry.get("links", []):
        if link.get("rel") == "alternate" and isinstance(href := link.get("href"), str) and href:
            return href
    return None


def _ids(entry_id: str, doi: str | None) -> dict[str, str]:
    """The arXiv id the entry's id (its abstract page) names, and the DOI of its journal
    version, in stored form."""
    arxiv = identifiers.parse(entry_id) if entry_id else None
    ids = {identifiers.ARXIV: arxiv[1]} if arxiv and arxiv[0] == identifiers.ARXIV else {}
    if doi and doi.strip():
        ids[identifiers.DOI] = doi
    return identifiers.normalise_ids(ids)


def _categories(entry: Any) -> list[str]:
    """The primary category first, then the others, each once."""
    primary = entry.get("arxiv_primary_category", {}).get("term")
    terms = [primary] + [tag.get("term") for tag in entry.get("tags", [])]
    return list(dict.fromkeys(t for t in terms if t))

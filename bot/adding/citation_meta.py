"""A paper's page read through its citation_* meta tags (Highwire Press tags: what
Google Scholar asks publishers for, and what ACL Anthology, PMLR, NeurIPS proceedings,
bioRxiv and most journals carry)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from bot.corpus import identifiers
from bot.corpus.records import TITLE_KEY_MAX, PaperRecord, clean_space, title_too_long

_YEAR = re.compile(r"(?<!\d)(1[0-9]|20|21)\d{2}(?!\d)")
_DATE_TAGS = ("citation_publication_date", "citation_date", "citation_online_date", "citation_year")
_VENUE_TAGS = ("citation_conference_title", "citation_journal_title", "citation_book_title",
               "citation_publisher")
_ABSTRACT_TAGS = ("citation_abstract", "description", "og:description", "dc.description")
HEAD_BYTES = 1_000_000  # the meta tags live in <head>; a huge body is not read for them
_PIECE = 65_536  # the first piece read past HEAD_BYTES to finish a meta tag the cut left open


class _MetaTags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "meta":
            return
        named = dict(attrs)
        name = (named.get("name") or named.get("property") or "").strip().lower()
        content = named.get("content")
        if name and content is not None:
            self.tags.setdefault(name, []).append(content)


class TitleTooLong(ValueError):
    """A citation_title longer than any title the library stores (bot.corpus.records)."""

    def __init__(self, length: int):
        super().__init__(f"a citation_title {length:,} characters long, at most {TITLE_KEY_MAX} fit")
        self.length = length
        self.limit = TITLE_KEY_MAX


def meta_tags(html: str) -> dict[str, list[str]]:
    """The page's meta tags, read in its first HEAD_BYTES characters. A meta tag that the
    cut leaves open is read on to its end, in growing pieces (the answer is capped, see
    bot.adding.web): a title run long is then refused as such, not taken for none."""
    parser = _MetaTags()
    parser.feed(html[:HEAD_BYTES])
    read, piece = HEAD_BYTES, _PIECE
    while read < len(html) and parser.rawdata[:5].lower() == "<meta":  # what the parser holds back
        parser.feed(html[read : read + piece])
        read, piece = read + piece, piece * 2
    return parser.tags


def parse_page(html: str, url: str) -> PaperRecord | None:
    """The paper the page describes, or None when it carries no citation_title;
    TitleTooLong for a citation_title no title could be."""
    tags = meta_tags(html)
    title = clean_space(_first(tags, "citation_title"))
    if not title:
        return None
    if (length := title_too_long(title)) is not None:
        raise TitleTooLong(length)
    ids = {}
    if doi := _first(tags, "citation_doi"):
        ids[identifiers.DOI] = doi
    if arxiv := _first(tags, "citation_arxiv_id"):
        ids[identifiers.ARXIV] = arxiv
    pdf = _first(tags, "citation_pdf_url")
    return PaperRecord(
        title=title,
        authors=[clean_space(a) for a in tags.get("citation_author", []) if a.strip()],
        abstract=clean_space(_first(tags, *_ABSTRACT_TAGS)),
        url=url or pdf or None,
        external_ids=identifiers.normalise_ids(ids),
        venue=clean_space(_first(tags, *_VENUE_TAGS)) or None,
        year=_year(_first(tags, *_DATE_TAGS)),
    )


def _first(tags: dict[str, list[str]], *names: str) -> str:
    for name in names:
        for value in tags.get(name, []):
            if value.strip():
                return value.strip()
    return ""


def _year(text: str) -> int | None:
    found = _YEAR.search(text)
    return int(found.group()) if found else None

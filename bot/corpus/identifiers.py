"""Paper identifiers as members type them and sources give them: arXiv ids, DOIs, OpenReview ids.

`parse(text)` reads one identifier in any of its usual spellings and returns
`(scheme, value)` with the value in the one form the library stores:

    arxiv        2106.01345   from 2106.01345v2, arXiv:2106.01345, ARXIV:2106.01345,
                              https://arxiv.org/abs/2106.01345v3, /pdf/2106.01345.pdf,
                              export.arxiv.org/abs/..., 10.48550/arXiv.2106.01345
                 hep-th/9901001, math/0309136 (old style; from math.GT/0309136)
    doi          10.1145/3292500.3330701 (lower case) from doi:10..., https://doi.org/10...,
                 http://dx.doi.org/10...
    openreview   YicbFdNTTy   from https://openreview.net/forum?id=YicbFdNTTy (and /pdf?id=)

The version is not part of the paper (v1 and v5 are one paper), nor is an old-style id's
subject class (arXiv's own canonical form drops it); DOIs compare case-insensitively, so
they are stored in lower case. An arXiv DOI (10.48550/arXiv.ID) is the arXiv id itself,
so it maps to the arxiv scheme: one paper, whichever of the two a source gives.

`normalise(scheme, value)` does the same for an id a source labelled with its scheme,
and `normalise_ids` for a record's whole set. Pure functions, no I/O: readers, the
library's lookups and the future "add by link" all agree on one spelling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qs, unquote, urlsplit

ARXIV = "arxiv"
DOI = "doi"
OPENREVIEW = "openreview"

# arXiv's identifier rules (info.arxiv.org/help/arxiv_identifier): YYMM.NNNN from 2007-04
# to 2014-12, YYMM.NNNNN since 2015-01; before, archive[.SubjectClass]/YYMMNNN.
_NEW_ARXIV = re.compile(r"(\d{2})(\d{2})\.(\d{4,5})(?:v\d+)?", re.ASCII)
_OLD_ARXIV = re.compile(
    r"([a-z]+(?:-[a-z]+)?)(?:\.[a-z-]{2,})?/(\d{2})(\d{2})(\d{3})(?:v\d+)?", re.ASCII | re.I
)
_FIRST_NEW_STYLE = 704  # April 2007
_FIVE_DIGITS_FROM = 1501  # January 2015
# A DOI: "10.", a registrant code (digits, maybe dotted sub-codes), "/", any suffix.
_DOI = re.compile(r"10\.\d{4,9}(?:\.\d+)*/\S+", re.ASCII)
_ARXIV_DOI = "10.48550/arxiv."
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_-]{4,}")
_PREFIX = re.compile(r"(arxiv|doi)\s*:\s*(.+)", re.I | re.S)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.I)
# A link pasted without its scheme: "arxiv.org/abs/...", "doi.org/10...".
_BARE_LINK = re.compile(r"(?:[a-z0-9-]+\.)*(?:arxiv\.org|doi\.org|openreview\.net)/", re.I)
_ARXIV_HOSTS = {"arxiv.org", "www.arxiv.org", "export.arxiv.org"}
_DOI_HOSTS = {"doi.org", "www.doi.org", "dx.doi.org"}
_OPENREVIEW_HOSTS = {"openreview.net", "www.openreview.net"}
# arXiv pages that name a paper in their path: the abstract, the PDF, the HTML version.
_ARXIV_PAGE = re.compile(r"/(?:abs|pdf|html|ps|format)/(.+?)(?:\.pdf)?/?$", re.I)
_OPENREVIEW_PAGE = re.compile(r"/(?:forum|pdf|attachment)/?$", re.I)


def parse(text: str) -> tuple[str, str] | None:
    """(scheme, normalised value) of the identifier `text` spells, or None."""
    text = _unwrap(text.strip())
    if _is_link(text):
        return _from_link(text)
    prefixed = _PREFIX.fullmatch(text)
    if prefixed:
        scheme, rest = prefixed.group(1).lower(), prefixed.group(2).strip()
        return _from_doi(rest) if scheme == DOI else _tagged(ARXIV, arxiv_id(rest))
    return _tagged(ARXIV, arxiv_id(text)) or _from_doi(text)


def arxiv_id(text: str) -> str | None:
    """The canonical arXiv id (no version, no subject class) `text` is, or None."""
    text = text.strip()
    if text[:6].lower() == "arxiv:":
        text = text[6:].strip()
    new = _NEW_ARXIV.fullmatch(text)
    if new:
        year_month, number = int(new.group(1) + new.group(2)), new.group(3)
        digits = 5 if year_month >= _FIVE_DIGITS_FROM else 4
        valid = year_month >= _FIRST_NEW_STYLE and _month(new.group(2)) and len(number) == digits
        return f"{new.group(1)}{new.group(2)}.{number}" if valid else None
    old = _OLD_ARXIV.fullmatch(text)
    if old and _month(old.group(3)):
        return f"{old.group(1).lower()}/{old.group(2)}{old.group(3)}{old.group(4)}"
    return None


def normalise(scheme: str, value: str) -> tuple[str, str]:
    """A source's (scheme, value) in stored form. A value that does not read as its
    scheme is kept as given (stripped): a source's data is not dropped for its spelling."""
    scheme, value = scheme.strip().lower(), value.strip()
    found = _READ_AS.get(scheme, lambda _: None)(value)
    return found or (scheme, value)


def normalise_ids(ids: Mapping[str, str], url: str | None = None) -> dict[str, str]:
    """A record's identifiers in stored form, plus the one its url names (an arXiv, DOI or
    OpenReview link). An id the source gave under its own scheme wins over one derived
    from another (an arXiv DOI is the arXiv id) or from the url."""
    found: dict[str, str] = {}
    derived: list[tuple[str, str]] = []
    for scheme, value in ids.items():
        pair = normalise(scheme, value)
        if pair[0] == scheme.strip().lower():
            found.setdefault(*pair)
        else:
            derived.append(pair)
    linked = _from_link(url.strip()) if url and _is_link(url.strip()) else None
    for scheme, value in [*derived, *([linked] if linked else [])]:
        found.setdefault(scheme, value)
    return found


def _unwrap(text: str) -> str:
    """A link as Slack sends it, <https://...> or <https://...|label>, without the wrapping."""
    if text.startswith("<") and text.endswith(">"):
        return text[1:-1].split("|", 1)[0].strip()
    return text


def _from_link(url: str) -> tuple[str, str] | None:
    if not _URL.match(url):
        url = "https://" + url
    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed IPv6 host: no identifier in it
        return None
    host = (parts.hostname or "").lower()
    if host in _ARXIV_HOSTS:
        page = _ARXIV_PAGE.search(unquote(parts.path))
        return _tagged(ARXIV, arxiv_id(page.group(1))) if page else None
    if host in _DOI_HOSTS:
        return _from_doi(unquote(parts.path).lstrip("/"))
    if host in _OPENREVIEW_HOSTS and _OPENREVIEW_PAGE.search(parts.path):
        ids = parse_qs(parts.query).get("id", [])
        return (OPENREVIEW, ids[0]) if ids and _OPENREVIEW_ID.fullmatch(ids[0]) else None
    return None


def _is_link(text: str) -> bool:
    return bool(_URL.match(text) or _BARE_LINK.match(text))


def _from_doi(text: str) -> tuple[str, str] | None:
    text = text.strip()
    if not _DOI.fullmatch(text):
        return None
    value = text.lower()
    if value.startswith(_ARXIV_DOI):  # arXiv's DataCite DOI names the arXiv paper
        return _tagged(ARXIV, arxiv_id(value[len(_ARXIV_DOI) :]))
    return DOI, value


def _read_arxiv(value: str) -> tuple[str, str] | None:
    found = _from_link(value) if _is_link(value) else _tagged(ARXIV, arxiv_id(value))
    return found if found and found[0] == ARXIV else None


def _read_doi(value: str) -> tuple[str, str] | None:
    if _is_link(value):
        return _from_link(value)
    prefixed = _PREFIX.fullmatch(value)
    if prefixed and prefixed.group(1).lower() == DOI:
        value = prefixed.group(2)
    return _from_doi(value)


def _read_openreview(value: str) -> tuple[str, str] | None:
    if _is_link(value):
        found = _from_link(value)
        return found if found and found[0] == OPENREVIEW else None
    return (OPENREVIEW, value) if _OPENREVIEW_ID.fullmatch(value) else None


# How a value a source labelled with a scheme is read; other schemes (beir, bibtex) are
# the source's own keys and stay as given.
_READ_AS = {ARXIV: _read_arxiv, DOI: _read_doi, OPENREVIEW: _read_openreview}


def _tagged(scheme: str, value: str | None) -> tuple[str, str] | None:
    return (scheme, value) if value else None


def _month(text: str) -> bool:
    return 1 <= int(text) <= 12


# --- identifiers in running text (a chat message) ---------------------------------------------

PAGE = "page"  # an http(s) link that names no known identifier: a page to read citation_* tags from
# "arXiv: 2106.01345" and "doi: 10.1/x" in prose: the prefix and its id are one word.
_SPACED_PREFIX = re.compile(r"\b(arxiv|doi)\s*:\s+", re.I)
# What surrounds a link in prose and is not part of it: Slack's <url|label>, brackets,
# quotes, and the sentence's punctuation.
_LEADING = "<([{\"'«“‘"
_TRAILING = ".,;:!?>]}\"'»”’*_"
_WEB_LINK = re.compile(r"https?://[^\s/?#]+", re.I)


def find_all(text: str) -> list[tuple[str, tuple[str, str]]]:
    """Every identifier and link in a message, in order and each once: (the words as
    written, (scheme, value)). A link naming an arXiv paper, a DOI or an OpenReview
    forum reads as that id; any other http(s) link is (PAGE, the link)."""
    text = _SPACED_PREFIX.sub(lambda m: m.group(1) + ":", text.replace("&amp;", "&"))
    found: dict[tuple[str, str], str] = {}
    for word in text.split():
        word = _trimmed(word.split("|", 1)[0])  # <url|label>: the label is not the link
        pair = _word_id(word)
        if pair and pair not in found:
            found[pair] = word
    return [(word, pair) for pair, word in found.items()]


def _word_id(word: str) -> tuple[str, str] | None:
    if not word or len(word) > 2000:
        return None
    pair = parse(word)
    if pair is None and _WEB_LINK.match(word):
        return PAGE, word
    if pair is not None and pair[0] == OPENREVIEW and not _is_link(word):
        return None  # a bare word is never taken for an OpenReview id
    return pair


def _trimmed(word: str) -> str:
    """The word without the prose around it; a closing parenthesis stays when the word
    opened one (DOIs like 10.1016/S0140-6736(20)30183-5, Wikipedia-style links)."""
    word = word.lstrip(_LEADING)
    while word:
        if (
            word[-1] in _TRAILING
            or word[-1] == "<"
            or (word[-1] == ")" and word.count(")") > word.count("("))
        ):
            word = word[:-1]
        else:
            break
    if word.startswith("<"):
        word = word[1:]
    return word.split(">", 1)[0]

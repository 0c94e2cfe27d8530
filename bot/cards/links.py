"""Links on cards: a paper's URL as every platform takes it, one made from its arXiv id,
DOI or OpenReview id when it has no URL, or none.

Platforms refuse a whole message over one malformed link (Discord: 50035 "not a
well-formed URL" for a space in an embed's url), so this is the one place a URL is made
safe before any adapter sees it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from urllib.parse import quote, urlsplit

LINK_MAX = 2048  # Discord's limit for an embed's url (Slack allows 3,000)
LINK_SCHEMES = ("http", "https")
# What may stay as written in a path (RFC 3986 pchar and "/"); quote() adds letters,
# digits and "_.-~". "%" stays only where it starts an escape (STRAY_PERCENT). Anything
# else (a space, non-ASCII, quotes, <>, [], {}, |, ^, `) is percent-encoded.
PATH_SAFE = "/:@!$&'()*+,;=%"
QUERY_SAFE = PATH_SAFE + "?"
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
# "example.org/paper.pdf": a link written without its scheme, recognised by a host that
# ends in a letters-only top-level domain (so a DOI such as 10.1234/x is not taken for one).
BARE_HOST = re.compile(r"(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,63}\.?(?::\d{1,5})?(?=[/?#]|$)")
STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Where a paper without a url of its own can be read, by the identifiers its sources gave:
# the preprint first (free to read), then the publisher through the DOI, then OpenReview.
ID_LINKS = (
    ("arxiv", "https://arxiv.org/abs/{}"),
    ("doi", "https://doi.org/{}"),
    ("openreview", "https://openreview.net/forum?id={}"),
)
# An identifier written as a link or with its scheme: "arXiv:2101.00001", "doi:10.1/x",
# "https://doi.org/10.1/x".
ID_PREFIX = re.compile(r"^(?:arxiv:|doi:|https?://(?:dx\.)?doi\.org/)", re.IGNORECASE)
ID_SAFE = "/:;()"  # kept as written in the link; "?", "#", "&" or a space would change it


def web_link(url: str | None) -> str | None:
    """`url` as a link any platform accepts, or None when it cannot be one (another
    scheme such as javascript:, no host, a password in it, too long): the card is then
    shown without a link rather than the whole message refused.

    Spaces and other unsafe characters are percent-encoded (escapes already there are
    kept, so this is idempotent), a Unicode host becomes its IDNA (punycode) form, and a
    link written without a scheme ("example.org/paper.pdf") gets https://."""
    text = re.sub(r"\s+", " ", url or "").strip()
    if not text or CONTROL.search(text):
        return None
    if text.startswith("//") or BARE_HOST.match(text):
        text = "https:" + text if text.startswith("//") else "https://" + text
    elif not SCHEME.match(text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:  # brackets around something that is not an IPv6 address
        return None
    host = _link_host(parts.netloc)
    if parts.scheme.lower() not in LINK_SCHEMES or host is None:
        return None
    try:
        link = f"{parts.scheme.lower()}://{host}{_escaped(parts.path, PATH_SAFE)}"
        link += f"?{_escaped(parts.query, QUERY_SAFE)}" if parts.query else ""
        link += f"#{_escaped(parts.fragment, QUERY_SAFE)}" if parts.fragment else ""
    except UnicodeEncodeError:  # a lone surrogate: text that is no character at all
        return None
    return link if len(link) <= LINK_MAX else None


def id_link(ids: Mapping[str, str]) -> str | None:
    """A link made from the paper's identifiers (arXiv id, DOI, OpenReview id), or None."""
    for scheme, template in ID_LINKS:
        value = ID_PREFIX.sub("", (ids.get(scheme) or "").strip())
        if value and (link := web_link(template.format(quote(value, safe=ID_SAFE)))):
            return link
    return None


def _link_host(netloc: str) -> str | None:
    """host[:port] in ASCII, or None. A user or password before the host is refused: a
    card must not show credentials, and "https://arxiv.org@evil.example" misleads."""
    if "@" in netloc:
        return None
    host, port = netloc, ""
    if match := re.fullmatch(r"(.*):(\d{0,5})", netloc):
        host, port = match[1], match[2]
    if port and not 0 < int(port) < 65536:
        return None
    if host.startswith("[") and host.endswith("]"):
        name = _ipv6(host[1:-1])
    else:
        name = _domain(host)
    return None if name is None else name + (f":{port}" if port else "")


def _ipv6(text: str) -> str | None:
    try:
        return f"[{ipaddress.IPv6Address(text).compressed}]"
    except ValueError:
        return None


def _domain(host: str) -> str | None:
    """A host name in its ASCII (IDNA) form, lowercased, or None if it is not one."""
    try:
        ascii_host = host.rstrip(".").encode("idna").decode("ascii").lower()
    except UnicodeError:  # an empty label, a label over 63 characters, unencodable text
        return None
    labels = ascii_host.split(".")
    if not ascii_host or len(ascii_host) > 253 or not all(HOST_LABEL.fullmatch(label) for label in labels):
        return None
    return ascii_host


def _escaped(text: str, safe: str) -> str:
    # A "%" that starts no escape is a literal percent sign: escape it, keep real escapes.
    return quote(STRAY_PERCENT.sub("%25", text), safe=safe)

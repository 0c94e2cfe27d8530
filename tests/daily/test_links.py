"""Links on cards (bot/cards/links.py): every platform gets a well-formed link or none.

A link with a space in it (a BibTeX url field naming a PDF) made Discord refuse the whole
message, so the core repairs what it can (percent-encoding, IDNA hosts, a missing
scheme) and leaves out what it cannot: the card is then shown without a link.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cards.cards import card
from bot.cards.links import LINK_MAX, web_link
from bot.corpus.library import Library
from bot.search.tokens import Tokenizer

# RFC 3986 as Discord and Slack read a link: http(s), a host, and then only unreserved
# characters, sub-delims, ":@/?" and well-formed percent escapes.
WELL_FORMED = re.compile(
    r"https?://(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?"
    r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{2})*"
)


@pytest.mark.parametrize("given_url, expected", [
    # Kept as they are.
    ("https://arxiv.org/abs/2106.09685", "https://arxiv.org/abs/2106.09685"),
    ("http://example.org/a%20b?x=1&y=2#top", "http://example.org/a%20b?x=1&y=2#top"),
    ("https://openreview.net/forum?id=Hk-x_3sK", "https://openreview.net/forum?id=Hk-x_3sK"),
    ("http://[2001:db8::1]:8080/paper", "http://[2001:db8::1]:8080/paper"),
    # Repaired: spaces, Unicode, unsafe characters, a stray percent sign, case.
    ("https://example.org/papers/Robust Diffusion Models.pdf",
     "https://example.org/papers/Robust%20Diffusion%20Models.pdf"),
    ("  https://example.org/a  b \n", "https://example.org/a%20b"),
    ("https://de.wikipedia.org/wiki/Zürich", "https://de.wikipedia.org/wiki/Z%C3%BCrich"),
    ("https://bücher.example/Über?q=naïve#§2", "https://xn--bcher-kva.example/%C3%9Cber?q=na%C3%AFve#%C2%A72"),
    ('https://example.org/p?x=[1]&y=a|b&z="q"<>{}^`',
     "https://example.org/p?x=%5B1%5D&y=a%7Cb&z=%22q%22%3C%3E%7B%7D%5E%60"),
    ("https://example.org/50%off", "https://example.org/50%25off"),
    ("HTTPS://Example.ORG/Paper", "https://example.org/Paper"),
    # No scheme: a host-looking start gets https://.
    ("example.org/papers/x.pdf", "https://example.org/papers/x.pdf"),
    ("www.example.org", "https://www.example.org"),
    ("//example.org/x", "https://example.org/x"),
    # Left out: not a web link, no host, credentials, a bad host or port, garbage.
    ("javascript:alert(document.cookie)", None),
    ("JavaScript:alert(1)", None),
    ("data:text/html,<script>alert(1)</script>", None),
    ("mailto:someone@example.org", None),
    ("ftp://example.org/paper.pdf", None),
    ("10.1234/abcd.5678", None),  # a DOI is not a host
    ("garbage", None),
    ("not a url at all", None),
    ("http://", None),
    ("https:///path/only", None),
    ("https://ex ample.org/x", None),
    ("https://-bad-.example/", None),
    ("https://arxiv.org@evil.example/", None),
    ("https://user:secret@example.org/", None),
    ("https://example.org:99999/", None),
    ("http://[not-ipv6]/", None),
    ("https://example.org/\x00x", None),
    ("", None),
    ("   ", None),
    (None, None),
])
def test_a_link_is_repaired_or_left_out(given_url, expected):
    assert web_link(given_url) == expected


def test_a_link_longer_than_discord_takes_is_left_out():
    base = "https://example.org/"
    assert web_link(base + "x" * (LINK_MAX - len(base))) == base + "x" * (LINK_MAX - len(base))
    assert web_link(base + "x" * (LINK_MAX - len(base) + 1)) is None
    # Escaping makes a link longer: the cap applies to what would be sent.
    assert web_link(base + "ü" * (LINK_MAX // 6)) is None  # each ü is sent as %C3%BC


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80) | st.builds(lambda a, b: f"https://{a}/{b}", st.text(max_size=20), st.text(max_size=40)))
def test_whatever_comes_in_the_link_is_well_formed_or_absent_and_stable(text):
    link = web_link(text)
    if link is not None:
        assert WELL_FORMED.fullmatch(link), link
        assert len(link) <= LINK_MAX
        assert web_link(link) == link  # repairing a repaired link changes nothing


def test_a_bibtex_paper_with_a_spaced_url_gets_a_card_with_a_working_link(sqlite_db, tmp_path):
    bib = tmp_path / "papers.bib"
    bib.write_text(
        "@inproceedings{robust2024,\n"
        "  title = {Robust Diffusion Models},\n"
        "  author = {Ada Lovelace and Alan Turing},\n"
        "  url = {https://example.org/papers/Robust Diffusion Models.pdf},\n"
        "  abstract = {Diffusion models that stay robust.}\n"
        "}\n"
        "@inproceedings{script2024,\n"
        "  title = {A Link That Is a Script},\n"
        "  url = {javascript:alert(1)}\n"
        "}\n",
        encoding="utf-8",
    )
    library = Library(sqlite_db)
    library.import_file(bib, collection="bib")
    papers = {p.title: p for p in library.get_many(range(1, 3)).values()}
    tokenizer = Tokenizer()
    robust = card(papers["Robust Diffusion Models"], tokenizer)
    assert robust.url == "https://example.org/papers/Robust%20Diffusion%20Models.pdf"
    script = card(papers["A Link That Is a Script"], tokenizer)
    assert script.url is None and script.title == "A Link That Is a Script"  # the card stays, unlinked

"""The pure parts: finding links in a message, the address rule, the providers' formats."""

from __future__ import annotations

import ipaddress
import json

import pytest

from bot.adding.addresses import any_address, policy_from_env, public_only
from bot.adding.citation_meta import HEAD_BYTES, TitleTooLong, parse_page
from bot.adding.crossref import NotAWork, parse_work, strip_jats
from bot.adding.openreview import NotANote, parse_notes
from bot.corpus.identifiers import find_all
from tests.adding import recorded


@pytest.mark.parametrize(("text", "found"), [
    ("look: arXiv:2106.01345v2.", [("arXiv:2106.01345v2", ("arxiv", "2106.01345"))]),
    ("(https://arxiv.org/pdf/2106.01345.pdf), ok?", [
        ("https://arxiv.org/pdf/2106.01345.pdf", ("arxiv", "2106.01345"))]),
    ("<https://arxiv.org/abs/1706.03762|Attention Is All You Need>", [
        ("https://arxiv.org/abs/1706.03762", ("arxiv", "1706.03762"))]),
    ("arXiv: 1706.03762 and again 1706.03762v3", [("arXiv:1706.03762", ("arxiv", "1706.03762"))]),
    ("old: hep-th/9901001;", [("hep-th/9901001", ("arxiv", "hep-th/9901001"))]),
    ("doi 10.1016/S0140-6736(20)30183-5)", [
        ("10.1016/S0140-6736(20)30183-5", ("doi", "10.1016/s0140-6736(20)30183-5"))]),
    ("https://openreview.net/forum?id=2dnO3LLiJ1&amp;noteId=abc", [
        ("https://openreview.net/forum?id=2dnO3LLiJ1&noteId=abc", ("openreview", "2dnO3LLiJ1"))]),
    ("«https://aclanthology.org/P18-1031/»", [("https://aclanthology.org/P18-1031/", ("page", "https://aclanthology.org/P18-1031/"))]),
    ("cut short: https://example.org/a paper.pdf", [("https://example.org/a", ("page", "https://example.org/a"))]),
    ("pi is 3.14159, call 555-0199, 2023.12345, ftp://x.org/a, javascript:alert(1), 2dnO3LLiJ1", []),
])
def test_links_and_ids_are_found_in_running_text(text, found):
    assert find_all(text) == found


@pytest.mark.parametrize(("address", "allowed"), [
    ("93.184.215.14", True), ("2606:4700::6810:84e5", True),
    ("127.0.0.1", False), ("127.0.0.2", False), ("10.0.0.1", False), ("172.16.5.4", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("224.0.0.1", False),
    ("240.0.0.1", False), ("::1", False), ("::", False), ("fe80::1", False), ("fc00::1", False),
    ("::ffff:127.0.0.1", False), ("::ffff:169.254.169.254", False), ("::ffff:93.184.215.14", True),
])
def test_only_public_addresses_pass(address, allowed):
    assert public_only(ipaddress.ip_address(address)) is allowed


def test_the_environment_may_lift_the_address_rule():
    assert policy_from_env({"PAPERCLUB_FETCH_ALLOW_PRIVATE": "1"}) is any_address
    assert policy_from_env({"PAPERCLUB_FETCH_ALLOW_PRIVATE": "0"}) is public_only
    assert policy_from_env({}) is public_only


def test_jats_markup_is_dropped_and_entities_decoded():
    assert strip_jats("<jats:title>Abstract</jats:title><jats:p>We study <jats:italic>x</jats:italic>"
                      "&lt;y.</jats:p><jats:p>Then z.</jats:p>") == "We study x<y. Then z."


def test_a_crossref_work_without_abstract_or_preprint():
    work = json.loads(recorded.crossref_json("10.18653/v1/n19-1423"))
    del work["message"]["abstract"], work["message"]["relation"]
    record = parse_work(json.dumps(work))
    assert record.abstract == "" and record.external_ids == {"doi": "10.18653/v1/n19-1423"}


def test_openreview_v1_plain_values_and_an_empty_answer():
    v1 = {"notes": [{"id": "rJ4km2R5t7", "forum": "rJ4km2R5t7", "cdate": 1538087866000, "content": {
        "title": "Learning to Represent Edits", "authors": ["Pengcheng Yin", "Graham Neubig"],
        "abstract": "We introduce the problem of learning distributed representations of edits.",
        "venue": "ICLR 2019 Poster"}}]}
    record = parse_notes(json.dumps(v1), "rJ4km2R5t7")
    assert (record.title, record.year, record.venue) == ("Learning to Represent Edits", 2019, "ICLR 2019 Poster")
    assert record.external_ids == {"openreview": "rJ4km2R5t7"}
    with pytest.raises(NotANote):
        parse_notes('{"notes": [], "count": 0}', "nothing")



@pytest.mark.parametrize("body", ["[" * 100_000 + "]" * 100_000, '{"message": NaN}', "<html>busy</html>"])
def test_junk_from_crossref_or_openreview_is_refused_as_junk_never_a_crash(body):
    """JSON nested past the interpreter's reach used to escape as a RecursionError (a
    "Something went wrong" to the member); now it is an answer that cannot be read."""
    with pytest.raises(NotAWork):
        parse_work(body)
    with pytest.raises(NotANote):
        parse_notes(body, "rJ4km2R5t7")


def test_a_submission_under_review_has_no_venue_but_its_year():
    note = json.loads(json.dumps(recorded.OPENREVIEW["2dnO3LLiJ1"]))
    note["notes"][0]["content"]["venue"] = {"value": "Submitted to ICLR 2025"}
    record = parse_notes(json.dumps(note), "2dnO3LLiJ1")
    assert record.venue is None and record.year == 2025


def test_citation_meta_tags():
    record = parse_page(recorded.ACL_PAGE, "https://aclanthology.org/P18-1031/")
    assert record.external_ids == {"doi": "10.18653/v1/p18-1031"}
    assert record.year == 2018 and record.authors == ["Jeremy Howard", "Sebastian Ruder"]
    assert parse_page(recorded.PLAIN_PAGE, "https://example.org/") is None


def test_a_citation_title_past_the_head_cut_is_read_to_its_end():
    """The head's cut leaves a tag open: read on, a short title is the paper's title and a
    runaway one is refused as too long, not taken for a page without one."""
    head = "<!doctype html><head>" + "<meta name=x content=y>" * ((HEAD_BYTES - 60) // 23)
    cut = head + '<meta name="citation_title" content="A title across the cut"></head>'
    assert len(head) < HEAD_BYTES < len(cut) - len("</head>")
    assert parse_page(cut, "https://example.org/").title == "A title across the cut"
    with pytest.raises(TitleTooLong) as long:
        parse_page(recorded.LONG_TITLE_PAGE, "https://example.org/")
    assert long.value.length == 1_499_987 and long.value.limit == 512
    short_enough = recorded.LONG_TITLE_PAGE.replace("Deep learning " * 107_142, "Deep learning " * 36)
    assert parse_page(short_enough, "https://example.org/").title == ("Deep learning " * 36).strip()

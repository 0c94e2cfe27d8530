"""`add LINK|ID` against the fake providers: each link form adds the right paper once,
failures of every kind store nothing, preprints and published versions are one paper."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from bot.adding.addresses import public_only
from bot.services.models import Addition
from tests.adding.conftest import QUICK_POLICY, closed_port, counts, providers_for, say, stored

DECISION = "Decision Transformer: Reinforcement Learning via Sequence Modeling"
BERT = "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"


@pytest.mark.parametrize(("first", "again", "title"), [
    ("2106.01345", ["arXiv:2106.01345v2", "https://arxiv.org/abs/2106.01345v1", "arxiv.org/pdf/2106.01345v2.pdf",
                    "<https://arxiv.org/abs/2106.01345|Decision Transformer>", "ARXIV: 2106.01345",
                    "https://doi.org/10.48550/arXiv.2106.01345"], DECISION),
    ("http://export.arxiv.org/abs/hep-th/9711200v3", ["hep-th/9711200", "arXiv:hep-th/9711200v2",
                                                     "https://doi.org/10.1023/A:1026654312961"],
     "The Large N Limit of Superconformal Field Theories and Supergravity"),
    ("https://doi.org/10.18653/v1/N19-1423", ["doi:10.18653/V1/N19-1423", "10.18653/v1/n19-1423",
                                              "http://dx.doi.org/10.18653/v1/N19-1423.", "1810.04805"], BERT),
    ("https://openreview.net/forum?id=2dnO3LLiJ1", ["https://openreview.net/pdf?id=2dnO3LLiJ1"],
     "Vision Transformers Need Registers"),
])
def test_each_link_form_adds_the_paper_once(built, fake, first, again, title):
    added = say(built, f"add {first}")
    assert added.ok and added.cards[0].title == title, added.text
    assert f"Added “{title}” as paper {added.cards[0].paper_id}" in added.text
    assert added.cards[0].added_by == "Added by Ann on 2026-11-23"
    before, asked = counts(built.db), len(fake.requests)
    for form in again:
        reply = say(built, f"add {form}")
        assert reply.ok and [c.paper_id for c in reply.cards] == [added.cards[0].paper_id], (form, reply.text)
        assert "already: the same paper, no second copy" in reply.text
    after = counts(built.db)
    assert {k: v for k, v in after.items() if k != "additions"} == {k: v for k, v in before.items()
                                                                      if k != "additions"}
    assert after["additions"] == before["additions"] + len(again)
    assert len(fake.requests) == asked  # found in the library: nothing fetched again


def test_the_reply_has_nominate_and_discuss_buttons_per_card(built):
    reply = say(built, "add 2106.01345 1706.03762")
    numbers = [c.paper_id for c in reply.cards]
    assert len(numbers) == 2
    assert [a.value for a in reply.actions] == [v for n in numbers for v in (f"nominate {n}", f"discuss {n}")]


@pytest.mark.parametrize(("line", "says"), [
    ("add 2106.99999", "arXiv has no paper 2106.99999."),
    ("add 10.1234/no-such-work", "Crossref has no paper with the DOI 10.1234/no-such-work."),
    ("add https://openreview.net/forum?id=NoSuchNote1", "OpenReview has no paper NoSuchNote1."),
    ("add hello there, nothing to see", "No paper link or id in that."),
    ("add", "Give an arXiv id or link"),
    ("add 3.14159 42 #7", "No paper link or id in that."),
])
def test_unknown_ids_and_non_links_are_refused_and_store_nothing(built, line, says):
    before = stored(built.db)
    reply = say(built, line)
    assert not reply.ok and says in reply.text and not reply.cards
    assert stored(built.db) == before


def test_an_unreachable_provider_is_refused_and_stores_nothing(built, fake):
    nowhere = f"http://127.0.0.1:{closed_port()}"
    built.feature("adding").providers = providers_for(fake)
    built.feature("adding").providers.urls = type(built.feature("adding").providers.urls)(nowhere, nowhere, nowhere)
    before = stored(built.db)
    for line, name in (("add 2106.01345", "arXiv"), ("add 10.18653/v1/N19-1423", "Crossref"),
                       ("add https://openreview.net/forum?id=2dnO3LLiJ1", "OpenReview")):
        reply = say(built, line)
        assert not reply.ok and f"could not reach {name} just now" in reply.text, reply.text
    assert stored(built.db) == before


def test_a_provider_that_never_answers_is_given_up_within_the_time_budget(built, fake):
    built.feature("adding").providers = providers_for(fake, "/slow", policy=QUICK_POLICY)
    before, started = stored(built.db), time.monotonic()
    reply = say(built, "add 2106.01345")
    assert time.monotonic() - started < 3  # the policy's 1 s, not the fake's 30 s
    assert not reply.ok and "2106.01345: timed out; try again" in reply.text, reply.text
    assert stored(built.db) == before


def test_a_long_retry_after_is_busy_at_once_and_a_short_one_is_retried(built, fake):
    built.feature("adding").providers = providers_for(fake, "/busy")
    before, started = stored(built.db), time.monotonic()
    reply = say(built, "add 2106.01345")
    assert time.monotonic() - started < 1  # Retry-After: 120 is not waited for
    assert not reply.ok and "arXiv is busy just now" in reply.text and "Try again in a minute" in reply.text
    assert stored(built.db) == before
    built.feature("adding").providers = providers_for(fake, "/flaky")  # 429 Retry-After: 0, then the answer
    reply = say(built, "add 10.18653/v1/N19-1423")
    assert reply.ok and reply.cards[0].title == BERT


def test_a_published_paper_and_its_arxiv_preprint_are_one_paper(built):
    preprint = say(built, "add arXiv:1810.04805").cards[0]
    published = say(built, "add https://doi.org/10.18653/v1/N19-1423")
    assert [c.paper_id for c in published.cards] == [preprint.paper_id]
    paper = built.library.find("10.18653/v1/N19-1423")
    assert paper.id == preprint.paper_id and paper.ids() == {"arxiv": "1810.04805", "doi": "10.18653/v1/n19-1423"}
    assert sorted(s.source for s in paper.sources) == ["Crossref", "arXiv"]  # the sources merged
    # and the other way round: the DOI first, its preprint (a DOI-typed relation) next
    optuna = say(built, "add 10.1145/3292500.3330701").cards[0]
    assert optuna.title == "Optuna: A Next-generation Hyperparameter Optimization Framework"
    assert [c.paper_id for c in say(built, "add https://arxiv.org/abs/1907.10902").cards] == [optuna.paper_id]


def test_crossref_jats_abstracts_become_plain_text(built):
    say(built, "add 10.18653/v1/N19-1423")
    paper = built.library.find("10.18653/v1/N19-1423")
    assert paper.abstract.startswith("We introduce a new language representation model called BERT, which")
    assert "<" not in paper.abstract and "jats" not in paper.abstract and "tasks & more." in paper.abstract
    assert paper.venue == "Proceedings of the 2019 Conference of the North" and paper.year == 2019
    assert paper.authors == ["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"]


def test_an_openreview_v2_note(built):
    reply = say(built, "add https://openreview.net/forum?id=2dnO3LLiJ1")
    paper = built.library.find(str(reply.cards[0].paper_id))
    assert paper.authors == ["Timothée Darcet", "Maxime Oquab", "Julien Mairal", "Piotr Bojanowski"]
    assert paper.venue == "ICLR 2024 oral" and paper.year == 2024
    assert paper.abstract.startswith("Transformers have recently emerged")
    assert paper.url == "https://openreview.net/forum?id=2dnO3LLiJ1"


def test_a_page_with_citation_meta_tags(built, fake):
    reply = say(built, f"add {fake.url('/pages/P18-1031/')}")
    assert reply.ok, reply.text
    paper = built.library.find("10.18653/v1/P18-1031")
    assert paper.title == "Universal Language Model Fine-tuning for Text Classification"
    assert paper.authors == ["Jeremy Howard", "Sebastian Ruder"] and paper.year == 2018
    assert paper.venue.startswith("Proceedings of the 56th Annual Meeting")
    assert paper.url == fake.url("/pages/P18-1031/")
    before = stored(built.db)
    plain = say(built, f"add {fake.url('/pages/plain/')}")
    assert not plain.ok and "carries no citation_title tag" in plain.text
    assert stored(built.db) == before


def test_a_page_that_would_spoof_a_card_is_stored_display_safe(built, fake):
    reply = say(built, f"add {fake.url('/pages/spoofed/')}")
    assert reply.ok, reply.text
    cleaned = "G\u0301\u0301\u0301\u0301raph networks gnp.exe"
    assert reply.cards[0].title == cleaned and f"Added “{cleaned}”" in reply.text
    paper = built.library.find("10.1000/spoofed")
    assert paper.title == cleaned and paper.authors == ["Ada Lovelace"]
    assert say(built, f"add {fake.url('/pages/spoofed/')}").ok  # found again: the same paper
    assert built.library.count() == 1


def test_a_page_whose_citation_title_runs_past_any_title_is_refused_for_that(built, fake):
    before = stored(built.db)
    reply = say(built, f"add {fake.url('/pages/long-title/')}")
    assert not reply.ok
    assert "gives a citation_title 1,499,987 characters long; a title has at most 512" in reply.text, reply.text
    assert "carries no citation_title" not in reply.text
    assert stored(built.db) == before
    with built.db.session() as session:
        assert session.scalar(select(Addition.outcome)) == "refused"


def test_pages_on_private_addresses_are_never_fetched(built, fake):
    built.feature("adding").providers = providers_for(fake, addresses=public_only)
    before, asked = stored(built.db), len(fake.requests)
    for link in (fake.url("/pages/P18-1031/"), "http://169.254.169.254/latest/meta-data/",
                 "http://[::ffff:127.0.0.1]:80/", "http://0.0.0.0/", "http://10.1.2.3/paper"):
        reply = say(built, f"add {link}")
        assert not reply.ok and "only pages on public addresses" in reply.text, (link, reply.text)
    assert stored(built.db) == before and len(fake.requests) == asked


def test_a_redirect_to_a_refused_address_is_refused(built, fake):
    port = fake.base.rsplit(":", 1)[1]
    only_this = lambda address: str(address) == "127.0.0.1"  # noqa: E731 - a policy in one line
    built.feature("adding").providers = providers_for(fake, addresses=only_this)
    assert say(built, f"add {fake.url('/pages/P18-1031/')}").ok  # the allowed address is fetched
    asked, before = len(fake.requests), stored(built.db)
    hop = fake.url(f"/redirect?to=http://127.0.0.2:{port}/pages/P18-1031/")
    reply = say(built, f"add {hop}")
    assert not reply.ok and "only pages on public addresses" in reply.text
    assert fake.requests[asked:] == [f"/redirect?to=http://127.0.0.2:{port}/pages/P18-1031/"]
    assert stored(built.db) == before


def test_failed_fetches_are_recorded_and_name_no_adder(built):
    say(built, "add 2106.01345")
    say(built, "add 2106.99999")
    say(built, "add https://arxiv.org/abs/2106.01345v2", user="bob")
    with built.db.session() as session:
        rows = session.execute(select(Addition.user_id, Addition.user_name, Addition.asked, Addition.outcome,
                                      Addition.platform, Addition.workspace)).all()
    assert sorted(rows) == [("ann", "Ann", "2106.01345", "added", "console", "local"),
                            ("ann", "Ann", "2106.99999", "not_found", "console", "local"),
                            ("bob", "Bob", "https://arxiv.org/abs/2106.01345v2", "existed", "console", "local")]


def test_a_member_adds_a_bounded_number_of_papers_an_hour(built, fake):
    built.feature("adding").per_hour = 2
    assert say(built, "add 2106.01345 1706.03762").ok
    asked, before = len(fake.requests), counts(built.db)
    reply = say(built, "add 1810.04805")
    assert not reply.ok and "a member may add 2 papers an hour" in reply.text
    assert len(fake.requests) == asked and counts(built.db) == before  # nothing fetched, nothing stored
    assert say(built, "add 2106.01345").ok  # a paper the library has: answered, not fetched
    assert say(built, "add 1810.04805", user="bob").ok  # the limit is each member's


def test_show_says_who_added_the_paper(built):
    number = say(built, "add 2106.01345", user="cy").cards[0].paper_id
    shown = say(built, f"show {number}", user="bob")
    assert shown.cards[0].added_by == "Added by Cy on 2026-11-23"
    elsewhere = say(built, f"show {number}", workspace="other")
    assert elsewhere.cards[0].added_by == ""  # another workspace's member added it there, not here

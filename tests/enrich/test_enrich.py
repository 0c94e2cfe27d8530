"""The enrichment against the fake OpenAlex, on both databases: what it fills in and what it
never overwrites, decoys left alone, papers asked once, a provider's wait kept without
sleeping, a held connection cut at the run's bound with nothing half-written while the
minute's tick goes on, junk skipped with one log line."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest
from sqlalchemy import select

from adapters.console import ConsoleSession
from bot.cards.cards import source_lines
from bot.corpus.records import CorpusFormatError
from bot.enrich.enrich import COLLECTION, UNMATCHED_AGAIN
from bot.enrich.models import EnrichAttempt, EnrichTurn
from store.models import PaperSource
from tests.enrich.conftest import quick_fetcher, record, work

ATTENTION = "Attention Is All You Need"
VASWANI = ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]


def nothing(_reply):
    return None


def _papers(services, *records, collection="reading"):
    services.library.import_records(list(records), collection=collection, source="list.txt", fmt="plain")
    return {p.title: p for p in services.library.iter_papers()}


def _enrich(services):
    return services.feature("enrich").enricher


def _run(services, clock, limit=100, **more):
    return _enrich(services).run(clock.now, limit, **more)


def _paper(services, paper_id):
    return services.library.get_many([paper_id])[paper_id]


def _filled_sources(services) -> int:
    with services.db.session() as session:
        return len(session.scalars(select(PaperSource).where(PaperSource.collection == COLLECTION)).all())


def test_a_paper_is_filled_in_with_link_doi_year_venue_and_citations(services, fake, clock):
    fake.works.append(work(7, ATTENTION, VASWANI, year=2017, venue="Neural Information Processing Systems"))
    paper = _papers(services, record(ATTENTION, VASWANI))[ATTENTION]
    outcome = _run(services, clock)
    assert (outcome.requests, outcome.matched, outcome.filled) == (1, 1, 1)
    filled = _paper(services, paper.id)
    assert filled.url == "https://openreview.net/pdf?id=f7"  # the PDF where OpenAlex has one
    assert filled.year == 2017 and filled.venue == "Neural Information Processing Systems"
    assert filled.ids()["doi"] == "10.5555/test.7"
    assert filled.authors == VASWANI  # the paper's own
    # The request: one title.search filter, polite mailto, only the fields read.
    path, params = fake.requests[0]
    assert path == "/works" and params["filter"] == ['title.search:"attention is all you need"']
    assert params["mailto"] == ["club@example.org"] and "cited_by_count" in params["select"][0]
    # A member's `show`: venue, year, the link and the citation count; no collection name.
    card = ConsoleSession(services.core, channel="ml", user="bob").answer(f"show {paper.id}").cards[0]
    assert card.url == "https://openreview.net/pdf?id=f7"
    assert card.venue == "Neural Information Processing Systems 2017 · cited by 70"
    assert "filled" not in repr(card) and "openalex" not in repr(card).lower()
    # Operator detail says where each value came from.
    assert _filled_line(filled) == ("filled:openalex: openalex.org:1 (openalex): "
                                        "link, DOI, year, venue from OpenAlex")


def test_what_a_person_or_a_source_gave_is_never_overwritten(services, fake, clock):
    fake.works.append(work(8, ATTENTION, VASWANI, year=2017, venue="Journal of Elsewhere"))
    own = record(ATTENTION, VASWANI[:1], url="https://example.org/mine.pdf", venue="NeurIPS", abstract="Ours.")
    paper = _papers(services, own)[ATTENTION]
    assert _run(services, clock).matched == 1
    filled = _paper(services, paper.id)
    assert (filled.url, filled.venue, filled.authors, filled.abstract) == (
        "https://example.org/mine.pdf", "NeurIPS", VASWANI[:1], "Ours.")
    assert filled.year == 2017 and filled.ids()["doi"] == "10.5555/test.8"  # only what nobody said
    assert _filled_line(filled).endswith(": DOI, year from OpenAlex")
    # A source imported later, whatever its collection's name, still comes first.
    services.library.import_records([record(ATTENTION, VASWANI, year=2018, venue="Later Venue")],
                                    collection="zzz-last", source="z.txt", fmt="plain")
    again = _paper(services, paper.id)
    assert (again.year, again.venue, again.url) == (2018, "NeurIPS", "https://example.org/mine.pdf")
    # The collection is not for imports.
    with pytest.raises(CorpusFormatError, match="kept for what providers fill in"):
        services.library.import_records([record("X")], collection=COLLECTION, source="x.txt", fmt="plain")


def test_decoys_of_the_same_title_by_other_people_are_not_matched(services, fake, clock):
    fake.works += [work(1, ATTENTION, ["Alex Decoy", "Sam Other"], cited_by=10**6),
                   work(2, "ATTENTION: is all you need!", VASWANI)]  # another case and punctuation
    decoy_only = "Deep Residual Learning"
    fake.works.append(work(3, decoy_only, ["Alex Decoy"]))
    papers = _papers(services, record(ATTENTION, VASWANI), record(decoy_only, ["Kaiming He", "Jian Sun"]))
    outcome = _run(services, clock)
    assert (outcome.matched, outcome.unmatched) == (1, 1)
    assert _paper(services, papers[ATTENTION].id).ids()["openalex"] == "W2"
    alone = _paper(services, papers[decoy_only].id)
    assert alone.url is None and "doi" not in alone.ids()


def test_a_paper_without_authors_matches_only_an_unambiguous_title(services, fake, clock):
    fake.works += [work(1, "Lonely Title", ["Ann Smith"]),
                   work(2, "Shared Title", ["Ann Smith"]), work(3, "Shared Title", ["Bo Jones"])]
    papers = _papers(services, record("Lonely Title"), record("Shared Title"))
    _run(services, clock)
    assert _paper(services, papers["Lonely Title"].id).authors == ["Ann Smith"]  # nobody named any
    assert _paper(services, papers["Shared Title"].id).url is None


def test_a_paper_is_not_asked_again_until_its_time(services, fake, clock):
    fake.works.append(work(1, ATTENTION, VASWANI))
    _papers(services, record(ATTENTION, VASWANI), record("Nobody Knows This One", ["Ann Smith"]))
    first = _run(services, clock)
    assert (first.requests, first.matched, first.unmatched) == (1, 1, 1)
    assert _run(services, clock).requests == 0  # nothing is due
    assert len(fake.requests) == 1
    clock.now += UNMATCHED_AGAIN + timedelta(minutes=1)
    again = _run(services, clock)
    assert (again.requests, again.unmatched, again.matched) == (1, 1, 0)  # the unmatched one only
    assert fake.requests[-1][1]["filter"] == ['title.search:"nobody knows this one"']


def test_the_background_run_takes_its_turn_once_an_interval(services, fake, clock):
    _papers(services, record("One", ["Ann Smith"]))
    assert services.core.provider_steps()["enrich"](clock.now, lambda: False) == {
        "enrich_requests": 1, "enrich_unmatched": 1}
    _papers(services, record("Two", ["Ann Smith"]))
    assert services.core.provider_steps()["enrich"](clock.now + timedelta(minutes=59), lambda: False) == {}
    step = services.core.provider_steps()["enrich"](clock.now + timedelta(minutes=60), lambda: False)
    assert step == {"enrich_requests": 1, "enrich_unmatched": 1}


def test_off_the_background_run_asks_nothing(make_services, fake, clock):
    services = make_services(env={"PAPERCLUB_ENRICH": "off"})
    _papers(services, record("One", ["Ann Smith"]))
    assert services.core.tick(clock.now, nothing, ["console"]).counts.get("enrich") is None
    assert fake.requests == []


def test_titles_are_asked_together_and_a_cut_answer_asks_the_missing_alone(services, fake, clock):
    titles = [f"Paper number {n}" for n in range(30)]
    # Other works holding the titles come first: a page of 40 holds none of the last ten.
    fake.works += [work(100 + n, f"Paper number {n} revisited", ["Bo Jones"]) for n in range(30)]
    fake.works += [work(n, t, ["Ann Smith"]) for n, t in enumerate(titles)]
    _papers(services, *(record(t, ["Ann Smith"]) for t in titles))
    fake.page_most = 40  # OpenAlex counts 60 works, a page holds 40
    first = _run(services, clock)
    assert first.requests == 2  # 25 titles, then 5
    assert (first.matched, first.crowded, first.unmatched) == (20, 10, 0)
    fake.page_most = None
    second = _run(services, clock)
    assert second.requests == first.crowded and second.matched == first.crowded  # one each, alone


def test_a_retry_after_longer_than_a_run_waits_is_stored_and_nothing_is_half_written(make_services, fake, clock):
    fetcher = quick_fetcher()
    services = make_services(fetcher)
    fake.works.append(work(1, ATTENTION, VASWANI))
    _papers(services, record(ATTENTION, VASWANI), record("Other", ["Ann Smith"]))
    fake.fail("retry-after=600")
    outcome = _run(services, clock)
    assert fetcher.slept == [] and outcome.requests == 1 and outcome.let_go == 2
    assert outcome.waiting == "OpenAlex asked to wait until 2026-11-26 07:10 UTC"
    assert _filled_sources(services) == 0
    with services.db.session() as session:
        assert session.get(EnrichTurn, "openalex").wait_until is not None
        assert {a.outcome for a in session.scalars(select(EnrichAttempt))} == {"asking"}
    # Not asked before the wait is over, even from the command line (no turn interval).
    clock.now += timedelta(minutes=5)
    assert _run(services, clock).requests == 0
    clock.now += timedelta(minutes=6)
    done = _run(services, clock)
    assert (done.requests, done.matched, done.unmatched) == (1, 1, 1)


def test_a_held_connection_is_cut_at_the_runs_bound_while_the_minute_goes_on(make_services, fake, clock):
    services = make_services(quick_fetcher(attempts=1, timeout=30.0))
    fake.works.append(work(1, ATTENTION, VASWANI))
    _papers(services, record(ATTENTION, VASWANI))
    fake.fail("timeout")  # the fake holds the connection until released
    result = {}
    enrich = threading.Thread(target=lambda: result.update(outcome=_run(services, clock, seconds=2.0)))
    enrich.start()
    try:
        assert _eventually(lambda: len(fake.requests) == 1)
        # The minute's tick (posts, polls, reminders) runs meanwhile and answers.
        report = services.core.tick(clock.now, nothing, ["console"], providers=False)
        assert "enrich" not in report.counts
        enrich.join(timeout=60)
        assert not enrich.is_alive()  # cut at its bound, not when the fake let go
    finally:
        fake.release.set()
    outcome = result["outcome"]
    assert outcome.matched == 0 and outcome.let_go == 1 and outcome.waiting.startswith("out of time")
    assert _filled_sources(services) == 0
    with services.db.session() as session:  # free for the next run at once
        attempt = session.scalars(select(EnrichAttempt)).one()
        assert attempt.retry_at == attempt.tried_at


def test_stopping_cuts_the_request_in_flight(make_services, fake, clock):
    services = make_services(quick_fetcher(attempts=1, timeout=30.0))
    _papers(services, record(ATTENTION, VASWANI))
    fake.fail("timeout")
    result = {}
    enrich = threading.Thread(target=lambda: result.update(outcome=_run(services, clock, seconds=120.0)))
    enrich.start()
    try:
        assert _eventually(lambda: len(fake.requests) == 1)
        services.feature("enrich").stop()
        enrich.join(timeout=60)
        assert not enrich.is_alive()
    finally:
        fake.release.set()
    assert result["outcome"].waiting == "paperclub is stopping" and _filled_sources(services) == 0


def test_a_junk_answer_costs_its_papers_a_day_with_one_log_line(services, fake, clock, caplog):
    fake.works.append(work(1, ATTENTION, VASWANI))
    _papers(services, record(ATTENTION, VASWANI), record("Other", ["Ann Smith"]))
    fake.fail("malformed")
    with caplog.at_level(logging.WARNING, logger="bot.enrich"):
        outcome = _run(services, clock)
    assert (outcome.failed, outcome.matched) == (2, 0)
    lines = [r for r in caplog.records if r.name.startswith("bot.enrich")]
    assert len(lines) == 1 and "asked again in a day" in lines[0].getMessage()
    assert _filled_sources(services) == 0
    assert _run(services, clock).requests == 0
    clock.now += timedelta(days=1, minutes=1)
    assert _run(services, clock).matched == 1


def test_a_junk_work_is_skipped_with_one_log_line_and_the_rest_filled(services, fake, clock, caplog):
    fake.works += [work(1, ATTENTION, VASWANI),
                   work(2, "Other", ["Ann Smith"], changes={"publication_year": "soon"}),
                   work(3, "Other", ["Bo Jones"], changes={"authorships": "many"})]
    _papers(services, record(ATTENTION, VASWANI), record("Other", ["Ann Smith"]))
    with caplog.at_level(logging.WARNING, logger="bot.enrich"):
        outcome = _run(services, clock)
    assert (outcome.matched, outcome.unmatched, outcome.skipped) == (1, 1, 2)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("bot.enrich")]
    assert lines == [("enrich: skipped 2 works in OpenAlex's answer: W2 (publication_year is a string, not a whole "
                      "number) and 1 more")]


def _eventually(check, seconds: float = 30.0) -> bool:
    """Whether `check()` came true within `seconds` (a liveness bound, not a speed one)."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_paperclub_enrich_runs_at_once_and_says_what_it_did(services, database_url, fake, clock, monkeypatch,
                                                            capsys):
    from adapters.cli.main import main

    fake.works.append(work(1, ATTENTION, VASWANI))
    _papers(services, record(ATTENTION, VASWANI), record("Nobody Knows This One", ["Ann Smith"]))
    monkeypatch.setenv("PAPERCLUB_OPENALEX_API_URL", fake.base)
    monkeypatch.delenv("PAPERCLUB_ENRICH", raising=False)  # off: the command runs whatever the switch says
    assert main(["--database-url", database_url, "enrich", "--limit", "5"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "paperclub enrich: asked OpenAlex about 2 papers in 1 request: 1 matched (1 filled in), 1 not found",
        "papers asked so far: 1 matched, 1 unmatched"]
    assert main(["--database-url", database_url, "enrich"]) == 0
    assert capsys.readouterr().out.startswith("paperclub enrich: asked OpenAlex about 0 papers in 0 requests")
    with pytest.raises(SystemExit) as refused:
        main(["--database-url", database_url, "enrich", "--limit", "0"])
    assert refused.value.code == 2
    assert "'0': give a whole number of papers from 1 to 100,000" in capsys.readouterr().err


def test_an_unreachable_openalex_stops_the_run_and_costs_no_paper_its_turn(make_services, fake, clock):
    fetcher = quick_fetcher(attempts=2)
    services = make_services(fetcher)
    titles = [f"Paper number {n}" for n in range(30)]
    fake.works += [work(n, t, ["Ann Smith"]) for n, t in enumerate(titles)]
    _papers(services, *(record(t, ["Ann Smith"]) for t in titles))
    fake.fail("503", "503")  # both tries of the first request
    outcome = _run(services, clock)
    assert (outcome.requests, outcome.failed, outcome.let_go, outcome.matched) == (1, 0, 30, 0)
    assert outcome.waiting == "OpenAlex could not be asked; the next run tries again"
    assert fetcher.slept == [3.0]  # the fetcher's back-off between its two tries, not slept in tests
    assert _run(services, clock).matched == 30  # every paper asked at the next run


def _filled_line(paper) -> str:
    return next(line for line in source_lines(paper) if line.startswith("filled:"))

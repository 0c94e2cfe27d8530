"""Provider work that nothing outside can stretch (issue 45): a long Retry-After puts a
follow off to a stored time instead of being slept, a dripping answer is cut at the
follow's deadline, a stuck provider holds only its own follow, paging stops at its cap
and the next run resumes from what was read, and the minute's tick never fetches."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from sqlalchemy import select

from adapters.fakes.openalex import FakeAuthor, FakeWork
from bot.follows.ingest import RETRY
from bot.follows.models import Follow, FollowArrival, FollowClaim
from bot.follows.openalex import PAGES_MAX
from tests.follows.conftest import manager, quick_fetcher
from tests.follows.test_ingest import arrivals, nothing, paper


def _follow(services) -> Follow:
    with services.db.session() as session:
        follow = session.scalar(select(Follow).order_by(Follow.id))
        session.expunge(follow)
        return follow


def _eventually(check, seconds: float = 30.0) -> bool:
    """Whether `check()` came true within `seconds` (a liveness bound, not a speed one)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_a_long_retry_after_puts_the_follow_off_to_a_stored_time_without_sleeping(make_services, fake_arxiv,
                                                                                   clock):
    fetcher = quick_fetcher()
    services = make_services(fetcher)
    fake_arxiv.papers.append(paper(1, clock.now - timedelta(hours=10)))
    assert manager(services).send("follow arxiv cs.LG").ok
    fake_arxiv.fail("retry-after=599")
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_deferred"] == 1 and report["follows_fetched"] == 0
    assert fetcher.slept == []  # not slept: put off
    follow = _follow(services)
    assert follow.last_status == "waiting" and follow.fetched_through is None
    assert follow.wait_until.replace(tzinfo=clock.now.tzinfo) == clock.now + timedelta(seconds=599)
    shown = manager(services).send("following").text
    assert "fetching again after 26 Nov 07:09 UTC (the provider asked paperclub to wait)" in shown
    # Before the stored time no process asks again; after it, the follow is fetched.
    assert services.core.tick(clock.now + timedelta(minutes=5), nothing, ["console"])["follows_deferred"] == 0
    assert len(fake_arxiv.requests) == 1
    report = services.core.tick(clock.now + timedelta(minutes=10), nothing, ["console"])
    assert report["follows_fetched"] == 1 and report["papers_arrived"] == 1
    follow = _follow(services)
    assert follow.wait_until is None and follow.last_status == "ok"


def test_a_retry_after_of_a_year_waits_a_day_at_most(make_services, fake_arxiv, clock):
    services = make_services()
    assert manager(services).send("follow arxiv cs.LG").ok
    fake_arxiv.fail(f"retry-after={365 * 86400}")
    services.core.tick(clock.now, nothing, ["console"])
    assert _follow(services).wait_until.replace(tzinfo=clock.now.tzinfo) == clock.now + timedelta(days=1)


def test_a_dripping_answer_is_cut_at_the_follows_deadline_and_put_off(make_services, fake_arxiv, clock):
    services = make_services()
    services.feature("follows").ingest.seconds = 1.0
    assert manager(services).send("follow arxiv cs.LG").ok
    fake_arxiv.fail("drip")  # 1,000 bytes, a byte every 50 ms: every single read is quick
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_deferred"] == 1 and report["follows_failed"] == 0
    follow = _follow(services)
    assert follow.last_message.startswith("the provider did not answer in time: ")
    assert follow.wait_until.replace(tzinfo=clock.now.tzinfo) == clock.now + RETRY
    with services.db.session() as session:
        assert session.scalar(select(FollowClaim.state)) == "deferred"


def test_a_stuck_provider_holds_only_its_own_follow(make_services, fake_arxiv, clock):
    services = make_services(quick_fetcher(timeout=60))
    services.feature("follows").ingest.seconds = 60.0
    for number, category in enumerate(("cs.LG", "cs.CL")):
        fake_arxiv.papers.append(paper(number, clock.now - timedelta(hours=10), category))
        assert manager(services).send(f"follow arxiv {category}").ok
    fake_arxiv.fail("timeout")  # the first request is held until released
    done: dict = {}
    run = threading.Thread(target=lambda: done.update(report=services.core.tick(clock.now, nothing, ["console"])))
    run.start()
    try:
        # The other follow's paper arrives while the first request is still held.
        assert _eventually(lambda: len(arrivals(services)) == 1)
        assert run.is_alive() and len(fake_arxiv.requests) == 2
    finally:
        fake_arxiv.release.set()
        run.join(60)
    assert done["report"]["follows_fetched"] == 2 and len(arrivals(services)) == 2  # the held one retried


def test_endless_paging_stops_at_the_page_cap_and_the_next_run_resumes(make_services, fake_openalex, clock):
    services = make_services()
    lecun = FakeAuthor("A5023888391", "Yann LeCun", "New York University", 600)
    fake_openalex.authors.append(lecun)
    fake_openalex.works += [FakeWork(f"W{900 + n}", f"World model number {n}", "x", f"2026-11-{n + 1:02d}", [lecun])
                            for n in range(25)]
    fake_openalex.page_most = 1  # a work a page, a next cursor every time
    with services.db.session() as session:
        assert manager(services).send("follow author A5023888391").ok
        session.execute(Follow.__table__.update().values(created_at=clock.now - timedelta(days=30)))
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["papers_arrived"] == PAGES_MAX
    assert len([p for p, _ in fake_openalex.requests if p == "/works"]) == PAGES_MAX
    # The mark is the last day read (asked again: the day may hold more), and the claim
    # lets the next run go on today.
    assert _follow(services).fetched_through.day == PAGES_MAX
    runs = 1
    while len(arrivals(services)) < 25:
        runs += 1
        assert runs <= 4, arrivals(services)
        services.core.tick(clock.now + timedelta(minutes=runs), nothing, ["console"])
    with services.db.session() as session:
        assert session.scalar(select(FollowArrival).where(FollowArrival.paper_id.is_(None))) is None
    filters = [params["filter"][0] for path, params in fake_openalex.requests if path == "/works"]
    assert "from_publication_date:2026-11-10" in filters[PAGES_MAX]  # run 2 starts where run 1 stopped


def test_the_minute_tick_of_a_serving_process_never_fetches(make_services, fake_arxiv, clock):
    services = make_services()
    assert manager(services).send("follow arxiv cs.LG").ok
    report = services.core.tick(clock.now, nothing, ["console"], providers=False)
    assert report["follows_fetched"] == 0 and fake_arxiv.requests == []
    assert sorted(services.core.provider_steps()) == ["briefs", "enrich", "follows", "zotero"]
    assert services.core.provider_steps()["follows"](clock.now, lambda: False)["follows_fetched"] == 1

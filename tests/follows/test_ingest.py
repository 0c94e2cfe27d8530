"""The daily ingest: each follow fetched once a day with three schedulers running,
resumed after a restart without gaps or duplicates, and the providers' bad days (429
with Retry-After, 503, a timeout, malformed bodies) handled."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from adapters.fakes.arxiv import ArxivPaper
from adapters.fakes.openalex import FakeAuthor, FakeWork
from bot.follows.models import Follow, FollowArrival, FollowClaim
from tests.follows.conftest import CONTACT, manager, quick_fetcher

UTC = timezone.utc
CATEGORIES = ("cs.LG", "cs.CL", "cs.CV", "stat.ML", "cs.RO", "math.OC")


def paper(number: int, at: datetime, category: str = "cs.LG") -> ArxivPaper:
    return ArxivPaper(f"2611.{number:05d}", f"Paper number {number} on {category}", f"Abstract {number}.", at,
                      [category])


def arrivals(services) -> list[tuple[int, int]]:
    with services.db.session() as session:
        return sorted(session.execute(select(FollowArrival.follow_id, FollowArrival.paper_id)).all())


def nothing(channel, reply):
    raise AssertionError("the ingest posts nothing")


def test_each_follow_is_fetched_once_a_day_with_three_schedulers(make_services, fake_arxiv, clock):
    first = make_services()
    session = manager(first)
    start = clock.now - timedelta(hours=20)
    for n, category in enumerate(CATEGORIES):
        assert session.send(f"follow arxiv {category}").ok
        fake_arxiv.papers += [paper(10 * n + k, start + timedelta(minutes=k), category) for k in range(3)]
    schedulers = [first, make_services(), make_services()]
    barrier = threading.Barrier(3)
    reports, problems = [], []

    def run(services):
        try:
            barrier.wait()
            for minute in range(3):  # three ticks each, the same minutes, all at once
                reports.append(services.core.tick(clock.now + timedelta(minutes=minute), nothing, ["console"]))
        except Exception as problem:  # noqa: BLE001 - reported below
            problems.append(problem)

    threads = [threading.Thread(target=run, args=(s,)) for s in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []
    assert sum(r["follows_fetched"] for r in reports) == len(CATEGORIES)
    asked = [q["search_query"] for q in fake_arxiv.queries() if q["start"] == "0"]
    assert sorted(q.split()[0] for q in asked) == sorted(f"cat:{c}" for c in CATEGORIES)  # each once
    with first.db.session() as db:
        assert db.scalar(select(func.count(FollowClaim.id))) == len(CATEGORIES)
    assert len(arrivals(first)) == 3 * len(CATEGORIES)
    # The next day each is fetched again, once.
    later = clock.now + timedelta(days=1)
    for services in schedulers:
        services.core.tick(later, nothing, ["console"])
    assert len([q for q in fake_arxiv.queries() if q["start"] == "0"]) == 2 * len(CATEGORIES)


def test_the_ingest_resumes_after_a_restart_without_gaps_or_duplicates(make_services, fake_arxiv, clock):
    services = make_services()
    assert manager(services).send("follow arxiv cs.LG").ok
    day = datetime(2026, 11, 26, 7, 0, tzinfo=UTC)
    # Five days of submissions, each announced the evening after (the listing lags).
    submitted = [paper(n, day - timedelta(days=1) + timedelta(hours=6 * n)) for n in range(20)]
    fake_arxiv.papers += submitted
    marks = []
    for offset in range(5):
        clock.now = day + timedelta(days=offset)
        fake_arxiv.announced_through = clock.now - timedelta(hours=14)
        if offset == 2:  # a restart: new process, same database
            services = make_services()
        if offset == 3:  # a process died holding today's claim: a later tick takes it over
            with services.db.session() as session:
                session.add(FollowClaim(follow_id=1, day=clock.now.date(), state="claimed",
                                        claimed_at=clock.now - timedelta(minutes=5), updated_at=clock.now))
            assert services.core.tick(clock.now, nothing, ["console"])["follows_fetched"] == 0
            clock.now += timedelta(minutes=20)
        report = services.core.tick(clock.now, nothing, ["console"])
        assert report["follows_fetched"] == 1
        with services.db.session() as session:
            marks.append(session.scalar(select(Follow.fetched_through)).replace(tzinfo=UTC))
    visible = [p for p in submitted if p.submitted <= fake_arxiv.announced_through]
    got = arrivals(services)
    assert len(got) == len({pid for _, pid in got}) == len(visible)  # none missed, none twice
    ids = sorted(services.library.find(f"arXiv:{p.id}").id for p in visible)
    assert ids == sorted(pid for _, pid in got)
    # Each window starts at the newest submission the last one saw (the mark): no gap.
    windows = [q["search_query"] for q in fake_arxiv.queries() if q["start"] == "0"]
    lows = [w.split("[")[1].split(" TO ")[0] for w in windows]
    assert lows[1:] == [m.strftime("%Y%m%d%H%M") for m in marks[:-1]]
    assert marks[-1] == max(p.submitted for p in visible)


def test_429_with_retry_after_and_503_are_retried_and_honoured(make_services, fake_arxiv, clock):
    fetcher = quick_fetcher()
    services = make_services(fetcher)
    fake_arxiv.papers.append(paper(1, clock.now - timedelta(hours=10)))
    assert manager(services).send("follow arxiv cs.LG").ok
    fake_arxiv.fail("429", "503")
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_fetched"] == 1 and report["papers_arrived"] == 1
    assert len(fake_arxiv.requests) == 3
    assert fetcher.slept[0] >= 1  # Retry-After: 1 honoured (at least)


def test_a_malformed_body_fails_the_fetch_changes_nothing_and_is_retried_later(make_services, fake_arxiv, clock):
    services = make_services()
    fake_arxiv.papers.append(paper(1, clock.now - timedelta(hours=10)))
    assert manager(services).send("follow arxiv cs.LG").ok
    fake_arxiv.fail("malformed")
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_failed"] == 1 and arrivals(services) == []
    with services.db.session() as session:
        follow = session.scalar(select(Follow))
        assert follow.last_status == "failed" and follow.fetched_through is None
    assert "failed" in manager(services).send("following").text
    assert manager(services).send("schedule 09:00 America/New_York").ok  # issue 45: the channel's zone
    when = clock.now.astimezone(ZoneInfo("America/New_York"))
    assert f"last fetch {when:%d %b %H:%M} EST failed" in manager(services).send("following").text
    assert services.core.tick(clock.now + timedelta(minutes=5), nothing, ["console"])["follows_fetched"] == 0
    report = services.core.tick(clock.now + timedelta(minutes=31), nothing, ["console"])
    assert report["follows_fetched"] == 1 and len(arrivals(services)) == 1


def test_a_timeout_fails_the_fetch_without_hanging_the_tick(make_services, fake_arxiv, clock):
    services = make_services(quick_fetcher(timeout=0.5, attempts=1))
    assert manager(services).send("follow arxiv cs.LG").ok
    fake_arxiv.fail("timeout")
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_failed"] == 1
    with services.db.session() as session:
        assert "network error" in session.scalar(select(FollowClaim.error))


def test_malformed_openalex_json_fails_the_author_follow(make_services, fake_openalex, clock):
    services = make_services()
    fake_openalex.authors.append(FakeAuthor("A5023888391", "Yann LeCun", "New York University", 600))
    assert manager(services).send("follow author A5023888391").ok
    fake_openalex.fail("malformed")
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_failed"] == 1
    with services.db.session() as session:
        assert "not JSON" in session.scalar(select(Follow.last_message))


def test_an_author_follow_pages_with_the_cursor_and_rebuilds_abstracts(make_services, fake_openalex, clock):
    services = make_services()
    lecun = FakeAuthor("A5023888391", "Yann LeCun", "New York University", 600)
    fake_openalex.authors.append(lecun)
    fake_openalex.works += [FakeWork(f"W{900 + n}", f"Self-supervised world model number {n}",
                                     f"We learn world model {n} from video.", "2026-11-25", [lecun])
                            for n in range(205)]
    assert manager(services).send("follow author A5023888391").ok
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["papers_arrived"] == 205
    cursors = [params.get("cursor", [""])[0] for path, params in fake_openalex.requests if path == "/works"]
    assert cursors[0] == "*" and len(cursors) == 2  # 200, then 5 after meta.next_cursor
    assert set(fake_openalex.mailtos) == {CONTACT}
    found = services.library.find("1")
    assert found.abstract.startswith("We learn world model")
    with services.db.session() as session:
        assert session.scalar(select(FollowArrival.reason)) == "by Yann LeCun (followed)"


def test_when_openalex_refuses_cursor_paging_without_a_key_pages_are_read_by_number(make_services, fake_openalex,
                                                                                     clock):
    services = make_services()
    lecun = FakeAuthor("A5023888391", "Yann LeCun", "New York University", 600)
    fake_openalex.authors.append(lecun)
    fake_openalex.works += [FakeWork(f"W{900 + n}", f"World model number {n}", "x", "2026-11-25", [lecun])
                            for n in range(205)]
    fake_openalex.cursor_needs_key = True
    assert manager(services).send("follow author A5023888391").ok
    assert services.core.tick(clock.now, nothing, ["console"])["papers_arrived"] == 205
    pages = [params.get("page", params.get("cursor"))[0] for path, params in fake_openalex.requests if path == "/works"]
    assert pages == ["*", "1", "2"]


# --- display-safe text (issue 45, item 9) ------------------------------------------------------

RLO, BOM, ACUTE = "\u202e", "\ufeff", "\u0301"
SPOOFED = f"{BOM}G{ACUTE * 50}raph networks {RLO}gnp.exe"
CLEANED = f"G{ACUTE * 4}raph networks gnp.exe"


def test_an_arxiv_entry_is_stored_display_safe(make_services, fake_arxiv, clock):
    services = make_services()
    fake_arxiv.papers.append(ArxivPaper("2611.00042", SPOOFED, f"An {RLO}abstract.", clock.now - timedelta(hours=10),
                                        ["cs.LG"], authors=[f"Ada {RLO}Lovelace", "Nguyễn Văn An"]))
    assert manager(services).send("follow arxiv cs.LG").ok
    assert services.core.tick(clock.now, nothing, ["console"])["papers_arrived"] == 1
    paper = services.library.find("arXiv:2611.00042")
    assert paper.title == CLEANED and paper.abstract == "An abstract."
    assert paper.authors == ["Ada Lovelace", "Nguyễn Văn An"]
    assert [pid for _, pid in arrivals(services)] == [paper.id]  # the arrival found the cleaned paper


def test_an_openalex_work_and_author_are_stored_display_safe(make_services, fake_openalex, clock):
    services = make_services()
    spoofer = FakeAuthor("A5023888391", f"Yann {RLO}LeCun{BOM}", f"New York {RLO}University", 600)
    fake_openalex.authors.append(spoofer)
    fake_openalex.works.append(FakeWork("W900", SPOOFED, f"We {RLO}learn.", "2026-11-25", [spoofer]))
    assert "Following Yann LeCun (number 1)" in manager(services).send("follow author A5023888391").text
    assert services.core.tick(clock.now, nothing, ["console"])["papers_arrived"] == 1
    [(_, paper_id)] = arrivals(services)
    paper = services.library.find(str(paper_id))
    assert paper.title == CLEANED and paper.authors == ["Yann LeCun"] and paper.abstract == "We learn."
    with services.db.session() as session:
        assert session.scalar(select(Follow.label)) == "Yann LeCun"
        assert session.scalar(select(FollowArrival.reason)) == "by Yann LeCun (followed)"

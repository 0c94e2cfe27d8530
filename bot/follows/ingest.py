"""The daily ingest: each follow fetched once a day, exactly once across replicas, from
its high-water mark.

A tick walks the follows that have no claim for today (UTC). For each it inserts a
claim row, unique on (follow, day), with INSERT ... ON CONFLICT DO NOTHING: only the
process whose insert landed fetches. A claim whose fetch failed is taken again after
RETRY (at most ATTEMPTS a day); one left "claimed" by a process that died, after LEASE.
The fetch asks for what appeared after the follow's mark (`fetched_through`); the papers
are imported into the follow's collection with the library's identity rules (an arXiv
preprint and its published DOI are one paper), each is recorded as an arrival once per
(follow, paper) with its reason, and the mark moves, in the transaction that closes the
claim. A process that dies between the import and that transaction leaves the mark
where it was: the next fetch asks for the same window, and the import and the arrivals,
both keyed on identity, make nothing twice.

One bad work is skipped, not fatal: the providers' readers (bot.follows.answers for
OpenAlex, bot.follows.arxiv) turn a work they cannot use into a skip with why; the skip
is logged once (follow, work, why), the rest are imported, the mark moves, and the
follow's status says what was skipped (`following` shows it).

The ingest runs on a scheduler job of its own (bot.scheduler.add_provider_jobs), never
in the minute's tick: a provider that stalls holds no channel's post. A run has a time
budget for starting follows (with arXiv's one request every 3 s, a hundred follows take
minutes: a run does what fits and the next goes on), takes them on a few workers so one
stuck provider holds only its own follow, and gives each follow a deadline that bounds
everything it does, waits included. What does not fit is put off, not slept: a
Retry-After longer than the time left, or a fetch out of time before its first page,
stores `wait_until` on the follow (the provider's wait, at most a day; RETRY otherwise)
and closes the claim as deferred; any process takes it again after that moment. Paging
that runs out of time or pages keeps what it read and moves the mark only as far as that
was complete, so the next fetch resumes there. A stopping process puts its follows off
with no wait: the next process takes them at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from datetime import time as day_time

from sqlalchemy import ColumnElement, and_, or_, select, tuple_, update

from bot.corpus.fetch import FetchError, OutOfTime
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, title_key
from bot.follows.answers import Skip, Work
from bot.follows.arxiv import ArxivListing
from bot.follows.follows import FollowView
from bot.follows.models import Follow, FollowArrival, FollowClaim
from bot.follows.openalex import OR_MAX, OpenAlex
from bot.follows.sources import WorkIds, read_papers
from bot.messages import counted
from bot.search.engine import SearchBackend
from store import Database
from store.database import upsert_insert
from store.models import PaperExternalId, PaperSource, utcnow

log = logging.getLogger(__name__)

LOOKBACK = timedelta(days=2)  # a new follow starts with what appeared since the day before yesterday
LEASE = timedelta(minutes=15)
RETRY = timedelta(minutes=30)
ATTEMPTS = 4  # failed fetches of one follow a day at most
DEFERRALS = 12  # times a day a follow is put off or goes on after a cut (a provider that always asks to wait)
BUDGET = 40.0  # seconds in which a run starts follows
FOLLOW_SECONDS = 90.0  # one follow's fetch in all, waits included (well inside LEASE)
WORKERS = 3  # follows fetched at once: a stuck provider holds one, the others go on
WAIT_MOST = timedelta(days=1)  # a provider's Retry-After is kept at most this long
WORKS_MAX = 1000  # works per OpenAlex follow and fetch
MESSAGE_MAX = 2000


@dataclass
class Fetched:
    """What one fetch brought: records with their reasons, the works skipped (id, why),
    and the follow's new mark."""

    records: list[PaperRecord] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    mark: datetime | None = None
    fmt: str = ""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unit: str = "work"  # what the provider calls one (arXiv: an entry)
    cut: str = ""  # why the fetch stopped before the end (out of time, pages); "" when it read all

    def add(self, record: PaperRecord, reason: str) -> None:
        self.records.append(record)
        self.reasons.append(reason)

    def skipped_line(self, new: int) -> str:
        """The follow's status after a fetch with skips: "2 new; skipped 1 work: W2 (why)"."""
        first_id, why = self.skipped[0]
        more = len(self.skipped) - 1
        unit = counted(len(self.skipped), self.unit, "entries" if self.unit == "entry" else None)
        return f"{new} new; skipped {unit}: {first_id} ({why})" + (f" and {more} more" if more else "")


class Ingest:
    def __init__(self, db: Database, library: Library, search: SearchBackend, arxiv: ArxivListing,
                 openalex: OpenAlex, budget: float = BUDGET, timer: Callable[[], float] = time.monotonic,
                 seconds: float = FOLLOW_SECONDS, workers: int = WORKERS):
        self.db = db
        self.library = library
        self.search = search
        self.arxiv = arxiv
        self.openalex = openalex
        self.works = WorkIds(db, openalex)
        self.budget = budget
        self.timer = timer
        self.seconds = seconds
        self.workers = workers

    def tick(self, now: datetime, stopping: Callable[[], bool] = lambda: False) -> dict[str, int]:
        """One run: the follows due, each claimed just before its fetch (so a claim is
        never held by a follow waiting in line), on `workers` threads."""
        day = now.date()
        started = self.timer()
        waiting = list(self.due(day, now))
        counts = {"follows_fetched": 0, "follows_failed": 0, "follows_deferred": 0, "papers_arrived": 0}
        lock = threading.Lock()

        def next_follow() -> int | None:
            with lock:
                if not waiting or stopping() or self.timer() - started > self.budget:
                    return None
                return waiting.pop(0)

        def work() -> None:
            while (follow_id := next_follow()) is not None:
                follow = self._claim(follow_id, day, now)
                if follow is None:
                    continue  # another process has it
                outcome, arrived = self._run(follow, day, now, time.monotonic() + self.seconds)
                with lock:
                    counts[f"follows_{outcome}"] += 1
                    counts["papers_arrived"] += arrived

        threads = [threading.Thread(target=work, name=f"follow-fetch-{n}", daemon=True)
                   for n in range(min(self.workers, len(waiting)))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if counts["papers_arrived"]:
            self.search.current()  # this process's index; the others catch up on their next look
        return {name: value for name, value in counts.items() if value or name != "follows_deferred"}

    def stop(self) -> None:
        """The process is stopping: fetches in flight are cut, and their follows put off
        with no wait (the next process takes them at once)."""
        self.arxiv.fetcher.stop()
        self.openalex.fetcher.stop()

    def due(self, day: date, now: datetime) -> list[int]:
        """Follows not fetched today, and those whose claim may be taken again; none put
        off past `now`."""
        with self.db.session() as session:
            return list(session.scalars(
                select(Follow.id)
                .outerjoin(FollowClaim, and_(FollowClaim.follow_id == Follow.id, FollowClaim.day == day))
                .where(or_(FollowClaim.id.is_(None), _retakable(now)))
                .where(or_(Follow.wait_until.is_(None), Follow.wait_until <= now))
                .order_by(Follow.id)
            ))

    def _claim(self, follow_id: int, day: date, now: datetime) -> FollowView | None:
        with self.db.session() as session:
            row = {"follow_id": follow_id, "day": day, "state": "claimed", "attempts": 1,
                   "claimed_at": now, "updated_at": now}
            won = session.execute(
                upsert_insert(session, FollowClaim).values(row)
                .on_conflict_do_nothing(index_elements=["follow_id", "day"]).returning(FollowClaim.id)
            ).scalar()
            if won is None:
                won = session.execute(
                    update(FollowClaim)
                    .where(FollowClaim.follow_id == follow_id, FollowClaim.day == day, _retakable(now))
                    .values(state="claimed", attempts=FollowClaim.attempts + 1, claimed_at=now, updated_at=now)
                    .returning(FollowClaim.id)
                ).scalar()
            if won is None:
                return None
            follow = session.get(Follow, follow_id)
            return FollowView.of(follow) if follow else None

    def _run(self, follow: FollowView, day: date, now: datetime, deadline: float) -> tuple[str, int]:
        """Fetch, import and record one follow: ("fetched", papers it brought), ("failed",
        0), or ("deferred", 0) when it is put off."""
        try:
            fetched = self.fetch(follow, now, deadline)
            paper_ids = self._import(follow, fetched)
        except OutOfTime as late:
            self._defer(follow, day, now, late)
            return "deferred", 0
        except (FetchError, CorpusFormatError, ValueError) as problem:
            log.warning("follow %d (%s): fetch failed: %s", follow.id, follow.label, problem)
            self._close(follow, day, now, "failed", str(problem))
            return "failed", 0
        except Exception as problem:  # a bug of ours: logged with its traceback, the run goes on
            log.exception("follow %d (%s): fetch failed", follow.id, follow.label)
            self._close(follow, day, now, "failed", f"unexpected {type(problem).__name__}: {problem}")
            return "failed", 0
        for skipped_id, why in fetched.skipped:
            log.warning("follow %d (%s): skipped %s %s: %s", follow.id, follow.label, fetched.unit, skipped_id, why)
        # A fetch cut short that moved the mark goes on at the next run (it resumes from the
        # mark); one that could not move it waits for tomorrow rather than ask again each minute.
        again = bool(fetched.cut) and fetched.mark is not None and fetched.mark > self.start(follow)
        if fetched.cut:
            log.info("follow %d (%s): %s; %s", follow.id, follow.label, fetched.cut,
                     "the next run goes on from there" if again else "tomorrow's fetch asks again")
        arrivals = [(pid, reason) for pid, reason in zip(paper_ids, fetched.reasons, strict=True) if pid is not None]
        return "fetched", self._close(follow, day, now, "done", "", arrivals, fetched.mark, fetched, again)

    # --- fetching ---------------------------------------------------------------------------

    @staticmethod
    def start(follow: FollowView) -> datetime:
        """Where the follow's next fetch starts: its mark, or a new follow's LOOKBACK."""
        return follow.fetched_through or follow.created_at - LOOKBACK

    def fetch(self, follow: FollowView, now: datetime, deadline: float | None = None) -> Fetched:
        """What appeared since the follow's mark, read by `deadline` (time.monotonic()):
        OutOfTime when not even a first page came in time."""
        start = self.start(follow)
        if follow.kind == "arxiv":
            return self._arxiv(follow, start, now, deadline)
        fetched = Fetched(fmt="openalex", mark=now)
        if follow.kind == "author":
            self._openalex(fetched, self.openalex.by_author(follow.target, start.date(), WORKS_MAX, deadline),
                           start, lambda work: f"by {follow.label} (followed)")
            return fetched
        return self._citations(follow, start, now, deadline, fetched)

    def _arxiv(self, follow: FollowView, start: datetime, now: datetime, deadline: float | None) -> Fetched:
        listing = self.arxiv.entries(follow.target, follow.query, start, now, deadline)
        # The mark is the latest submission seen, not the clock (bot/follows/arxiv.py):
        # entries submitted since but announced later are asked for next time. The
        # listing is oldest first, so a cut listing also resumes where it stopped.
        fetched = Fetched(fmt="arxiv", mark=max(listing.newest or start, start), skipped=listing.skipped,
                          unit="entry", cut="" if listing.complete else "the listing was cut short")
        matching = f' matching "{follow.query}"' if follow.query else ""
        for entry in listing.entries:
            on = entry.submitted
            fetched.add(entry.record, f"new on arXiv {on.day} {on:%b} in {follow.target}{matching}")
        return fetched

    def _citations(self, follow: FollowView, start: datetime, now: datetime, deadline: float | None,
                   fetched: Fetched) -> Fetched:
        read = read_papers(self.db, follow.channel_id, now)
        works = self.works.of([r.paper_id for r in read], now)
        by_work = {works[r.paper_id]: r for r in read if r.paper_id in works}
        if not by_work:
            return fetched

        def reason(work: Work) -> str | None:
            if work.id in by_work:
                return None  # a paper the channel read, citing another it read
            cited = [by_work[w] for w in work.cites if w in by_work]
            return cited[0].phrase() if cited else "cites a paper this channel read"

        # One request's works come oldest first; several requests' (OR_MAX read papers
        # each) do not, so a cut among several keeps the mark where it was.
        self._openalex(fetched, self.openalex.citing(sorted(by_work), start.date(), WORKS_MAX, deadline),
                       start, reason, resumable=len(by_work) <= OR_MAX)
        return fetched

    def _openalex(self, fetched: Fetched, works: Iterator[Work | Skip], start: datetime,
                  reason: Callable[[Work], str | None], resumable: bool = True) -> None:
        """Read OpenAlex's works into `fetched`, each once (a work citing papers of two
        requests comes twice). Works come oldest first: when paging stops early (out of
        time or pages), the mark is the last publication day read (asked for again, as the
        day may hold more), so the next fetch resumes there."""
        seen: set[str] = set()
        last: date | None = None
        try:
            for work in works:
                if work.id in seen:
                    continue
                seen.add(work.id)
                if isinstance(work, Skip):
                    fetched.skipped.append((work.id, work.reason))
                    continue
                if work.published:
                    last = max(last or work.published, work.published)
                why = reason(work)
                if why is not None:
                    fetched.add(work.record, why)
        except OutOfTime as late:
            if not seen:
                raise
            fetched.cut = str(late)
            day = datetime.combine(last, day_time(), timezone.utc) if last and resumable else start
            fetched.mark = max(day, start)

    # --- storing ----------------------------------------------------------------------------

    def _import(self, follow: FollowView, fetched: Fetched) -> list[int | None]:
        """Import the records into the follow's collection; each record's paper id."""
        if not fetched.records:
            return []
        self.library.import_records(fetched.records, collection=follow.collection, source=f"{follow.kind}.follow",
                                    fmt=fetched.fmt)
        return self._paper_ids(follow.collection, fetched.records)

    def _paper_ids(self, collection: str, records: list[PaperRecord]) -> list[int | None]:
        pairs = {pair for r in records for pair in r.external_ids.items()}
        keys = {title_key(r.title) for r in records}
        with self.db.session() as session:
            by_id = {}
            pair_list = sorted(pairs)
            for start in range(0, len(pair_list), 500):
                by_id.update({(s, v): pid for s, v, pid in session.execute(
                    select(PaperExternalId.scheme, PaperExternalId.value, PaperExternalId.paper_id)
                    .where(tuple_(PaperExternalId.scheme, PaperExternalId.value).in_(pair_list[start:start + 500])))})
            by_title = dict(session.execute(
                select(PaperSource.title_key, PaperSource.paper_id)
                .where(PaperSource.collection == collection, PaperSource.title_key.in_(sorted(keys)))).all())
        found = []
        for record in records:
            ids = [by_id[p] for p in record.external_ids.items() if p in by_id]
            found.append(ids[0] if ids else by_title.get(title_key(record.title)))
        return found

    def _defer(self, follow: FollowView, day: date, now: datetime, late: OutOfTime) -> None:
        """Put the follow off: until the provider's Retry-After (at most WAIT_MOST), or
        RETRY when it ran out of time, or not at all when the process is stopping (the
        next process takes it at once). Its mark stays; the claim closes as deferred."""
        wait = timedelta(0) if late.stopping else min(timedelta(seconds=late.wait), WAIT_MOST) if late.wait else RETRY
        until = now + wait
        log.warning("follow %d (%s): put off until %s: %s", follow.id, follow.label, f"{until:%Y-%m-%d %H:%M} UTC",
                    late)
        why = ("paperclub restarted during the fetch" if late.stopping
               else "the provider asked paperclub to wait" if late.wait else "the provider did not answer in time")
        message = f"{why}: {late}"[:MESSAGE_MAX]  # `following` shows what comes before the colon
        with self.db.session() as session:
            session.execute(update(Follow).where(Follow.id == follow.id).values(
                wait_until=until, last_run_at=now, last_status="waiting", last_message=message))
            session.execute(
                update(FollowClaim).where(FollowClaim.follow_id == follow.id, FollowClaim.day == day)
                .values(state="deferred", error=message, updated_at=utcnow()))

    def _close(self, follow: FollowView, day: date, now: datetime, state: str, message: str,
               arrivals: Sequence[tuple[int, str]] = (), mark: datetime | None = None,
               fetched: Fetched | None = None, again: bool = False) -> int:
        """Record the arrivals, move the mark and close the claim, in one transaction (the
        claim deferred, `again`, for a fetch to go on at the next run). The follow's status:
        ok, partial (works skipped: the message says which), or failed."""
        inserted = 0
        with self.db.session() as session:
            rows = [{"follow_id": follow.id, "paper_id": pid, "arrived_at": now, "reason": reason}
                    for pid, reason in dict(arrivals).items()]
            if rows:
                result = session.execute(
                    upsert_insert(session, FollowArrival).values(rows)
                    .on_conflict_do_nothing(index_elements=["follow_id", "paper_id"])
                    .returning(FollowArrival.id))
                inserted = len(result.all())
            status = "failed" if state != "done" else "partial" if fetched and fetched.skipped else "ok"
            if status == "partial" and fetched:
                message = fetched.skipped_line(inserted)
            values = {"last_run_at": now, "last_status": status, "wait_until": None,
                      "last_message": (message or f"{inserted} new")[:MESSAGE_MAX]}
            if state == "done" and mark is not None:
                values["fetched_through"] = mark
            session.execute(update(Follow).where(Follow.id == follow.id).values(**values))
            error = message[:MESSAGE_MAX] if state != "done" else None
            session.execute(
                update(FollowClaim).where(FollowClaim.follow_id == follow.id, FollowClaim.day == day)
                .values(state="deferred" if again else state, error=error or None, updated_at=utcnow()))
        return inserted


def _retakable(now: datetime) -> ColumnElement[bool]:
    """A claim another tick may take: failed past its back-off (attempts left), put off
    (`due` waits for the follow's wait_until; DEFERRALS a day at most, as a provider that
    always asks to wait, or pages without end, must not be asked all day), or claimed
    by a process that died (past the lease)."""
    return or_(
        and_(FollowClaim.state == "deferred", FollowClaim.attempts < DEFERRALS),
        and_(FollowClaim.state == "failed", FollowClaim.attempts < ATTEMPTS, FollowClaim.claimed_at <= now - RETRY),
        and_(FollowClaim.state == "claimed", FollowClaim.claimed_at <= now - LEASE),
    )

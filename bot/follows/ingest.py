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

The tick has a time budget: with arXiv's one request every 3 s, a hundred follows take
minutes, so a tick does what fits and the next minute's tick goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from sqlalchemy import ColumnElement, and_, or_, select, tuple_, update

from bot.corpus.fetch import FetchError
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, title_key
from bot.follows.answers import Skip
from bot.follows.arxiv import ArxivListing
from bot.follows.follows import FollowView
from bot.follows.models import Follow, FollowArrival, FollowClaim
from bot.follows.openalex import OpenAlex
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
ATTEMPTS = 4  # fetches of one follow a day at most
BUDGET = 40.0  # seconds of fetching a tick starts at most
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
                 openalex: OpenAlex, budget: float = BUDGET, timer: Callable[[], float] = time.monotonic):
        self.db = db
        self.library = library
        self.search = search
        self.arxiv = arxiv
        self.openalex = openalex
        self.works = WorkIds(db, openalex)
        self.budget = budget
        self.timer = timer

    def tick(self, now: datetime, stopping: Callable[[], bool] = lambda: False) -> dict[str, int]:
        day = now.date()
        started = self.timer()
        counts = {"follows_fetched": 0, "follows_failed": 0, "papers_arrived": 0}
        for follow_id in self.due(day, now):
            if stopping() or self.timer() - started > self.budget:
                break
            follow = self._claim(follow_id, day, now)
            if follow is None:
                continue  # another process has it
            arrived = self._run(follow, day, now)
            if arrived is None:
                counts["follows_failed"] += 1
            else:
                counts["follows_fetched"] += 1
                counts["papers_arrived"] += arrived
        if counts["papers_arrived"]:
            self.search.current()  # this process's index; the others catch up on their next look
        return counts

    def due(self, day: date, now: datetime) -> list[int]:
        """Follows not fetched today, and those whose claim may be taken again."""
        with self.db.session() as session:
            return list(session.scalars(
                select(Follow.id)
                .outerjoin(FollowClaim, and_(FollowClaim.follow_id == Follow.id, FollowClaim.day == day))
                .where(or_(FollowClaim.id.is_(None), _retakable(now)))
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

    def _run(self, follow: FollowView, day: date, now: datetime) -> int | None:
        """Fetch, import and record one follow; the papers it brought, or None on failure."""
        try:
            fetched = self.fetch(follow, now)
            paper_ids = self._import(follow, fetched)
        except (FetchError, CorpusFormatError, ValueError) as problem:
            log.warning("follow %d (%s): fetch failed: %s", follow.id, follow.label, problem)
            self._close(follow, day, now, "failed", str(problem))
            return None
        except Exception as problem:  # a bug of ours: logged with its traceback, the tick goes on
            log.exception("follow %d (%s): fetch failed", follow.id, follow.label)
            self._close(follow, day, now, "failed", f"unexpected {type(problem).__name__}: {problem}")
            return None
        for skipped_id, why in fetched.skipped:
            log.warning("follow %d (%s): skipped %s %s: %s", follow.id, follow.label, fetched.unit, skipped_id, why)
        arrivals = [(pid, reason) for pid, reason in zip(paper_ids, fetched.reasons, strict=True) if pid is not None]
        return self._close(follow, day, now, "done", "", arrivals, fetched.mark, fetched)

    # --- fetching ---------------------------------------------------------------------------

    def fetch(self, follow: FollowView, now: datetime) -> Fetched:
        start = follow.fetched_through or follow.created_at - LOOKBACK
        if follow.kind == "arxiv":
            return self._arxiv(follow, start, now)
        if follow.kind == "author":
            fetched = Fetched(fmt="openalex", mark=now)
            for work in self.openalex.by_author(follow.target, start.date(), WORKS_MAX):
                if isinstance(work, Skip):
                    fetched.skipped.append((work.id, work.reason))
                else:
                    fetched.add(work.record, f"by {follow.label} (followed)")
            return fetched
        return self._citations(follow, start, now)

    def _arxiv(self, follow: FollowView, start: datetime, now: datetime) -> Fetched:
        listing = self.arxiv.entries(follow.target, follow.query, start, now)
        # The mark is the latest submission seen, not the clock (bot/follows/arxiv.py):
        # entries submitted since but announced later are asked for next time. The
        # listing is oldest first, so a cut listing also resumes where it stopped.
        fetched = Fetched(fmt="arxiv", mark=max(listing.newest or start, start), skipped=listing.skipped,
                          unit="entry")
        matching = f' matching "{follow.query}"' if follow.query else ""
        for entry in listing.entries:
            on = entry.submitted
            fetched.add(entry.record, f"new on arXiv {on.day} {on:%b} in {follow.target}{matching}")
        return fetched

    def _citations(self, follow: FollowView, start: datetime, now: datetime) -> Fetched:
        fetched = Fetched(fmt="openalex", mark=now)
        read = read_papers(self.db, follow.channel_id, now)
        works = self.works.of([r.paper_id for r in read], now)
        by_work = {works[r.paper_id]: r for r in read if r.paper_id in works}
        if not by_work:
            return fetched
        seen: set[str] = set()
        for work in self.openalex.citing(sorted(by_work), start.date(), WORKS_MAX):
            if isinstance(work, Skip):
                if work.id not in seen:  # a work citing papers of two requests comes twice
                    seen.add(work.id)
                    fetched.skipped.append((work.id, work.reason))
                continue
            cited = [by_work[w] for w in work.cites if w in by_work]
            if work.id in seen or work.id in by_work:
                continue
            seen.add(work.id)
            first = cited[0] if cited else None
            fetched.add(work.record, first.phrase() if first else "cites a paper this channel read")
        return fetched

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

    def _close(self, follow: FollowView, day: date, now: datetime, state: str, message: str,
               arrivals: Sequence[tuple[int, str]] = (), mark: datetime | None = None,
               fetched: Fetched | None = None) -> int:
        """Record the arrivals, move the mark and close the claim, in one transaction. The
        follow's status: ok, partial (works skipped: the message says which), or failed."""
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
            values = {"last_run_at": now, "last_status": status,
                      "last_message": (message or f"{inserted} new")[:MESSAGE_MAX]}
            if state == "done" and mark is not None:
                values["fetched_through"] = mark
            session.execute(update(Follow).where(Follow.id == follow.id).values(**values))
            error = message[:MESSAGE_MAX] if state != "done" else None
            session.execute(
                update(FollowClaim).where(FollowClaim.follow_id == follow.id, FollowClaim.day == day)
                .values(state=state, error=error or None, updated_at=utcnow()))
        return inserted


def _retakable(now: datetime) -> ColumnElement[bool]:
    """A claim another tick may take: failed past its back-off (attempts left), or
    claimed by a process that died (past the lease)."""
    return or_(
        and_(FollowClaim.state == "failed", FollowClaim.attempts < ATTEMPTS, FollowClaim.claimed_at <= now - RETRY),
        and_(FollowClaim.state == "claimed", FollowClaim.claimed_at <= now - LEASE),
    )

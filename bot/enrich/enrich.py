"""A run of the enrichment: the papers that lack a link, a DOI, a year or a venue, asked
about at OpenAlex by title, matched by title and authors (bot.enrich.matching), and what
OpenAlex knows filled in as a source of its own, "filled:openalex", which the merge reads
after every other (bot.corpus.merge): it fills what no person or file said and never
overwrites it, and the paper's sources say where each value came from.

Manners and bounds. A run asks about `limit` papers at most, TITLES_MOST titles a request,
within `seconds` (every request's waits included). Runs take turns across processes: a run
takes the provider's turn (EnrichTurn) only once `every` has passed since the last, and
each paper by moving its `retry_at` past a lease (EnrichAttempt), so no paper is asked
twice at once. A paper asked is not asked again for a long while: MATCHED_AGAIN once
matched, UNMATCHED_AGAIN when OpenAlex did not know it (FAILED_AGAIN after an answer that
could not be read). A Retry-After longer than the run may wait puts the provider off until
then (at most WAIT_MOST), and the run ends at once; the papers it had not asked are let go
(asked by the next run), none half-written: each request's papers are filled in one
transaction after its answer was read. One bad work is skipped and logged; a junk answer
costs its request's papers a day. `stop()` (the process is shutting down) cuts the request
in flight.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, bindparam, exists, or_, select, update

from bot.corpus.fetch import Fetcher, FetchError, FetchPolicy, HostLimiter, OutOfTime
from bot.corpus.library import Library
from bot.corpus.records import LIMITS, CorpusFormatError, PaperRecord, RestoredSource, check_record
from bot.enrich.matching import Wanted, match
from bot.enrich.models import EnrichAttempt, EnrichTurn
from bot.enrich.openalex import Answer, AnswerError, Found, TitleSearch
from bot.messages import counted
from bot.search.engine import SearchBackend
from store import Database
from store.database import as_utc, table_of, upsert_insert
from store.models import FILLED_PREFIX, Paper, PaperExternalId

log = logging.getLogger(__name__)

PROVIDER = "openalex"
COLLECTION = FILLED_PREFIX + PROVIDER
SOURCE = "openalex.org"
FORMAT = "openalex"
LEASE = timedelta(minutes=15)  # a claimed paper is free again after this, should its run die
MATCHED_AGAIN = timedelta(days=180)  # a matched paper is asked again (its citations) after this
UNMATCHED_AGAIN = timedelta(days=30)
FAILED_AGAIN = timedelta(days=1)
WAIT_MOST = timedelta(days=1)
RUN_SECONDS = 60.0  # a background run in all, waits included
MESSAGE_MAX = 2_000
CLAIM_CHUNK = 500  # papers claimed in one statement
# One request at OpenAlex a second from this process at most (its polite pool allows ten);
# a junk or cut answer is not retried at once.
LIMITER = HostLimiter(interval=1.0)
POLICY = FetchPolicy(max_attempts=3, backoff_base=2.0, max_backoff=30.0, max_retry_after=30.0, timeout=20.0,
                     request_seconds=40.0, max_bytes=20_000_000)


def fetcher() -> Fetcher:
    return Fetcher(POLICY, LIMITER)


@dataclass
class Outcome:
    """What a run did, as counts and a line for the operator."""

    requests: int = 0
    matched: int = 0
    unmatched: int = 0
    failed: int = 0
    filled: int = 0  # papers whose shown fields changed
    skipped: int = 0  # works skipped for their shape
    crowded: int = 0  # papers whose title a cut answer held nothing of: asked alone next
    let_go: int = 0  # papers claimed, not asked (out of time, the provider's wait, stopping)
    waiting: str = ""  # why the run did not start, or stopped early

    def counts(self) -> dict[str, int]:
        found = {"enrich_requests": self.requests, "enrich_matched": self.matched,
                 "enrich_unmatched": self.unmatched, "enrich_failed": self.failed, "enrich_filled": self.filled}
        return {name: value for name, value in found.items() if value}

    def line(self) -> str:
        asked = self.matched + self.unmatched + self.failed
        text = (f"asked OpenAlex about {counted(asked, 'paper')} in {counted(self.requests, 'request')}: "
                f"{self.matched:,} matched ({self.filled:,} filled in), {self.unmatched:,} not found"
                + (f", {self.failed:,} failed" if self.failed else "")
                + (f"; {counted(self.skipped, 'work')} skipped" if self.skipped else ""))
        return text + (f"; {self.waiting}" if self.waiting else "")


class Enricher:
    def __init__(self, db: Database, library: Library, search: SearchBackend | None, client: TitleSearch,
                 timer: Callable[[], float] = time.monotonic):
        self.db = db
        self.library = library
        self.search = search
        self.client = client
        self.timer = timer

    def stop(self) -> None:
        self.client.fetcher.stop()

    # --- a run ------------------------------------------------------------------------------

    def run(self, now: datetime, limit: int, every: timedelta | None = None, seconds: float = RUN_SECONDS,
            stopping: Callable[[], bool] = lambda: False) -> Outcome:
        """Ask about up to `limit` papers, if the provider's turn is free (`every`: since the
        last run; None: whenever OpenAlex asked no wait)."""
        outcome = Outcome()
        waiting = self._take_turn(now, every)
        if waiting:
            outcome.waiting = waiting
            return outcome
        deadline = self.timer() + seconds
        by_key: dict[str, list[Wanted]] = {}
        crowded: set[str] = set()
        for paper, last in self._claim(self.due(now, limit), now):
            by_key.setdefault(paper.key, []).append(paper)
            if last == "crowded":
                crowded.add(paper.key)
        # Titles a cut answer held nothing of go alone; the rest TITLES_MOST a request.
        requests = self.client.batches([k for k in by_key if k not in crowded]) + [[k] for k in sorted(crowded)]
        for place, keys in enumerate(requests):
            papers = [paper for key in keys for paper in by_key[key]]
            if stopping() or self.timer() >= deadline:
                outcome.waiting = "paperclub is stopping" if stopping() else "out of time: the next run goes on"
                outcome.let_go += self._let_go([p for later in requests[place:] for k in later for p in by_key[k]])
                break
            try:
                outcome.requests += 1
                answer = self.client.ask(keys, deadline)
            except OutOfTime as late:
                outcome.let_go += self._let_go([p for later in requests[place:] for k in later for p in by_key[k]])
                outcome.waiting = self._defer(now, late)
                break
            except AnswerError as problem:  # its papers wait a day; the next request may be fine
                log.warning("enrich: OpenAlex answered a request for %s badly, asked again in a day: %s",
                            counted(len(papers), "paper"), problem)
                self._record(now, [(p, "failed", None) for p in papers])
                outcome.failed += len(papers)
                continue
            except FetchError as problem:  # OpenAlex unreachable or failing: the rest waits for the next run
                log.warning("enrich: OpenAlex could not be asked (the next run tries again): %s", problem)
                outcome.let_go += self._let_go([p for later in requests[place:] for k in later for p in by_key[k]])
                outcome.waiting = "OpenAlex could not be asked; the next run tries again"
                break
            self._take(self._outcomes(answer, papers, outcome), now, outcome)
        if outcome.filled and self.search is not None:
            self.search.current()  # this process's index; the others catch up on their next look
        self._note(outcome)
        return outcome

    def due(self, now: datetime, limit: int) -> list[tuple[Wanted, str | None]]:
        """Papers with a title of their own that lack a link, a year, a venue or a DOI, not
        asked about since their `retry_at`, in id order; each with how its last ask went."""
        doi = exists().where(PaperExternalId.paper_id == Paper.id, PaperExternalId.scheme == "doi")
        query = (
            select(Paper.id, Paper.title, Paper.title_derived, Paper.title_key, Paper.authors, Paper.year,
                   EnrichAttempt.outcome)
            .outerjoin(EnrichAttempt, and_(EnrichAttempt.paper_id == Paper.id, EnrichAttempt.provider == PROVIDER))
            .where(or_(EnrichAttempt.paper_id.is_(None), EnrichAttempt.retry_at <= now))
            .where(Paper.title_derived.is_(False), Paper.title_key != "")
            .where(or_(Paper.url.is_(None), Paper.year.is_(None), Paper.venue.is_(None), ~doi))
            .order_by(Paper.id).limit(limit)
        )
        with self.db.session() as session:
            rows = session.execute(query).all()
        return [(Wanted(pid, title, derived, key, tuple(authors or ()), year), last)
                for pid, title, derived, key, authors, year, last in rows]

    # --- turns and claims -------------------------------------------------------------------

    def _take_turn(self, now: datetime, every: timedelta | None) -> str:
        """"" when this run may go, else why not."""
        with self.db.session() as session:
            session.execute(upsert_insert(session, EnrichTurn).values(provider=PROVIDER)
                            .on_conflict_do_nothing(index_elements=["provider"]))
            turn = session.get_one(EnrichTurn, PROVIDER)
            wait = as_utc(turn.wait_until)
            if wait is not None and wait > now:
                return f"OpenAlex asked to wait until {wait:%Y-%m-%d %H:%M} UTC"
            free = [EnrichTurn.provider == PROVIDER]
            if every is not None:
                free.append(or_(EnrichTurn.last_run_at.is_(None), EnrichTurn.last_run_at <= now - every))
            taken = session.execute(update(EnrichTurn).where(*free).values(last_run_at=now, wait_until=None)
                                    .returning(EnrichTurn.provider)
                                    .execution_options(synchronize_session=False)).scalar()
            return "" if taken else "not its turn yet"

    def _claim(self, due: list[tuple[Wanted, str | None]], now: datetime) -> list[tuple[Wanted, str | None]]:
        """The papers this run won: each moved past the lease, where its time had come."""
        if not due:
            return []
        won: set[int] = set()
        table = EnrichAttempt.__table__
        with self.db.session() as session:
            for start in range(0, len(due), CLAIM_CHUNK):
                rows = [{"paper_id": paper.paper_id, "provider": PROVIDER, "outcome": "asking", "tried_at": now,
                         "retry_at": now + LEASE} for paper, _last in due[start : start + CLAIM_CHUNK]]
                insert = upsert_insert(session, EnrichAttempt).values(rows)
                statement = insert.on_conflict_do_update(
                    index_elements=["paper_id", "provider"], set_={"retry_at": now + LEASE},
                    where=table.c.retry_at <= now,
                ).returning(EnrichAttempt.paper_id)
                won.update(session.execute(statement).scalars())
        return [(paper, last) for paper, last in due if paper.paper_id in won]

    def _let_go(self, papers: list[Wanted]) -> int:
        """Claimed papers not asked: free for the next run at once (their outcome stays);
        how many."""
        if not papers:
            return 0
        with self.db.session() as session:
            session.execute(update(EnrichAttempt).where(
                EnrichAttempt.provider == PROVIDER,
                EnrichAttempt.paper_id.in_([p.paper_id for p in papers])).values(retry_at=EnrichAttempt.tried_at))
        return len(papers)

    def _defer(self, now: datetime, late: OutOfTime) -> str:
        """OpenAlex asked for a wait longer than the run may take (or the run ran out of
        time, or the process is stopping): the provider's turn waits, at most WAIT_MOST."""
        if late.stopping:
            return "paperclub is stopping"
        if not late.wait:
            return f"out of time: {late}"
        until = now + min(timedelta(seconds=late.wait), WAIT_MOST)
        log.warning("enrich: OpenAlex asked to wait; put off until %s UTC: %s", f"{until:%Y-%m-%d %H:%M}", late)
        with self.db.session() as session:
            session.execute(update(EnrichTurn).where(EnrichTurn.provider == PROVIDER).values(
                wait_until=until, last_message=f"OpenAlex asked to wait: {late}"[:MESSAGE_MAX]))
        return f"OpenAlex asked to wait until {until:%Y-%m-%d %H:%M} UTC"

    # --- what came back ---------------------------------------------------------------------

    def _take(self, results: list[tuple[Wanted, str, Found | None]], now: datetime, outcome: Outcome) -> None:
        """Fill in the matched papers (one transaction), then record every paper's outcome."""
        filled: list[tuple[int, RestoredSource]] = []
        rows: list[tuple[Wanted, str, Found | None]] = []
        for paper, state, work in results:
            record = filled_record(paper, work) if work is not None else None
            if work is not None and record is None:
                state, work = "failed", None
            if record is not None:
                filled.append((paper.paper_id, RestoredSource(COLLECTION, SOURCE, 1, FORMAT, record)))
            rows.append((paper, state, work))
        if filled:
            try:
                outcome.filled += len(self.library.fill(filled))
            except CorpusFormatError as problem:  # nothing of the request was written: its papers wait a day
                log.warning("enrich: what OpenAlex said of %s cannot be stored, asked again in a day: %s",
                            counted(len(filled), "paper"), problem)
                rows = [(paper, "failed" if state == "matched" else state, None) for paper, state, _work in rows]
        for _paper, state, _work in rows:
            setattr(outcome, state, getattr(outcome, state) + 1)
        self._record(now, rows)

    def _record(self, now: datetime, rows: list[tuple[Wanted, str, Found | None]]) -> None:
        again = {"matched": MATCHED_AGAIN, "unmatched": UNMATCHED_AGAIN, "failed": FAILED_AGAIN,
                 "crowded": timedelta(0)}
        table = table_of(EnrichAttempt)
        values = [{"pid": paper.paper_id, "outcome": state, "tried_at": now, "retry_at": now + again[state],
                   "work_id": work.id if work else None, "cited_by": work.cited_by if work else None}
                  for paper, state, work in rows]
        if not values:
            return
        statement = update(table).where(table.c.paper_id == bindparam("pid"), table.c.provider == PROVIDER).values(
            outcome=bindparam("outcome"), tried_at=bindparam("tried_at"), retry_at=bindparam("retry_at"),
            work_id=bindparam("work_id"), cited_by=bindparam("cited_by"))
        with self.db.connection() as connection:
            connection.execute(statement, values)

    @staticmethod
    def _outcomes(answer: Answer, papers: list[Wanted], outcome: Outcome) -> list[tuple[Wanted, str, Found | None]]:
        """Each paper's outcome in one answer: matched (with its work), crowded (the answer
        was cut and held nothing of its title: asked alone next), or unmatched. Works
        skipped for their shape: one log line."""
        if answer.skipped:
            first, why = answer.skipped[0]
            more = len(answer.skipped) - 1
            log.warning("enrich: skipped %s in OpenAlex's answer: %s (%s)%s",
                        counted(len(answer.skipped), "work"), first, why, f" and {more} more" if more else "")
            outcome.skipped += len(answer.skipped)
        keys = {w.key for w in answer.works}
        several = len({p.key for p in papers}) > 1
        results: list[tuple[Wanted, str, Found | None]] = []
        for paper in papers:
            work = match(paper, answer.works)
            if work is not None:
                results.append((paper, "matched", work))
            elif answer.cut and several and paper.key not in keys:
                results.append((paper, "crowded", None))
            else:
                results.append((paper, "unmatched", None))
        return results

    def _note(self, outcome: Outcome) -> None:
        with self.db.session() as session:
            session.execute(update(EnrichTurn).where(EnrichTurn.provider == PROVIDER).values(
                last_message=outcome.line()[:MESSAGE_MAX]))

    # --- what the feature reads -------------------------------------------------------------

    def cited_by(self, paper_id: int) -> int | None:
        with self.db.session() as session:
            return session.scalar(select(EnrichAttempt.cited_by).where(
                EnrichAttempt.paper_id == paper_id, EnrichAttempt.provider == PROVIDER))

    def status(self) -> dict[str, int]:
        """How many papers stand at each outcome."""
        from sqlalchemy import func

        with self.db.session() as session:
            return dict(session.execute(select(EnrichAttempt.outcome, func.count()).where(
                EnrichAttempt.provider == PROVIDER).group_by(EnrichAttempt.outcome)).all())


def filled_record(paper: Wanted, work: Found) -> PaperRecord | None:
    """What OpenAlex says of the paper, as a source's record under the paper's own title
    (the merge reads it after the paper's own sources); None when it cannot be stored."""
    ids = {"openalex": work.id}
    ids.update({scheme: value for scheme, value in (("doi", work.doi), ("arxiv", work.arxiv)) if value})
    venue = work.venue[: LIMITS["venue"]] if work.venue else None
    record = PaperRecord(title=paper.title, title_derived=paper.title_derived, authors=list(work.authors),
                         url=work.pdf or work.link, external_ids=ids, venue=venue, year=work.year)
    try:
        check_record(record, FORMAT)
    except CorpusFormatError as problem:
        log.warning("enrich: paper %d: OpenAlex's work %s cannot be stored: %s", paper.paper_id, work.id,
                    problem.message)
        return None
    return record

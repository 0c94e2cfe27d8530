"""The paper of the day, posted exactly once per channel and local date.

A tick finds the channels whose post is due, claims each (channel, local date) with an
INSERT ... ON CONFLICT DO NOTHING, and only for the claims it inserted does it pick,
reserve the paper (a posts row, unique per channel and paper), deliver, and record the
message reference. Two replicas, a restart or a retried tick therefore make one post.
A claim whose delivery failed is retried by a later tick within the catch-up grace;
one that was being sent when its process died is left alone (it may have gone out;
its claim stays "sending" for an operator to see). Each claim is marked "sending" just before its own delivery, in
the transaction that records the previous delivery's outcome, so a process that stops
(SIGTERM: `stopping()` turns true) or dies between two deliveries leaves only the
untouched claims, which the next tick takes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import and_, delete, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.channels.channels import Channels, ChannelSettings
from bot.corpus.library import Library
from bot.messages import ChannelRef, Deliver, DeliveryRefused, Reply
from bot.ops.settings import DEFAULT_GRACE
from bot.search.engine import Engine, SearchBackend
from bot.search.query import Query
from bot.services.picks import (
    Candidate,
    CandidateSource,
    Feedback,
    FeedbackSource,
    Pick,
    Picker,
    Rankings,
)
from bot.services.replies import LinesAbout, PostReplies, no_lines, nothing_left_reply
from store import Database
from store.database import as_utc, upsert_insert
from store.models import Channel, Paper, utcnow

if TYPE_CHECKING:
    from sqlalchemy.sql.dml import ReturningInsert
from bot.services.models import Claim, Post

log = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=10)  # a "claimed" claim older than this was abandoned
BATCH = 500
# A failed (transient) delivery is retried after 1, 2, 4 ... minutes, at most every 30:
# a platform that is down or rate-limiting is not hammered every minute for hours.
RETRY_FIRST = timedelta(minutes=1)
RETRY_MOST = timedelta(minutes=30)
# Days in a row of permanent refusals after which a channel's schedule pauses itself.
REFUSED_DAYS_TO_PAUSE = 3


@dataclass
class DailyReport:
    """What one tick posted, found empty, failed, skipped or left for the next."""

    posted: list[tuple[ChannelRef, int]] = field(default_factory=list)  # (channel, paper id)
    empty: list[ChannelRef] = field(default_factory=list)
    failed: list[tuple[ChannelRef, str]] = field(default_factory=list)
    skipped: list[tuple[ChannelRef, date]] = field(default_factory=list)
    released: int = 0  # due posts left unsent because the process was stopping


@dataclass
class _Job:
    channel: ChannelSettings
    day: date
    claim_id: int
    pick: Pick | None = None
    post_id: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class _Outcome:
    """A delivery's result, to be written: state posted | empty | failed; detail the
    message ref, or the error."""

    job: _Job
    state: str
    detail: str | None
    at: datetime


class Posts:
    """A channel's posts: the paper of the day (claimed exactly once), `next` and
    `discuss`, and what was posted."""

    def __init__(
        self,
        db: Database,
        channels: Channels,
        library: Library,
        search: SearchBackend,
        picker: Picker,
        feedback: FeedbackSource,
        grace: timedelta = DEFAULT_GRACE,
        sources: Sequence[CandidateSource] = (),
        lines_about: LinesAbout = no_lines,
    ):
        self.db = db
        # Papers offered ahead of the corpus (fresh picks from the follows), asked first.
        self.sources = list(sources)
        self.channels = channels
        self.library = library
        self.search = search
        self.picker = picker
        self.feedback = feedback
        # The features' lines about a post's paper (a TL;DR), from what they made ahead.
        self.replies = PostReplies(library, search.tokenizer, lines_about)
        self.grace = grace

    # --- the tick -------------------------------------------------------------------

    def tick(
        self,
        now: datetime,
        deliver: Deliver,
        platforms: Iterable[str],
        stopping: Callable[[], bool] = lambda: False,
    ) -> DailyReport:
        """Post every due pick for channels on `platforms` (those we can deliver to).
        Once `stopping()` is true no further post starts; the rest stay due."""
        platforms = set(platforms)
        report = DailyReport()
        due, missed = self._due(now, platforms)
        self._skip(missed, now, report)
        for start in range(0, len(due), BATCH):
            if stopping():
                break
            jobs = self._claim(due[start : start + BATCH], now)
            self._run(jobs, now, deliver, report, stopping)
        return report

    def _due(self, now: datetime, platforms: set[str]) -> tuple[list[tuple[ChannelSettings, date]],
                                                                list[tuple[ChannelSettings, date]]]:
        due: list[tuple[ChannelSettings, date]] = []
        missed: list[tuple[ChannelSettings, date]] = []
        for channel in self.channels.scheduled():
            if channel.ref.platform not in platforms or channel.schedule is None:
                continue
            day = channel.schedule.due_date(now, self.grace)
            if day is not None and not channel.paused_on(day):
                due.append((channel, day))
            elif day is None:
                late = channel.schedule.missed_date(now, self.grace)
                if late is not None and not channel.paused_on(late):
                    missed.append((channel, late))
        return due, missed

    def _skip(self, missed: list[tuple[ChannelSettings, date]], now: datetime, report: DailyReport) -> None:
        """Record (once) the days whose post time passed beyond the grace unposted."""
        for start in range(0, len(missed), BATCH):  # empty list: no statement at all
            chunk = missed[start : start + BATCH]
            rows = [_claim_row(c.id, d, "skipped", now) for c, d in chunk]
            with self.db.session() as session:
                inserted = set(session.execute(_insert_claims(session, rows)).scalars())
            for channel, day in chunk:
                if channel.id in inserted:
                    log.warning(
                        "skipped the %s post of %s: its time passed more than %s ago",
                        day, channel.ref.key(), self.grace,
                    )
                    report.skipped.append((channel.ref, day))

    def _claim(self, due: list[tuple[ChannelSettings, date]], now: datetime) -> list[_Job]:
        by_id = {c.id: (c, d) for c, d in due}
        if not due:
            return []
        with self.db.session() as session:
            claims = [_claim_row(c.id, d, "claimed", now) for c, d in due]
            won = set(session.execute(_insert_claims(session, claims)).scalars())
            retried = self._retake(session, [(c.id, d) for c, d in due if c.id not in won], now)
            rows = session.execute(
                select(Claim.id, Claim.channel_id).where(
                    Claim.channel_id.in_(won | retried), tuple_(Claim.channel_id, Claim.local_date).in_(
                        [(c.id, d) for c, d in due]
                    )
                )
            ).all()
        return [_Job(by_id[channel_id][0], by_id[channel_id][1], claim_id) for claim_id, channel_id in rows]

    def _retake(self, session: Session, keys: list[tuple[int, date]], now: datetime) -> set[int]:
        """Take over claims whose delivery failed (once their back-off has passed), were
        released by a stopping process, or whose process died before sending."""
        if not keys:
            return set()
        candidates = session.execute(
            select(Claim.id, Claim.state, Claim.attempts, Claim.claimed_at).where(
                tuple_(Claim.channel_id, Claim.local_date).in_(keys),
                or_(
                    Claim.state.in_(("failed", "released")),
                    and_(Claim.state == "claimed", Claim.claimed_at < now - CLAIM_LEASE),
                ),
            )
        ).all()
        ready = [c.id for c in candidates
                 if c.state != "failed" or now - as_utc(c.claimed_at) >= retry_after(c.attempts)]
        if not ready:
            return set()
        result = session.execute(
            update(Claim)
            .where(Claim.id.in_(ready), Claim.state.in_(("failed", "released", "claimed")))
            .values(state="claimed", attempts=Claim.attempts + 1, claimed_at=now, updated_at=utcnow())
            .returning(Claim.channel_id)
        )
        return set(result.scalars())

    def _run(
        self, jobs: list[_Job], now: datetime, deliver: Deliver, report: DailyReport, stopping: Callable[[], bool]
    ) -> None:
        if not jobs:
            return
        index = self.search.current()
        self._reserve_batch(index, jobs, now)
        papers = self.library.get_many(j.pick.paper_id for j in jobs if j.pick)
        # The outcome of the last delivery, written in the same transaction that marks
        # the next post `sending`: one commit per post instead of two.
        done: _Outcome | None = None
        for position, job in enumerate(jobs):
            if stopping():
                self._record(done, None)
                self._release(jobs[position:])
                report.released += len(jobs) - position
                log.info("stopping: %d due posts left for the next tick", len(jobs) - position)
                return
            if job.pick is None:
                reply = nothing_left_reply()
            else:
                reply = self.replies.post(job.channel, papers[job.pick.paper_id], job.pick, job.day, job.post_id)
                job.reason = reply.cards[0].reason
            self._record(done, job.claim_id)
            done = self._deliver(job, reply, deliver, now, report)
        self._record(done, None)

    def _deliver(self, job: _Job, reply: Reply, deliver: Deliver, now: datetime, report: DailyReport) -> _Outcome:
        try:
            ref = deliver(job.channel.ref, reply)
        except Exception as problem:  # any delivery failure is retried later
            permanent = isinstance(problem, DeliveryRefused) and problem.permanent
            if isinstance(problem, DeliveryRefused | OSError):
                log.warning("posting to %s failed%s: %s", job.channel.ref.key(),
                            " for good today" if permanent else "", problem)
            else:  # a bug in our own code: the traceback is how it gets found
                log.exception("posting to %s failed", job.channel.ref.key())
            report.failed.append((job.channel.ref, str(problem)))
            # A refusal that will not pass ends the day's attempt: retrying it every few
            # minutes only earns the bot invalid-request strikes (Discord bans at 10,000).
            return _Outcome(job, "refused" if permanent else "failed", str(problem), now)
        if job.pick is None:
            report.empty.append(job.channel.ref)
            return _Outcome(job, "empty", None, now)
        report.posted.append((job.channel.ref, job.pick.paper_id))
        log.info("posted paper %d to %s", job.pick.paper_id, job.channel.ref.key())
        return _Outcome(job, "posted", ref, now)

    def _record(self, done: _Outcome | None, sending: int | None) -> None:
        """Write the last delivery's outcome (so its message ref is kept) and mark the
        claim `sending` whose post goes out next: from then on it is never taken over by
        lease, because its post may be out already."""
        if done is None and sending is None:
            return
        with self.db.session() as session:
            if done is not None:
                self._finish(session, done)
            if sending is not None:
                session.execute(
                    update(Claim).where(Claim.id == sending).values(state="sending", updated_at=utcnow())
                )

    def _release(self, jobs: list[_Job]) -> None:
        """Give back claims whose post never started: their reserved papers return to the
        pool, and the next tick (in this process or the next) takes the claims at once."""
        with self.db.session() as session:
            post_ids = [j.post_id for j in jobs if j.post_id is not None]
            if post_ids:
                session.execute(delete(Post).where(Post.id.in_(post_ids), Post.state == "sending"))
            session.execute(
                update(Claim)
                .where(Claim.id.in_([j.claim_id for j in jobs]))
                .values(state="released", post_id=None, updated_at=utcnow())
            )

    def histories(self, channel_ids: list[int]) -> dict[int, tuple[set[int], list[str]]]:
        """Per channel: every paper it has (or is sending), and its latest titles first."""
        out: dict[int, tuple[set[int], list[str]]] = {cid: (set(), []) for cid in channel_ids}
        with self.db.session() as session:
            rows = session.execute(
                select(Post.channel_id, Post.paper_id, Paper.title)
                .join(Paper, Paper.id == Post.paper_id)
                .where(Post.channel_id.in_(channel_ids))
                .order_by(Post.posted_at.desc(), Post.id.desc())
            )
            for channel_id, paper_id, title in rows:
                out[channel_id][0].add(paper_id)
                out[channel_id][1].append(title)
        return out

    def candidates(self, channels: list[ChannelSettings], now: datetime) -> dict[int, list[Candidate]]:
        """What the candidate sources offer these channels, newest first per source."""
        offered: dict[int, list[Candidate]] = {}
        for source in self.sources:
            for channel_id, found in source(channels, now).items():
                offered.setdefault(channel_id, []).extend(found)
        return offered

    def _reserve_batch(self, index: Engine, jobs: list[_Job], now: datetime) -> None:
        """Pick for every job, then write all the posts rows in one statement; the few
        whose paper another process took meanwhile are picked again one by one."""
        history = self.histories([j.channel.id for j in jobs])
        feedback = self.feedback([j.channel.id for j in jobs])
        rankings: Rankings = {}  # channels with the same query share one BM25 ranking per tick
        offered = self.candidates([j.channel for j in jobs], now)
        for job in jobs:
            excluded, titles = history[job.channel.id]
            job.pick = self.picker.choose_from(index, job.channel, offered.get(job.channel.id, []), excluded,
                                               feedback[job.channel.id])
            if job.pick is None:
                job.pick = self.picker.choose(index, job.channel, excluded, titles, rankings, feedback[job.channel.id])
        rows = [
            {
                "channel_id": j.channel.id, "paper_id": j.pick.paper_id, "kind": "daily", "state": "sending",
                "local_date": j.day, "posted_at": now, "reason": "", "matched": list(j.pick.matched),
            }
            for j in jobs
            if j.pick is not None
        ]
        reserved: dict[int, int] = {}
        if rows:
            with self.db.session() as session:
                statement = (
                    upsert_insert(session, Post).values(rows)
                    .on_conflict_do_nothing(index_elements=["channel_id", "paper_id"])
                    .returning(Post.channel_id, Post.id)
                )
                reserved = dict(session.execute(statement).all())
        for job in jobs:
            if job.pick is None:
                continue
            job.post_id = reserved.get(job.channel.id)
            if job.post_id is None:
                excluded, titles = history[job.channel.id]
                job.pick, job.post_id = self._reserve(
                    index, job.channel, excluded | {job.pick.paper_id}, titles, job.day, "daily",
                    feedback[job.channel.id],
                )

    def _reserve(
        self,
        index: Engine,
        channel: ChannelSettings,
        excluded: set[int],
        titles: list[str],
        day: date | None,
        kind: str,
        feedback: Feedback,
    ) -> tuple[Pick | None, int | None]:
        """Pick and write the posts row (state "sending"); a paper another process took
        meanwhile fails the unique constraint and the next best is tried."""
        for _attempt in range(5):
            pick = self.picker.choose(index, channel, excluded, titles, feedback=feedback)
            if pick is None:
                return None, None
            try:
                with self.db.session() as session:
                    post = Post(
                        channel_id=channel.id, paper_id=pick.paper_id, kind=kind, state="sending",
                        local_date=day, matched=list(pick.matched), reason="",
                    )
                    session.add(post)
                    session.flush()
                    return pick, post.id
            except IntegrityError:
                excluded = excluded | {pick.paper_id}
        return None, None

    @staticmethod
    def _finish(session: Session, done: _Outcome) -> None:
        job, state, detail = done.job, done.state, done.detail
        posted = state == "posted"
        if job.post_id is not None and posted:
            session.execute(
                update(Post)
                .where(Post.id == job.post_id)
                .values(state="sent", message_ref=detail, posted_at=done.at, reason=job.reason)
            )
        elif job.post_id is not None:
            session.execute(delete(Post).where(Post.id == job.post_id))
        session.execute(
            update(Claim)
            .where(Claim.id == job.claim_id)
            .values(
                state=state,
                post_id=job.post_id if posted else None,
                error=detail if state in ("failed", "refused") else None,
                updated_at=utcnow(),
            )
        )
        if state == "refused":
            _count_refusal(session, job.channel.id, job.day, detail or "")
        elif (posted or state == "empty") and job.channel.refusals:  # only a channel that had some
            session.execute(
                update(Channel).where(Channel.id == job.channel.id, Channel.refusals > 0)
                .values(refusals=0, refused_on=None)
            )

    # --- manual picks and replies -------------------------------------------------------

    def post_now(self, channel: ChannelSettings, now: datetime) -> Reply:
        """`next`: a pick right away, outside the schedule (the reply is the post)."""
        history = self.histories([channel.id])[channel.id]
        feedback = self.feedback([channel.id])[channel.id]
        index = self.search.current()
        pick, post_id = self._reserve(index, channel, history[0], history[1], None, "manual", feedback)
        if pick is None:
            return nothing_left_reply(library_empty=index.filtered_count(Query("")) == 0)
        paper = self.library.get_many([pick.paper_id])[pick.paper_id]
        reply = self.replies.post(channel, paper, pick, None, post_id)
        with self.db.session() as session:
            session.execute(
                update(Post)
                .where(Post.id == post_id)
                .values(state="sent", posted_at=now, reason=reply.cards[0].reason)
            )
        return reply

    def likely_picks(self, channel: ChannelSettings, now: datetime, count: int) -> list[int]:
        """The papers the paper of the day would be if it were picked at `now`, the likeliest
        first: its pick, then the picks should that one be taken meanwhile. Reads only: for
        work made ahead of the post (a TL;DR); votes or new papers before the post may
        still change it."""
        excluded, titles = self.histories([channel.id])[channel.id]
        feedback = self.feedback([channel.id])[channel.id]
        offered = self.candidates([channel], now).get(channel.id, [])
        index = self.search.current()
        found: list[int] = []
        for _ in range(count):
            pick = (self.picker.choose_from(index, channel, offered, excluded, feedback)
                    or self.picker.choose(index, channel, excluded, titles, feedback=feedback))
            if pick is None:
                break
            found.append(pick.paper_id)
            excluded = excluded | {pick.paper_id}
        return found

    def posted_at(self, channel_id: int, paper_id: int) -> datetime | None:
        """When this paper was posted (or is being sent) in the channel, if it was."""
        with self.db.session() as session:
            return session.scalar(
                select(Post.posted_at).where(Post.channel_id == channel_id, Post.paper_id == paper_id)
            )

    def post_paper(self, channel: ChannelSettings, paper: Paper, now: datetime, reason: str) -> Reply | None:
        """`discuss N`: this paper posted now as a discussion post with vote buttons, like
        `next` but chosen by a member; None when it is in this channel's posts already
        (the unique constraint decides, so two clicks at once make one post)."""
        try:
            with self.db.session() as session:
                post = Post(channel_id=channel.id, paper_id=paper.id, kind="discussion", state="sent",
                            local_date=None, posted_at=now, matched=[], reason=reason)
                session.add(post)
                session.flush()
                post_id = post.id
        except IntegrityError:
            return None
        reply = self.replies.post(channel, paper, Pick(paper.id, (), 0.0, False), None, post_id, "discussion")
        reply.cards[0].reason = reason
        return reply

    def set_message(self, post_id: int, message_ref: str) -> None:
        with self.db.session() as session:
            session.execute(update(Post).where(Post.id == post_id).values(message_ref=message_ref))

    def rerender(self, post_id: int, tally_line: str) -> tuple[str | None, Reply] | None:
        """A sent post as it should look now, with its tally, and the reference of the
        message showing it, so an adapter can update that message after a vote."""
        with self.db.session() as session:
            post = session.get(Post, post_id)
            if post is None or post.state != "sent":
                return None
            paper = session.get_one(Paper, post.paper_id)  # a post goes with its paper (CASCADE)
            channel = ChannelSettings.of(session.get_one(Channel, post.channel_id))
        return post.message_ref, self.replies.rerendered(channel, post, paper, tally_line)

    # --- what was posted ------------------------------------------------------------------

    def history(self, channel_id: int, limit: int) -> list[Post]:
        with self.db.session() as session:
            return list(
                session.scalars(
                    select(Post)
                    .where(Post.channel_id == channel_id, Post.state == "sent")
                    .order_by(Post.posted_at.desc(), Post.id.desc())
                    .limit(limit)
                )
            )

    def posted_between(self, channel_id: int, since: datetime, until: datetime) -> list[Post]:
        """The channel's posts sent in [since, until), oldest first."""
        with self.db.session() as session:
            return list(
                session.scalars(
                    select(Post)
                    .where(Post.channel_id == channel_id, Post.state == "sent", Post.posted_at >= since,
                           Post.posted_at < until)
                    .order_by(Post.posted_at, Post.id)
                )
            )

    def forget_post(self, post_id: int) -> None:
        with self.db.session() as session:
            session.execute(delete(Post).where(Post.id == post_id))


def retry_after(attempts: int) -> timedelta:
    """How long a claim that failed `attempts` times waits before the next try."""
    return min(RETRY_FIRST * (1 << max(attempts - 1, 0)), RETRY_MOST)  # 1, 2, 4 ... times


def _count_refusal(session: Session, channel_id: int, day: date, reason: str) -> None:
    """One more day of permanent refusals in a row; at REFUSED_DAYS_TO_PAUSE the schedule
    pauses itself, and the channel's next command says why and how to resume."""
    row = session.get(Channel, channel_id)
    if row is None or row.refused_on == day:
        return
    consecutive = row.refused_on is not None and (day - row.refused_on).days <= 7 and row.refusals > 0
    row.refusals = row.refusals + 1 if consecutive else 1
    row.refused_on = day
    if row.refusals >= REFUSED_DAYS_TO_PAUSE and row.enabled:
        row.enabled = False
        row.pause_notice = (
            f"paperclub paused this channel's paper of the day: on {row.refusals} posting days in a row "
            f"the platform refused its post ({reason}). Check that the bot is still in this channel "
            "and may post here, then `schedule on` resumes it."
        )
        log.warning("paused the schedule of channel %d after %d days of refused posts", channel_id, row.refusals)


def _claim_row(channel_id: int, day: date, state: str, now: datetime) -> dict[str, object]:
    # claimed_at is the tick's instant, not the wall clock: the lease that lets a later
    # tick take over an abandoned claim is measured in the same (possibly simulated) time.
    return {
        "channel_id": channel_id, "local_date": day, "state": state, "attempts": 1,
        "claimed_at": now, "updated_at": now,
    }


def _insert_claims(session: Session, rows: list[dict[str, object]]) -> ReturningInsert[int]:
    """INSERT ... ON CONFLICT DO NOTHING RETURNING channel_id, in this dialect."""
    return (
        upsert_insert(session, Claim)
        .values(rows)
        .on_conflict_do_nothing(index_elements=["channel_id", "local_date"])
        .returning(Claim.channel_id)
    )

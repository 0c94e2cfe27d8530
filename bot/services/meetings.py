"""Reading sessions: the weekly meeting, the presenter rota, reminders, member notes.

Each meeting is a row unique on (channel, local date), created when its first reminder
is due; its paper (the head of the reading queue) and presenter are assigned then and
kept. Each reminder is claimed with UPDATE ... WHERE <sent_at> IS NULL, so a tick run
twice, or by two processes, sends it once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import Session

from bot.channels.channels import ChannelSettings
from bot.channels.schedule import WEEKDAYS
from bot.messages import counted
from bot.services.models import (
    Meeting,
    MeetingPlan,
    MeetingSkip,
    PaperNote,
    Post,
    Presenter,
    QueueItem,
)
from store import Database
from store.database import as_utc, upsert_insert

DAY_BEFORE = timedelta(hours=24)
HOUR_BEFORE = timedelta(hours=1)
NOTE_CHARS = 2000
SEARCH_WEEKS = 53  # how far ahead the next unskipped meeting is looked for
# Member ids are stored in String(100) columns: a longer "name" is not a member.
MEMBER_CHARS = 100
_MENTION = re.compile(r"^<@!?([\w.-]{1,100})(?:\|[^>]*)?>$|^@?([\w.-]{1,100})$")


def member_id(text: str) -> str | None:
    """A member named as @bob, <@U123>, <@!123> or <@U123|bob> (platform mentions)."""
    match = _MENTION.match(text.strip())
    return (match.group(1) or match.group(2)) if match else None


DEFAULT_LENGTH = 60  # minutes: what reading groups book, and what plans made before lengths had


@dataclass(frozen=True)
class Plan:
    weekday: str
    local_time: time
    zone: str
    enabled: bool
    length: int = DEFAULT_LENGTH  # minutes
    place: str | None = None  # "Room 4.12": shown as text
    link: str | None = None  # the call's http(s) link: shown as text, never fetched

    def describe(self) -> str:
        return f"every {self.weekday.capitalize()} at {self.local_time:%H:%M} {self.zone}"

    def details(self) -> str:
        """How long and where: "for 1 hour 30 minutes, at Room 4.12" (the link apart:
        it goes last in a line, where no punctuation follows it)."""
        return f"for {length_text(self.length)}" + (f", at {self.place}" if self.place else "")

    def start(self, day: date) -> datetime:
        return datetime.combine(day, self.local_time, tzinfo=ZoneInfo(self.zone)).astimezone(timezone.utc)

    def dates_around(self, now: datetime) -> list[date]:
        """Meeting dates from yesterday to a week ahead, local to the plan's zone."""
        today = now.astimezone(ZoneInfo(self.zone)).date()
        days = (today + timedelta(days=n) for n in range(-1, 9))
        return [d for d in days if WEEKDAYS[d.weekday()] == self.weekday]


def length_text(minutes: int) -> str:
    """90 -> "1 hour 30 minutes", 120 -> "2 hours", 45 -> "45 minutes"."""
    hours, rest = divmod(minutes, 60)
    parts = [counted(hours, "hour")] if hours else []
    return " ".join(parts + ([counted(rest, "minute")] if rest or not hours else []))


@dataclass(frozen=True)
class Reminder:
    channel_id: int
    meeting_id: int
    kind: str  # day_before | hour_before
    local_date: date
    starts_at: datetime
    paper_id: int | None
    presenter: str | None


class Meetings:
    def __init__(self, db: Database):
        self.db = db

    # --- the plan -------------------------------------------------------------------

    def plan(self, channel_id: int) -> Plan | None:
        with self.db.session() as session:
            row = session.get(MeetingPlan, channel_id)
            if row is None:
                return None
            return _plan_of(row)

    def zone_of(self, channel: ChannelSettings) -> str:
        """The zone the channel's members read times in: its schedule's, else its
        meeting's, else UTC (a poll's deadline, a new meeting's default zone)."""
        if channel.schedule is not None:
            return channel.schedule.zone
        plan = self.plan(channel.id)
        return plan.zone if plan is not None else "UTC"

    def set_plan(self, channel_id: int, plan: Plan, now: datetime) -> None:
        """The channel's plan becomes `plan`. The meetings that have begun by `now` keep
        the length, place and link they were held with, should this change them."""
        with self.db.session() as session:
            row = session.get(MeetingPlan, channel_id)
            if row is not None and (row.length_minutes, row.place, row.link) != (plan.length, plan.place, plan.link):
                session.execute(
                    update(Meeting).where(Meeting.channel_id == channel_id, Meeting.starts_at <= now,
                                          Meeting.length_minutes.is_(None))
                    .values(length_minutes=row.length_minutes, place=row.place, link=row.link))
            row = row or MeetingPlan(channel_id=channel_id)
            row.weekday, row.local_time = plan.weekday, f"{plan.local_time:%H:%M}"
            row.timezone, row.enabled = plan.zone, plan.enabled
            row.length_minutes, row.place, row.link = plan.length, plan.place, plan.link
            session.add(row)

    def skip(self, channel_id: int, day: date) -> bool:
        with self.db.session() as session:
            inserted = session.execute(
                upsert_insert(session, MeetingSkip).values(channel_id=channel_id, local_date=day)
                .on_conflict_do_nothing(index_elements=["channel_id", "local_date"])
                .returning(MeetingSkip.id)
            ).first()
        return inserted is not None

    def skipped(self, channel_id: int) -> set[date]:
        with self.db.session() as session:
            return set(session.scalars(select(MeetingSkip.local_date).where(MeetingSkip.channel_id == channel_id)))

    def next_meeting(self, channel_id: int, plan: Plan, now: datetime) -> tuple[date, datetime] | None:
        """The first meeting after `now` that is not skipped; skips may run weeks ahead
        (a holiday break), so the search goes on week by week, up to a year."""
        skipped = self.skipped(channel_id)
        first = plan.dates_around(now)[0]
        for week in range(SEARCH_WEEKS):
            day = first + timedelta(weeks=week)
            if day not in skipped and plan.start(day) > now:
                return day, plan.start(day)
        return None

    def upcoming(self, channel_id: int, plan: Plan, now: datetime, count: int) -> list[tuple[date, datetime]]:
        """The next `count` meetings after `now` that are not skipped."""
        found: list[tuple[date, datetime]] = []
        while len(found) < count:
            after = found[-1][1] if found else now
            following = self.next_meeting(channel_id, plan, after)
            if following is None:
                break
            found.append(following)
        return found

    def take_presentation(self, channel_id: int, day: date, start: datetime, user: str) -> str:
        """Make `user` the presenter of the meeting on `day` unless it has one (its row is
        created now if need be, as a reminder would); who presents it afterwards."""
        with self.db.session() as session:
            session.execute(
                upsert_insert(session, Meeting)
                .values(channel_id=channel_id, local_date=day, starts_at=start)
                .on_conflict_do_nothing(index_elements=["channel_id", "local_date"])
            )
            session.execute(
                update(Meeting).where(Meeting.channel_id == channel_id, Meeting.local_date == day,
                                      Meeting.presenter.is_(None))
                .values(presenter=user)
            )
            presenter = session.scalar(select(Meeting.presenter).where(Meeting.channel_id == channel_id,
                                                                       Meeting.local_date == day))
        if presenter is None:  # the INSERT and UPDATE above gave the meeting one
            raise RuntimeError(f"the meeting of channel {channel_id} on {day} has no presenter")
        return presenter

    def presenting(self, channel_id: int, now: datetime) -> dict[str, date]:
        """Per member: the first meeting to come they are down to present."""
        with self.db.session() as session:
            rows = session.execute(
                select(Meeting.presenter, Meeting.local_date)
                .where(Meeting.channel_id == channel_id, Meeting.presenter.is_not(None), Meeting.starts_at > now)
                .order_by(Meeting.starts_at.desc())
            ).all()
        # The earliest wins: it comes last. (The query left out meetings without a presenter.)
        return {user: day for user, day in rows if user is not None}

    def next_presentation(self, channel_id: int, user: str, now: datetime) -> Meeting | None:
        """The first meeting to come that `user` presents."""
        with self.db.session() as session:
            return session.scalar(
                select(Meeting).where(Meeting.channel_id == channel_id, Meeting.presenter == user,
                                      Meeting.starts_at > now)
                .order_by(Meeting.starts_at).limit(1)
            )

    def meeting(self, channel_id: int, day: date) -> Meeting | None:
        with self.db.session() as session:
            return session.scalar(select(Meeting).where(Meeting.channel_id == channel_id, Meeting.local_date == day))

    # --- presenters -------------------------------------------------------------------

    def presenters(self, channel_id: int) -> list[Presenter]:
        with self.db.session() as session:
            return list(session.scalars(
                select(Presenter).where(Presenter.channel_id == channel_id, Presenter.active.is_(True))
                .order_by(Presenter.added_at, Presenter.id)
            ))

    def add_presenters(self, channel_id: int, users: list[str], now: datetime, volunteer: bool = False) -> None:
        with self.db.session() as session:
            for user in users:
                row = session.scalar(
                    select(Presenter).where(Presenter.channel_id == channel_id, Presenter.user_id == user)
                )
                if row is None:
                    row = Presenter(channel_id=channel_id, user_id=user, added_at=now)
                    session.add(row)
                row.active = True
                if volunteer:
                    row.volunteered_at = now

    def remove_presenters(self, channel_id: int, users: list[str]) -> None:
        with self.db.session() as session:
            session.execute(
                update(Presenter).where(Presenter.channel_id == channel_id, Presenter.user_id.in_(users))
                .values(active=False, volunteered_at=None)
            )

    def presentation_counts(self, channel_id: int, before: datetime) -> dict[str, tuple[int, datetime]]:
        """Per member: how many meetings they presented, and the last one's start."""
        with self.db.session() as session:
            return _presented(session, channel_id, Meeting.starts_at < before)

    def swap(self, meeting_id: int, presenter: str) -> None:
        with self.db.session() as session:
            session.execute(update(Meeting).where(Meeting.id == meeting_id).values(presenter=presenter))

    # --- reminders ----------------------------------------------------------------------

    def due_reminders(self, plans: dict[int, Plan], now: datetime, grace: timedelta) -> list[Reminder]:
        """Claim every reminder due at `now` (at most `grace` late) and return them."""
        due: list[Reminder] = []
        for channel_id, plan in plans.items():
            if not plan.enabled:
                continue
            skipped = self.skipped(channel_id)
            for day in plan.dates_around(now):
                start = plan.start(day)
                if day in skipped or not start - DAY_BEFORE <= now < start:
                    continue
                kind = "hour_before" if now >= start - HOUR_BEFORE else "day_before"
                mark = start - (HOUR_BEFORE if kind == "hour_before" else DAY_BEFORE)
                if now - mark > grace:
                    continue
                reminder = self._claim(channel_id, day, start, kind, now)
                if reminder is not None:
                    due.append(reminder)
        return due

    def _claim(self, channel_id: int, day: date, start: datetime, kind: str, now: datetime) -> Reminder | None:
        with self.db.session() as session:
            session.execute(
                upsert_insert(session, Meeting)
                .values(channel_id=channel_id, local_date=day, starts_at=start)
                .on_conflict_do_nothing(index_elements=["channel_id", "local_date"])
            )
            column = Meeting.day_before_sent_at if kind == "day_before" else Meeting.hour_before_sent_at
            meeting_id = session.execute(
                update(Meeting)
                .where(Meeting.channel_id == channel_id, Meeting.local_date == day, column.is_(None))
                .values({column: now})
                .returning(Meeting.id)
            ).scalar()
            if meeting_id is None:
                return None
            meeting = session.get_one(Meeting, meeting_id)
            if meeting.paper_id is None:
                self._assign(session, meeting, now)
            return Reminder(channel_id, meeting.id, kind, day, start, meeting.paper_id, meeting.presenter)

    def release(self, reminder: Reminder) -> None:
        """Un-claim a reminder whose delivery failed, so a later tick sends it."""
        column = "day_before_sent_at" if reminder.kind == "day_before" else "hour_before_sent_at"
        with self.db.session() as session:
            session.execute(update(Meeting).where(Meeting.id == reminder.meeting_id).values({column: None}))

    def _assign(self, session: Session, meeting: Meeting, now: datetime) -> None:
        """The head of the reading queue (not already given to another meeting), and the
        presenter the rota names."""
        meeting.paper_id = _head_of_queue(session, meeting.channel_id, meeting.id)
        # A volunteer may be down to present already (`volunteer` assigns at once).
        if meeting.paper_id is not None and meeting.presenter is None:
            meeting.presenter = self._next_presenter(session, meeting)

    def _next_presenter(self, session: Session, meeting: Meeting) -> str | None:
        rota = list(session.scalars(
            select(Presenter).where(Presenter.channel_id == meeting.channel_id, Presenter.active.is_(True))
            .order_by(Presenter.added_at, Presenter.id)
        ))
        if not rota:
            return None
        volunteered = [(as_utc(p.volunteered_at), p) for p in rota if p.volunteered_at is not None]
        if volunteered:
            _, first = min(volunteered, key=lambda pair: pair[0])  # the first of equals
            first.volunteered_at = None
            return first.user_id
        history = _presented(session, meeting.channel_id, Meeting.id != meeting.id)
        previous = max(history, key=lambda user: history[user][1], default=None)
        candidates = [p for p in rota if p.user_id != previous] or rota
        never = datetime.min.replace(tzinfo=timezone.utc)
        chosen = min(candidates, key=lambda p: (history.get(p.user_id, (0, never))[1],
                                                 history.get(p.user_id, (0, never))[0]))
        return chosen.user_id

    def coming_papers(self, now: datetime, within: timedelta) -> list[tuple[int, int]]:
        """(channel, paper) of each enabled meeting starting in (now, now + within] whose
        day-before reminder has not gone out yet: the paper given to it already, else the
        one that reminder will give it (the head of the reading queue, as things stand).
        For work done ahead of the reminder (a language model's brief for the presenter);
        the queue may still change meanwhile."""
        found = []
        for channel_id, plan in self.plans().items():
            upcoming = self.next_meeting(channel_id, plan, now)
            if upcoming is None or upcoming[1] - now > within:
                continue
            with self.db.session() as session:
                meeting = session.scalar(select(Meeting).where(Meeting.channel_id == channel_id,
                                                               Meeting.local_date == upcoming[0]))
                if meeting is not None and meeting.day_before_sent_at is not None:
                    continue  # its reminder went out: nothing to prepare for it any more
                paper_id = (meeting.paper_id if meeting is not None and meeting.paper_id is not None else
                            _head_of_queue(session, channel_id, meeting.id if meeting is not None else None))
            if paper_id is not None:
                found.append((channel_id, paper_id))
        return found

    def held_between(self, channel_id: int, since: datetime, until: datetime) -> list[Meeting]:
        """The meetings that started in [since, until) with a paper, oldest first."""
        with self.db.session() as session:
            return list(session.scalars(
                select(Meeting).where(Meeting.channel_id == channel_id, Meeting.starts_at >= since,
                                      Meeting.starts_at < until, Meeting.paper_id.is_not(None))
                .order_by(Meeting.starts_at)
            ))

    def past(self, channel_id: int, now: datetime, limit: int) -> list[Meeting]:
        with self.db.session() as session:
            return list(session.scalars(
                select(Meeting).where(Meeting.channel_id == channel_id, Meeting.starts_at <= now)
                .order_by(Meeting.starts_at.desc()).limit(limit)
            ))

    def presenter_of(self, channel_id: int, paper_id: int, now: datetime) -> str | None:
        """Who presented `paper_id` at the latest meeting that has started."""
        with self.db.session() as session:
            return session.scalar(
                select(Meeting.presenter)
                .where(Meeting.channel_id == channel_id, Meeting.paper_id == paper_id, Meeting.starts_at <= now)
                .order_by(Meeting.starts_at.desc()).limit(1)
            )

    def discussion_ref(self, channel_id: int, paper_id: int) -> str | None:
        """The message of this paper's post here, whose thread holds the discussion."""
        with self.db.session() as session:
            return session.scalar(
                select(Post.message_ref).where(Post.channel_id == channel_id, Post.paper_id == paper_id,
                                               Post.state == "sent")
            )

    # --- notes ----------------------------------------------------------------------------

    def add_note(self, channel_id: int, paper_id: int, user_id: str, text: str, now: datetime) -> None:
        with self.db.session() as session:
            session.add(PaperNote(channel_id=channel_id, paper_id=paper_id, user_id=user_id, text=text,
                                  created_at=now))

    def notes(self, channel_id: int, paper_ids: list[int]) -> dict[int, list[PaperNote]]:
        out: dict[int, list[PaperNote]] = {pid: [] for pid in paper_ids}
        with self.db.session() as session:
            for note in session.scalars(
                select(PaperNote).where(PaperNote.channel_id == channel_id, PaperNote.paper_id.in_(paper_ids))
                .order_by(PaperNote.created_at, PaperNote.id)
            ):
                out[note.paper_id].append(note)
        return out

    def plans(self, channel_ids: list[int] | None = None) -> dict[int, Plan]:
        with self.db.session() as session:
            query = select(MeetingPlan).where(MeetingPlan.enabled.is_(True))
            if channel_ids is not None:
                query = query.where(MeetingPlan.channel_id.in_(channel_ids))
            return {row.channel_id: _plan_of(row) for row in session.scalars(query)}


def _plan_of(row: MeetingPlan) -> Plan:
    return Plan(row.weekday, time.fromisoformat(row.local_time), row.timezone, row.enabled,
                row.length_minutes or DEFAULT_LENGTH, row.place, row.link)


def _head_of_queue(session: Session, channel_id: int, meeting_id: int | None) -> int | None:
    """The first paper of the channel's reading queue that no other meeting than
    `meeting_id` was given."""
    taken = select(Meeting.paper_id).where(Meeting.channel_id == channel_id, Meeting.paper_id.is_not(None))
    if meeting_id is not None:
        taken = taken.where(Meeting.id != meeting_id)
    return session.scalar(
        select(QueueItem.paper_id)
        .where(QueueItem.channel_id == channel_id, QueueItem.state == "queued", QueueItem.paper_id.not_in(taken))
        .order_by(QueueItem.added_at, QueueItem.id)
        .limit(1)
    )


def _presented(session: Session, channel_id: int, condition: ColumnElement[bool]) -> dict[str, tuple[int, datetime]]:
    """Per member: (meetings presented, start of the latest) among those matching."""
    rows = session.execute(
        select(Meeting.presenter, func.count(), func.max(Meeting.starts_at))
        .where(Meeting.channel_id == channel_id, Meeting.presenter.is_not(None), condition)
        .group_by(Meeting.presenter)
    ).all()
    # (The query left out meetings without a presenter.)
    return {user: (count, as_utc(last)) for user, count, last in rows if user is not None}



"""The meetings' calendar feed (RFC 5545, written with `icalendar`).

One event per meeting from three months back to twelve weeks ahead. Meetings to come
follow the plan as it is now (a new time, a skip, a swap show on the next read: calendar
apps re-read a subscribed feed, and the feed asks for every hour); meetings that happened
are taken from their rows, as they were held. Each event's UID names the channel and the
local date, so an app keeps one event per meeting however often it re-reads the feed.
An event lasts the plan's length and carries its place (LOCATION) and call link (URL,
and CONFERENCE for apps that read RFC 7986); a meeting held keeps those it was held with
when the plan changes later.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import NotRequired, TypedDict
from zoneinfo import ZoneInfo

from icalendar import Calendar, Event, vDuration
from sqlalchemy import select

from bot.cards.cards import paper_link
from bot.cards.latex import readable
from bot.channels.channels import ChannelSettings
from bot.corpus.library import Library
from bot.memory.record import discussion_url
from bot.services.meetings import DEFAULT_LENGTH, Meetings, Plan
from bot.services.models import Meeting, Post
from store.database import as_utc
from store.models import Paper

BACK = timedelta(days=92)  # three months
AHEAD = timedelta(weeks=12)
PRODUCT = "-//paperclub//meetings//EN"
# VTIMEZONE rules are written for the years the feed can show, not from 1970 on.
RULE_YEARS = 2
REFRESH = timedelta(hours=1)  # how often a subscribed app should re-read the feed


class Where(TypedDict):
    """How long a meeting lasts and where it is: a Slot's last fields, by name."""

    length: timedelta
    place: NotRequired[str | None]
    link: NotRequired[str | None]


@dataclass(frozen=True)
class Slot:
    """One meeting in the feed: its local date, start, paper and presenter."""

    day: date
    start: datetime
    zone: str
    paper_id: int | None
    presenter: str | None
    length: timedelta = timedelta(minutes=DEFAULT_LENGTH)
    place: str | None = None
    link: str | None = None

    @property
    def end(self) -> datetime:
        return self.start + self.length


class CalendarFeed:
    def __init__(self, meetings: Meetings, library: Library):
        self.meetings = meetings
        self.library = library

    def slots(self, channel_id: int, now: datetime) -> list[Slot]:
        plan = self.meetings.plan(channel_id)
        skipped = self.meetings.skipped(channel_id)
        rows = self._rows(channel_id, now - BACK, now + AHEAD)
        zone = plan.zone if plan else "UTC"
        where = _where(plan)
        slots: dict[date, Slot] = {}
        for row in rows:  # held (or about to be): as recorded
            start = as_utc(row.starts_at).astimezone(timezone.utc)
            held: Where = where if row.length_minutes is None else {  # kept when the plan changed after it
                "length": timedelta(minutes=row.length_minutes), "place": row.place, "link": row.link}
            slots[row.local_date] = Slot(row.local_date, start, zone, row.paper_id, row.presenter, **held)
        if plan is not None and plan.enabled:
            planned = _plan_dates(plan, now)
            for day in planned:
                start = plan.start(day)
                if start + where["length"] <= now:
                    continue  # the past comes from the rows
                recorded = slots.get(day)
                slots[day] = Slot(day, start, plan.zone, recorded.paper_id if recorded else None,
                                  recorded.presenter if recorded else None, **where)
            # a moved meeting: a row on a date the plan no longer meets on, still to come
            for day in [d for d, s in slots.items() if s.start > now and d not in planned]:
                del slots[day]
        elif plan is not None:  # switched off: nothing to come
            slots = {d: s for d, s in slots.items() if s.start <= now}
        return [s for d, s in sorted(slots.items()) if d not in skipped]

    def _rows(self, channel_id: int, since: datetime, until: datetime) -> list[Meeting]:
        with self.meetings.db.session() as session:
            return list(session.scalars(select(Meeting).where(
                Meeting.channel_id == channel_id, Meeting.starts_at >= since, Meeting.starts_at <= until)))

    def ics(self, channel: ChannelSettings, name: str, now: datetime) -> bytes:
        slots = self.slots(channel.id, now)
        papers = self.library.get_many(s.paper_id for s in slots if s.paper_id)
        threads = self._threads(channel.id, list(papers))
        calendar = Calendar()
        calendar.add("prodid", PRODUCT)
        calendar.add("version", "2.0")
        calendar.add("calscale", "GREGORIAN")
        calendar.add("x-wr-calname", name)
        # Re-read hourly: RFC 7986's REFRESH-INTERVAL, and the X- name Outlook and Apple read.
        calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
        # An X- name: typed by hand. (icalendar 7.3 leaves vDuration.to_ical unannotated.)
        calendar.add("x-published-ttl", vDuration(REFRESH).to_ical().decode())  # type: ignore[no-untyped-call]
        for slot in slots:
            paper = papers.get(slot.paper_id) if slot.paper_id else None
            thread = threads.get(slot.paper_id) if slot.paper_id is not None else None
            calendar.add_component(_event(channel, slot, paper, thread, now))
        first = (now - BACK).date()
        calendar.add_missing_timezones(first_date=first.replace(month=1, day=1),
                                       last_date=date(first.year + RULE_YEARS + 1, 1, 1))
        feed: bytes = calendar.to_ical()  # (icalendar leaves its return type out)
        return feed

    def _threads(self, channel_id: int, paper_ids: list[int]) -> dict[int, str]:
        with self.meetings.db.session() as session:
            rows = session.execute(select(Post.paper_id, Post.message_ref).where(
                Post.channel_id == channel_id, Post.paper_id.in_(paper_ids), Post.state == "sent")).all()
        return {pid: ref for pid, ref in rows if ref}


def _where(plan: Plan | None) -> Where:
    """The plan's length, place and call link, as every slot of the feed carries them."""
    if plan is None:
        return {"length": timedelta(minutes=DEFAULT_LENGTH)}
    return {"length": timedelta(minutes=plan.length), "place": plan.place, "link": plan.link}


def _plan_dates(plan: Plan, now: datetime) -> list[date]:
    today = now.astimezone(ZoneInfo(plan.zone)).date()
    first = plan.dates_around(now)[0]  # yesterday or later, on the plan's weekday
    days = [first + timedelta(weeks=n) for n in range(AHEAD.days // 7 + 2)]
    return [d for d in days if d - today <= AHEAD]


def _event(channel: ChannelSettings, slot: Slot, paper: Paper | None, thread_ref: str | None, now: datetime) -> Event:
    event = Event()
    event.add("uid", f"paperclub-{channel.ref.platform}-{channel.id}-{slot.day:%Y%m%d}@paperclub")
    event.add("dtstamp", now.astimezone(timezone.utc))
    local = slot.start.astimezone(ZoneInfo(slot.zone))
    event.add("dtstart", local)
    event.add("dtend", local + slot.length)
    title = readable(paper.title) if paper else None
    event.add("summary", f"Reading group: {title}" if title else "Reading group (paper to be chosen)")
    if slot.place or slot.link:  # a call alone is where the meeting is, for apps that show only LOCATION
        event.add("location", slot.place or slot.link)
    lines = []
    if slot.link:
        lines.append(f"Call link: {slot.link}")
        event.add("url", slot.link)  # one URL an event: the call's, else the paper's
        event.add("conference", slot.link, parameters={"VALUE": "URI", "FEATURE": "AUDIO,VIDEO",
                                                       "LABEL": "Call link"})
    if slot.place:
        lines.append(f"Place: {slot.place}")
    if paper is not None:
        lines.append(f"Paper: {title}")
        link = paper_link(paper)
        if link:
            lines.append(f"Link: {link}")
            if not slot.link:
                event.add("url", link)
    lines.append(f"Presenter: @{slot.presenter}" if slot.presenter else "Presenter: not chosen yet")
    discussion = discussion_url(channel.ref, thread_ref)
    if discussion:
        lines.append(f"Discussion: {discussion}")
    event.add("description", "\n".join(lines))
    return event

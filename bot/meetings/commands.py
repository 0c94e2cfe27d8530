"""Reading-session commands: session, presenters, volunteer, swap, notes, sessions;
and the reminders the scheduler's tick sends."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.cards.latex import readable
from bot.cards.links import web_link
from bot.channels.channels import Channels, ChannelSettings
from bot.channels.schedule import (
    WEEKDAYS,
    ScheduleError,
    parse_date,
    parse_days,
    parse_zone,
    zone_names,
)
from bot.channels.times import TIME_HOW, clock_time, hours_and_minutes, hours_only, joined_halves
from bot.corpus.library import Library
from bot.feature import DigestSection, Feature, Features, Kit
from bot.grammar import Command, Param, UsageError, always, number, require_manager, with_arguments
from bot.messages import Deliver, Incoming, PaperCard, Reply, counted
from bot.ops.settings import DEFAULT_GRACE
from bot.services.meetings import (
    MEMBER_CHARS,
    NOTE_CHARS,
    Meetings,
    Plan,
    Reminder,
    member_id,
)
from bot.services.models import MEETING_LINK_CHARS, MEETING_PLACE_CHARS, Meeting, Presenter
from store.database import as_utc
from store.models import Paper

log = logging.getLogger(__name__)

SESSIONS_DEFAULT = 5
SESSIONS_MAX = 50
VOLUNTEER_AHEAD = 2  # meetings a volunteer may be assigned to: the next, or the one after


class MeetingsFeature(Feature):
    """The weekly meeting, its presenter rota and reminders, and members' notes."""

    name = "meetings"

    def __init__(self, channels: Channels, meetings: Meetings, library: Library, clock: Callable[[], datetime],
                 calendar_link: Callable[[Incoming, list[str]], Reply] | None = None,
                 grace: timedelta = DEFAULT_GRACE, features: Features | None = None):
        self.channels = channels
        self.grace = grace  # how late a reminder may still go out (PAPERCLUB_CATCHUP)
        self.meetings = meetings
        self.library = library
        self.clock = clock
        # `session calendar [reset]`: the feed's secret link (the links service), for managers.
        self.calendar_link = calendar_link
        # Every feature: the day-before reminder carries their lines about its paper (a
        # brief for the presenter), and one of them may condense a paper's notes.
        self.features = features if features is not None else Features()

    @classmethod
    def build(cls, kit: Kit) -> MeetingsFeature:
        return cls(kit.channels, kit.meetings, kit.library, kit.clock, calendar_link=kit.links.calendar,
                   grace=kit.grace, features=kit.features)

    def tick(self, now: datetime, deliver: Deliver, platforms: tuple[str, ...],
             stopping: Callable[[], bool]) -> dict[str, int]:
        return {"reminders": self.send_reminders(now, deliver, platforms, self.grace)}

    def settings(self, channel: ChannelSettings) -> list[str]:
        return self.describe_all(channel.id)

    def on_show(self, incoming: Incoming, paper_id: int, card: PaperCard) -> None:
        card.discussion = self.notes_for(incoming, paper_id)

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """The meetings held this week (news), and the next one with its paper and
        presenter (which only restates what stands)."""
        plan = self.meetings.plan(channel.id)
        held = self.meetings.held_between(channel.id, since, until)
        upcoming = self.meetings.next_meeting(channel.id, plan, until) if plan and plan.enabled else None
        if not held and upcoming is None:
            return None
        zone_name = plan.zone if plan else "UTC"
        zone = ZoneInfo(zone_name)
        meeting = self.meetings.meeting(channel.id, upcoming[0]) if upcoming else None
        papers = self.library.get_many([m.paper_id for m in [*held, meeting] if m and m.paper_id])
        lines = [f"Met {as_utc(m.starts_at).astimezone(zone):%a %d %b}: {_meeting_paper(m, papers)}" for m in held]
        if upcoming is not None:
            when = f"{upcoming[1].astimezone(zone):%a %d %b %H:%M} {zone_name}"
            lines.append(f"Next: {when}: " + (_meeting_paper(meeting, papers) if meeting and meeting.paper_id else
                                             "the paper and presenter are chosen the day before (the head of "
                                             "the reading queue, the next on the rota)."))
        return DigestSection("Meetings", lines, papers=tuple(papers), news=bool(held))

    def commands(self) -> list[Command]:
        return [
            Command("session", "session · session every DAY TIME [ZONE] [LENGTH] [at PLACE and/or LINK] (one part "
                    "alone changes just that part; TIME 17:00, 5pm or 17h) · session at - · session off · session on · "
                    "session skip YYYY-MM-DD · session calendar [reset]",
                    "The group's weekly meeting: when, how long, where and its call link (managers set it, switch "
                    "it off or on, skip a date, or get its calendar feed's link).",
                    "session every thu at 5pm Europe/Berlin 90m at https://meet.example/abc", self.session,
                    with_arguments,
                    brief="The group's weekly meeting (managers set it, switch it off or on, or skip a date).",
                    params=(Param("day", "the weekday the group meets (left out: kept)", choices=WEEKDAYS),
                            Param("time", "17:00, 5pm, 5:30pm or 17h (left out: kept)"),
                            Param("zone", "an IANA time zone (left out: kept, at first the channel's)",
                                  suggest=zone_names()),
                            Param("length", "how long, 5m to 8h: 90m, 1h30m, 2h (left out: kept, at first 1h)"),
                            Param("at", "a place, a call link (http/https) or both; - clears them",
                                  high=MEETING_PLACE_CHARS + MEETING_LINK_CHARS),
                            Param("switch", "off pauses the meeting (no reminders), on brings it back",
                                  choices=SWITCHES),
                            Param("skip", "no meeting on this date, YYYY-MM-DD")),
                    written="{switch} [skip {skip}] [every {day} {time} {zone}] {length} [at {at}]"),
            Command("presenters", "presenters · presenters add @member... · presenters remove @member...",
                    "The presenter rota (managers change it).", "presenters add @ana @ben", self.presenters,
                    with_arguments,
                    params=(Param("action", "add or remove (leave empty to see the rota)", choices=("add", "remove")),
                            Param("member", "a member", kind="member"),
                            Param("more", "more members, as @mentions"))),
            Command("volunteer", "volunteer", "Offer to present at the next meeting.", "volunteer", self.volunteer),
            Command("swap", "swap @member", "Hand your next presentation over to another member.", "swap @ben",
                    self.swap, always,  # the presenter may hand over; anyone else must manage
                    params=(Param("member", "who presents instead", kind="member", required=True),)),
            self._notes_command(),
            Command("sessions", "sessions [N]", "Past meetings: paper, presenter, notes (default 5).", "sessions 10",
                    self.sessions, brief="Past meetings: paper, presenter, notes.",
                    params=(Param("count", f"how many (default {SESSIONS_DEFAULT})", kind="number", low=1,
                                  high=SESSIONS_MAX),)),
        ]

    # --- the meeting ---------------------------------------------------------------------

    def session(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        channel = self.channels.get(incoming.channel)
        if not words:
            return Reply(text=self._describe(channel.id))
        action = words[0].lower()
        if action in SWITCHES and len(words) == 1:
            return self._switch(incoming, channel.id, on=action == "on")
        if action == "skip" and len(words) == 2:
            day = self._skippable(channel.id, words[1])
            require_manager(incoming, "skip a meeting")
            new = self.meetings.skip(channel.id, day)
            said = "Skipped" if new else "Already skipped:"
            return Reply(text=f"{said} the meeting on {day:%A %d %B %Y}. {self._describe(channel.id)}")
        if action == "calendar" and self.calendar_link is not None and len(words) <= 2:
            require_manager(incoming, "get the meetings' calendar link")
            return self.calendar_link(incoming, words[1:])
        if action in SWITCHES:
            raise UsageError(f"`session {action}` takes nothing after it.")
        if action == "skip":
            raise UsageError("Give one date to skip: `session skip YYYY-MM-DD`.")
        if action == "calendar":
            raise UsageError("Say `session calendar` for the feed's link, or `session calendar reset` for a new one"
                             + ("." if self.calendar_link is not None else " (this paperclub has no calendar feed)."))
        plan, read_as = _parse_plan(words, self.meetings.plan(channel.id), self.meetings.zone_of(channel))
        require_manager(incoming, "set the meeting")
        self.meetings.set_plan(channel.id, plan, self.clock())
        if not read_as:
            return Reply(text=f"Done. {self._describe(channel.id)}")
        said = ", ".join(read_as) + ("" if read_as[-1].startswith("call link") else ".")
        return Reply(text=f"Done. Read as: {said}\n{self._describe(channel.id)}")

    def _switch(self, incoming: Incoming, channel_id: int, on: bool) -> Reply:
        """`session off` pauses the meeting: no reminders, no presenter or paper assigned,
        nothing in the calendar feed; `session on` brings it back as it was."""
        current = self.meetings.plan(channel_id)
        if current is None:
            raise UsageError(f"There is no meeting to switch {'on' if on else 'off'} yet: "
                             "`session every DAY TIME [ZONE]` sets one.")
        require_manager(incoming, f"switch the meeting {'on' if on else 'off'}")
        if current.enabled != on:
            self.meetings.set_plan(channel_id, replace(current, enabled=on), self.clock())
        return Reply(text=f"Done. {self._describe(channel_id)}")

    def _skippable(self, channel_id: int, text: str) -> date:
        try:
            day = parse_date(text)
        except ScheduleError as problem:
            raise UsageError(str(problem)) from None
        plan = self.meetings.plan(channel_id)
        if plan is None:
            raise UsageError("There is no meeting yet: `session every DAY TIME [ZONE]` sets one.")
        if day.strftime("%a").lower() != plan.weekday:
            raise UsageError(f"{day:%Y-%m-%d} is a {day:%A}; the group meets {plan.describe()}.")
        if plan.start(day) <= self.clock():
            raise UsageError(f"The meeting on {day:%Y-%m-%d} has already begun or passed: skip one to come.")
        return day

    def describe_all(self, channel_id: int) -> list[str]:
        """The meeting, its skipped dates to come, and the presenter rota, as lines."""
        lines = [f"Meeting: {self._describe(channel_id)}"]
        today = self.clock().date()
        skips = sorted(d for d in self.meetings.skipped(channel_id) if d >= today)
        if skips:
            lines.append("Skipped: " + ", ".join(f"{d:%a %d %b}" for d in skips))
        rota = self.meetings.presenters(channel_id)
        lines.append("Presenters: " + (", ".join(f"@{p.user_id}" for p in rota) or "none yet"))
        return lines

    def _describe(self, channel_id: int) -> str:
        plan = self.meetings.plan(channel_id)
        if plan is None:
            return "No meeting yet. Set one: `session every tue 17:00 Europe/Berlin`."
        if not plan.enabled:
            return f"The meeting ({plan.describe()}) is off: `session on` brings it back."
        upcoming = self.meetings.next_meeting(channel_id, plan, self.clock())
        text = f"The group meets {plan.describe()} {plan.details()}."
        if upcoming is None:
            return text + _call(plan)
        day, start = upcoming
        text += f" Next: {start.astimezone(ZoneInfo(plan.zone)):%A %d %B %H:%M}."
        meeting = self.meetings.meeting(channel_id, day)
        if meeting is not None and meeting.paper_id is not None:
            title = readable(self.library.get_many([meeting.paper_id])[meeting.paper_id].title)
            text += f" Paper: “{title}” [{meeting.paper_id}], presented by @{meeting.presenter or 'nobody yet'}."
        return text + _call(plan)

    def _notes_command(self) -> Command:
        if self._summary() is None:
            return Command("notes", "notes ID TEXT", "Add a note to a paper in this channel (`show ID` lists them).",
                           "notes 42 the ablation in section 4 is the key result", self.notes,
                           brief="Add a note to a paper in this channel (show lists them).",
                           params=(Param("paper", "the paper's ID", required=True),
                                   Param("text", "the note", required=True, low=1, high=NOTE_CHARS)))
        return Command("notes", "notes ID TEXT · notes ID summary",
                       "Add a note to a paper in this channel (`show ID` lists them), or have a language model "
                       "sum up its notes and votes here in a note.",
                       "notes 42 the ablation in section 4 is the key result", self.notes,
                       brief="Add a note to a paper here (show lists them), or `summary` to sum up its notes.",
                       later_when=_asks_summary,
                       params=(Param("paper", "the paper's ID", required=True),
                               Param("text", "the note, or `summary`: a language model sums up the notes and "
                                     "votes", required=True, low=1, high=NOTE_CHARS)))

    def _summary(self) -> Callable[[Incoming, int], Reply] | None:
        """What condenses a paper's notes (`notes ID summary`), if a feature can."""
        return self.features.first(lambda feature: feature.notes_summary())

    # --- presenters ----------------------------------------------------------------------

    def presenters(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        channel = self.channels.get(incoming.channel)
        if not words:
            rota = self.meetings.presenters(channel.id)
            if not rota:
                return Reply(text="No presenters yet: `presenters add @member...`.")
            counts = self.meetings.presentation_counts(channel.id, self.clock())
            presenting = self.meetings.presenting(channel.id, self.clock())
            lines = [f"@{p.user_id}: presented {counted(counts.get(p.user_id, (0, None))[0], 'time')}"
                     + _coming(p, presenting.get(p.user_id)) for p in rota]
            return Reply(text="Presenter rota:\n" + "\n".join(lines))
        action, names = words[0].lower(), words[1:]
        if action not in ("add", "remove") or not names:
            raise UsageError("Say `presenters add @member...` or `presenters remove @member...`.")
        users = _members(names)
        if action == "remove":
            on_rota = {p.user_id for p in self.meetings.presenters(channel.id)}
            strangers = [u for u in users if u not in on_rota]
            if strangers:
                raise UsageError(f"Not in the rota: {', '.join('@' + u for u in strangers)}. "
                                 "`presenters` lists it.")
        require_manager(incoming, "change the presenter rota")
        if action == "add":
            self.meetings.add_presenters(channel.id, users, self.clock())
        else:
            self.meetings.remove_presenters(channel.id, users)
        return self.presenters(incoming, "")

    def volunteer(self, incoming: Incoming, args: str) -> Reply:
        """The volunteer presents the next meeting that has no presenter yet, assigned now
        (so `swap` and `presenters` agree with this reply at once)."""
        if args.strip():
            raise UsageError("`volunteer` takes no arguments.")
        channel = self.channels.get(incoming.channel)
        plan = self.meetings.plan(channel.id)
        if plan is None or not plan.enabled:
            return Reply(text="There is no meeting to present at: a manager sets one with "
                         "`session every DAY TIME [ZONE]`.", ephemeral=True, ok=False)
        user, now = incoming.user.user_id, self.clock()
        self.meetings.add_presenters(channel.id, [user], now)
        taken: list[tuple[str, str]] = []  # (presenter, date) of the meetings before
        for day, start in self.meetings.upcoming(channel.id, plan, now, VOLUNTEER_AHEAD):
            presenter = self.meetings.take_presentation(channel.id, day, start, user)
            when = f"{day:%A %d %B}"
            if presenter == user:
                return Reply(text=f"Thanks @{user}: " + _your_turn(when, taken))
            taken.append((presenter, when))
        self.meetings.add_presenters(channel.id, [user], now, volunteer=True)
        return Reply(text=f"Thanks @{user}: the next {VOLUNTEER_AHEAD} meetings have presenters; "
                          "you present at the first one after them that has a paper.")

    def swap(self, incoming: Incoming, args: str) -> Reply:
        """Hand over the asker's next presentation; a manager who presents none hands over
        the next meeting's."""
        words = args.split()
        if len(words) != 1:
            raise UsageError("Name one member: `swap @member`.")
        other = _members(words)[0]
        channel = self.channels.get(incoming.channel)
        now = self.clock()
        meeting = self.meetings.next_presentation(channel.id, incoming.user.user_id, now)
        if meeting is None:
            plan = self.meetings.plan(channel.id)
            upcoming = self.meetings.next_meeting(channel.id, plan, now) if plan else None
            meeting = self.meetings.meeting(channel.id, upcoming[0]) if upcoming else None
        if meeting is None or meeting.presenter is None:
            return Reply(text="No presenter is assigned yet for the next meeting: `volunteer` takes it, or the "
                              "rota assigns one a day before.", ephemeral=True, ok=False)
        if meeting.presenter != incoming.user.user_id and not incoming.user.is_manager:
            return Reply(text=f"Only @{meeting.presenter} (or a manager) can hand this presentation over.",
                         ephemeral=True, ok=False)
        self.meetings.swap(meeting.id, other)
        return Reply(text=f"@{other} now presents on {meeting.local_date:%A %d %B}.")

    # --- notes and past sessions -----------------------------------------------------------

    def notes(self, incoming: Incoming, args: str) -> Reply:
        ref, _, text = args.strip().partition(" ")
        text = " ".join(text.split())
        if not ref or not text:
            raise UsageError("Give a paper ID and the note.")
        if len(text) > NOTE_CHARS:
            raise UsageError(f"A note is at most {NOTE_CHARS} characters.")
        paper = self.library.find(ref)
        if paper is None:
            raise UsageError(f"No paper with ID `{ref}`.")
        if _asks_summary(args):
            summary = self._summary()
            if summary is None:
                raise UsageError("`notes ID summary` needs a language model, and this paperclub has none "
                                 "configured (see Briefs in the manual); `notes ID TEXT` adds a note of your own.")
            return summary(incoming, paper.id)
        channel = self.channels.get(incoming.channel)
        self.meetings.add_note(channel.id, paper.id, incoming.user.user_id, text, self.clock())
        return Reply(text=f"Noted on “{readable(paper.title)}” [{paper.id}].")

    def notes_for(self, incoming: Incoming, paper_id: int) -> list[str]:
        """The channel's notes on a paper as lines, oldest first (for `show`)."""
        channel = self.channels.get(incoming.channel)
        return [f"@{n.user_id}, {n.created_at:%Y-%m-%d}: {n.text}"
                for n in self.meetings.notes(channel.id, [paper_id])[paper_id]]

    def sessions(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        count = number(words[0], 1, SESSIONS_MAX) if len(words) == 1 else SESSIONS_DEFAULT
        if len(words) > 1 or count is None:
            raise UsageError(f"N is a number from 1 to {SESSIONS_MAX}.")
        channel = self.channels.get(incoming.channel)
        past = self.meetings.past(channel.id, self.clock(), count)
        if not past:
            return Reply(text="No meetings yet.")
        papers = self.library.get_many(m.paper_id for m in past if m.paper_id)
        notes = self.meetings.notes(channel.id, [m.paper_id for m in past if m.paper_id])
        lines = []
        for m in past:
            paper = papers.get(m.paper_id) if m.paper_id is not None else None
            what = f"“{readable(paper.title)}” [{paper.id}]" if paper else "no paper"
            noted = counted(len(notes.get(m.paper_id, [])) if m.paper_id is not None else 0, "note")
            lines.append(f"{m.local_date:%Y-%m-%d}: {what}, presented by @{m.presenter or 'nobody'}, {noted}")
        return Reply(text="Past meetings, newest first:\n" + "\n".join(lines))

    # --- reminders -----------------------------------------------------------------------

    def send_reminders(self, now: datetime, deliver: Deliver, platforms: Iterable[str], grace: timedelta) -> int:
        platforms = set(platforms)
        plans = self.meetings.plans()
        channels = self.channels.by_ids(list(plans))
        plans = {cid: plan for cid, plan in plans.items() if cid in channels
                 and channels[cid].ref.platform in platforms}
        sent = 0
        for reminder in self.meetings.due_reminders(plans, now, grace):
            channel = channels[reminder.channel_id].ref
            try:
                deliver(channel, self.reminder_reply(reminder, plans[reminder.channel_id],
                                                     channels[reminder.channel_id]))
            except Exception:  # released for a later tick; other channels go on
                log.exception("sending the %s reminder to %s failed", reminder.kind, channel.key())
                self.meetings.release(reminder)
                continue
            sent += 1
        return sent

    def reminder_reply(self, reminder: Reminder, plan: Plan, channel: ChannelSettings) -> Reply:
        when = f"{reminder.starts_at.astimezone(ZoneInfo(plan.zone)):%A %d %B %H:%M} {plan.zone}, {plan.details()}"
        lead = "Tomorrow" if reminder.kind == "day_before" else "In one hour"
        if reminder.paper_id is None:
            return Reply(text=f"{lead}: reading group ({when}). The reading queue is empty; "
                              "start a `poll` to choose the paper." + _call(plan))
        title = readable(self.library.get_many([reminder.paper_id])[reminder.paper_id].title)
        presenter = f"@{reminder.presenter}" if reminder.presenter else "nobody yet (`volunteer`!)"
        text = f"{lead}: reading group ({when}): “{title}” [{reminder.paper_id}], presented by {presenter}."
        text += _call(plan)
        if reminder.kind == "day_before":  # what other features made ahead for it (a brief for the presenter)
            text += "".join(f"\n{line}" for line in self.features.lines_about(channel, reminder.paper_id,
                                                                               "reminder"))
        discussion = self.meetings.discussion_ref(reminder.channel_id, reminder.paper_id)
        return Reply(text=text, link_to=discussion)


SESSION_HOW = "Say `session every DAY TIME [ZONE]`, e.g. `session every tue 17:00 Europe/Berlin` or `every wed at 5pm`"
SWITCHES = ("on", "off")
LENGTHS = (5, 8 * 60)  # minutes: a meeting is at least 5 minutes and at most 8 hours
_LENGTH = re.compile(r"(?:(\d{1,2})h)?(?:(\d{1,3})m(?:in)?)?", re.IGNORECASE)
CLEAR = "-"  # `session at -`: no place and no link
# A word meant as a link: any scheme with //, or one of those that run or open something.
_LINKISH = re.compile(r"[a-z][a-z0-9+.-]*://|(?:javascript|data|vbscript|file|blob):", re.IGNORECASE)


@dataclass
class _Line:
    """What a `session` line named: its parts (day, time, zone, length), and the words
    after `at`/`in` that are not a time (a place, a call link, or `-`); None: not given."""

    parts: dict[str, object] = field(default_factory=dict)
    where: list[str] | None = None
    said: dict[str, str] = field(default_factory=dict)  # each part's word, as typed

    def put(self, kind: str, value: object, word: str) -> None:
        if kind in self.parts:
            raise ScheduleError(f"`{word}`: give one {kind} only")
        self.parts[kind], self.said[kind] = value, word


def _read_line(words: list[str]) -> _Line:
    """A day, a time, a zone and a length, each optional and in any order (`every` and
    `for` may stand before them), then `at` or `in` and a place, a call link or both.
    `at`/`in` before a time (`at 5pm`, `at 17:30`) sets the time, `in` before a zone the
    zone: only what follows them that is not a time is the place."""
    line = _Line()
    words = joined_halves(words)
    i = 0
    while i < len(words):
        word, low = words[i], words[i].lower()
        after = words[i + 1] if i + 1 < len(words) else None
        if low in ("at", "in") and after is not None and (at := clock_time(after)) is not None:
            line.put("time", at, after)
            i += 2
        elif line.where is not None:
            line.where.append(word)
            i += 1
        elif low == "in" and after is not None and ("/" in after or after.upper() == "UTC"):
            line.put("zone", parse_zone(after), after)
            i += 2
        elif low in ("at", "in"):
            line.where = []
            i += 1
        else:
            if low not in ("every", "for"):
                kind, value = _plan_part(word)
                line.put(kind, value, word)
            i += 1
    return line


def _parse_plan(words: list[str], current: Plan | None, channel_zone: str) -> tuple[Plan, list[str]]:
    """The plan the line makes of the current one, and what the line was read as (for
    the reply, so a misreading shows): the parts named replace the current plan's, so
    `session every wed` keeps the time, zone, length and place. A first plan takes the
    channel's zone unless the line names one. Setting any part switches the meeting on."""
    try:
        line = _read_line(words)
    except ScheduleError as problem:
        raise UsageError(str(problem)) from None
    where = line.where
    if where is not None and not where:
        raise UsageError("Say where after `at`: a place (Room 4.12), a call link (https://...), both, or - for "
                         "neither; or a time, e.g. `at 5pm`.")
    if where is not None and len(where) == 1 and re.fullmatch(r"[0-9]{1,2}", where[0]):
        raise UsageError(f"`at {where[0]}`: a time or a place? For the time {TIME_HOW}; for a place name it, "
                         f"e.g. `at Room {where[0]}`.")
    if not line.parts and where is None:
        raise UsageError(f"{SESSION_HOW}, or name one part to change it.")
    if current is None and not {"day", "time"} <= line.parts.keys():
        raise UsageError(f"There is no meeting yet: give its day and time. {SESSION_HOW}.")
    base = current or Plan("mon", time(0, 0), channel_zone, True)
    place, link = _where(where, base) if where is not None else (base.place, base.link)
    parts = line.parts
    day, at, zone, length = (parts.get("day", base.weekday), parts.get("time", base.local_time),
                             parts.get("zone", base.zone), parts.get("length", base.length))
    # the line holds values as objects; _plan_part gave each kind its type
    assert isinstance(day, str) and isinstance(at, time) and isinstance(zone, str) and isinstance(length, int)
    plan = Plan(day, at, zone, True, length, place, link)
    return plan, _read_as(line, plan)


def _read_as(line: _Line, plan: Plan) -> list[str]:
    """The time, place and call link the line set, as read: `time 17:00 (from `5pm`)`,
    `place “Room 4”`; the link last (no punctuation may follow it). A time typed as
    HH:MM, the day, zone and length show plainly in the description that follows."""
    said = []
    typed = line.said.get("time", "")
    if typed and not re.fullmatch(r"[0-9]{1,2}:[0-9]{2}", typed):  # 5pm, 17h, noon: read how?
        said.append(f"time {plan.local_time:%H:%M} (from `{typed}`)")
    if line.where == [CLEAR]:
        said.append("no place and no call link")
    elif line.where is not None:
        if any(not _LINKISH.match(w) for w in line.where):
            said.append(f"place “{plan.place}”")
        if any(_LINKISH.match(w) for w in line.where):
            said.append(f"call link {plan.link}")
    return said


def _plan_part(word: str) -> tuple[str, object]:
    """One word of a session line as a day, a time, a zone or a length. `2h` up to 8h is
    a length (as it always was); `17h` a time; `1h30` could be either, so it is refused."""
    hours = hours_only(word)
    if hours is not None and hours <= LENGTHS[1] // 60:
        return "length", parse_length(word)
    hours = hours_and_minutes(word)
    if hours is not None and hours <= LENGTHS[1] // 60:
        raise ScheduleError(f"`{word}` is not a time or a length on its own: for the time write "
                            f"{word.lower().replace('h', ':').zfill(5)} or `at {word}`, for the length "
                            f"{word.lower()}m")
    at = clock_time(word)
    if at is not None:
        return "time", at
    if word[:1].isdigit() and word[-1:].lower() in ("h", "m", "n"):  # 90m, 90min, 10h
        return "length", parse_length(word)
    if word[:1].isdigit():
        raise ScheduleError(f"`{word}` is not a time: {TIME_HOW}")
    if "/" not in word and word.upper() != "UTC":
        low = word.lower()
        day = _day(low) or _day(low.removesuffix("s"))  # wed, Wednesday, wednesdays
        if day is None:
            raise ScheduleError(f"`{word}` is not a weekday (mon to sun), a time ({TIME_HOW}), a time zone "
                                "(Europe/Berlin) or a length (90m)")
        return "day", day
    return "zone", parse_zone(word)


def _day(word: str) -> str | None:
    try:
        days = parse_days(word)
    except ScheduleError:
        return None
    if len(days) != 1:
        raise ScheduleError("the group meets on one day a week: name one day, e.g. tue")
    return days[0]


def _meeting_paper(meeting: Meeting, papers: dict[int, Paper]) -> str:
    paper = papers.get(meeting.paper_id) if meeting.paper_id is not None else None
    title = f"[{paper.id}] {readable(paper.title)}" if paper else "a paper no longer in the library"
    return f"{title}, presented by @{meeting.presenter or 'nobody yet'}"


def parse_length(word: str) -> int:
    """90m, 1h30m, 2h (also 90min) as minutes, from 5 minutes to 8 hours."""
    match = _LENGTH.fullmatch(word)
    if not match or not any(match.groups()):
        raise ScheduleError(f"`{word}` is not a length: use minutes or hours, e.g. 90m, 1h30m or 2h")
    minutes = int(match.group(1) or 0) * 60 + int(match.group(2) or 0)
    if not LENGTHS[0] <= minutes <= LENGTHS[1]:
        raise ScheduleError(f"`{word}`: a meeting lasts from {LENGTHS[0]} minutes to {LENGTHS[1] // 60} hours")
    return minutes


def _where(words: list[str], base: Plan) -> tuple[str | None, str | None]:
    """The place and call link after `at`: an http(s) word is the link, the other words
    the place; what is not given stays as it was, and `-` clears both."""
    if words == [CLEAR]:
        return None, None
    links = [w for w in words if _LINKISH.match(w)]
    if len(links) > 1:
        raise UsageError("Give one call link.")
    link = base.link
    if links:
        link = web_link(links[0]) if links[0].lower().startswith(("http://", "https://")) else None
        if link is None:
            raise UsageError(f"`{links[0][:80]}` is not a call link paperclub can show: give an http(s) link, "
                             "e.g. https://meet.example/abc.")
        if len(link) > MEETING_LINK_CHARS:
            raise UsageError(f"A call link is at most {MEETING_LINK_CHARS} characters.")
    place = " ".join(w for w in words if w not in links) or (base.place if links else None)
    if place and len(place) > MEETING_PLACE_CHARS:
        raise UsageError(f"A place is at most {MEETING_PLACE_CHARS} characters: name the room, building or "
                         "address, and put the rest in the channel's topic.")
    return place, link


def _call(plan: Plan) -> str:
    """The call link, last in a reply (so no full stop runs into it), as text."""
    return f" Call link: {plan.link}" if plan.link else ""


def _asks_summary(args: str) -> bool:
    """`notes ID summary`: the line asks for the notes summed up, not for a note."""
    words = args.split()
    return len(words) == 2 and words[1].lower() == "summary"


def _coming(presenter: Presenter, day: date | None) -> str:
    if day is not None:
        return f" (presents {day:%A %d %B})"
    return " (volunteered for next)" if presenter.volunteered_at else ""


def _your_turn(when: str, taken: list[tuple[str, str]]) -> str:
    if not taken:
        return f"you present at the next meeting, {when}."
    before = ", ".join(f"@{who} presents on {day}" for who, day in taken)
    return f"{before}, so you present at the one after, {when}."


def _members(names: list[str]) -> list[str]:
    users = [member_id(n) for n in names]
    known = [u for u in users if u is not None]
    if len(known) < len(users):
        bad = names[users.index(None)]
        if len(bad) > MEMBER_CHARS:
            raise UsageError(f"A member's name is at most {MEMBER_CHARS} characters.")
        raise UsageError(f"`{bad}` is not a member: use @name or a mention.")
    return list(dict.fromkeys(known))

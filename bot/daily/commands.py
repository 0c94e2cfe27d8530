"""Channel commands: schedule, topics, collections, use, today, next, history.

Settings change only for managers and only when the whole command is valid: every
handler parses first and writes last.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from bot.cards.cards import card
from bot.cards.collection_names import collection_shown
from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings, added_collection
from bot.channels.schedule import (
    DAY_SETS,
    SCHEDULE_EXAMPLE,
    SCHEDULE_USAGE,
    ScheduleChange,
    ScheduleError,
    parse_change,
    parse_date,
    zone_names,
)
from bot.corpus.library import Library
from bot.feature import DigestSection, Feature, Kit
from bot.grammar import Command, Param, UsageError, always, number, require_manager, with_arguments
from bot.messages import Deliver, Incoming, Reply, counted
from bot.services.posts import Posts
from store.database import as_utc
from store.models import Channel, Paper

HISTORY_DEFAULT = 10
LIKELY_PICKS = 2  # papers ahead of a post (`papers_ahead`): its pick, and the next should that one go
HISTORY_MAX = 50
TOPICS_MAX = 20
TOPIC_CHARS = 80


class DailyFeature(Feature):
    """The paper of the day: the channel's schedule, topics and collections, its posts,
    and the tick that posts them."""

    name = "daily"

    def __init__(self, channels: Channels, daily: Posts, library: Library, clock: Callable[[], datetime],
                 tally_lines: Callable[[list[int]], dict[int, str]] | None = None):
        self.channels = channels
        self.daily = daily
        self.library = library
        self.clock = clock
        # Each post's tally as members read it (the votes service).
        self.tally_lines = tally_lines or (lambda post_ids: {})

    @classmethod
    def build(cls, kit: Kit) -> DailyFeature:
        return cls(kit.channels, kit.posts, kit.library, kit.clock, tally_lines=kit.votes.tally_lines)

    def commands(self) -> list[Command]:
        return [
            Command("schedule", SCHEDULE_USAGE, "Show or set when the paper of the day is posted (managers set it).",
                    SCHEDULE_EXAMPLE, self.schedule, with_arguments, group="channel",
                    params=(Param("time", "24-hour HH:MM, e.g. 09:00 (left out: kept as it is)"),
                            Param("zone", "an IANA time zone (left out: kept, at first UTC)", suggest=zone_names()),
                            Param("days", "daily, weekdays, weekends or mon,wed,fri (left out: kept, at first daily)",
                                  suggest=tuple(DAY_SETS)),
                            Param("switch", "off stops the posts, on restarts them, resume ends a pause",
                                  choices=("off", "on", "resume")),
                            Param("pause_until", "no posts until this date, YYYY-MM-DD")),
                    written="{switch} [pause until {pause_until}] {time} {zone} {days}"),
            Command("topics", "topics · topics add WORDS... · topics remove WORDS... · topics clear",
                    "What this channel's picks are about (managers change them); commas separate topics.",
                    "topics add reinforcement learning, world models", self.topics, with_arguments, group="channel",
                    brief="What this channel's picks are about (managers change them).",
                    params=(Param("action", "add, remove or clear (leave empty to list them)",
                                  choices=("add", "remove", "clear")),
                            Param("words", "topics, commas between them: reinforcement learning, world models"))),
            Command("collections", "collections", "The corpus collections, and which this channel uses.",
                    "collections", self.collections, group="channel"),
            Command("use", "use COLLECTION... · use all", "Limit this channel's picks to some collections (managers).",
                    "use iclr2021 trending", self.use, with_arguments, group="channel",
                    params=(Param("collections", "collection names, or all", required=True),)),
            Command("today", "today", "Today's paper, or when the next one is due.", "today", self.today),
            Command("next", "next", "Post another pick now (managers).", "next", self.next, always,
                    answered_later=True),
            Command("history", "history [N]", "The last N papers posted here (default 10).", "history 5",
                    self.history, brief="The last papers posted here.",
                    params=(Param("count", "how many (default 10)", kind="number", low=1, high=HISTORY_MAX),)),
        ]

    def tick(self, now: datetime, deliver: Deliver, platforms: tuple[str, ...],
             stopping: Callable[[], bool]) -> dict[str, int]:
        report = self.daily.tick(now, deliver, platforms, stopping)
        return {"posted": len(report.posted), "empty": len(report.empty), "failed": len(report.failed),
                "skipped": len(report.skipped), "released": report.released}

    def settings(self, channel: ChannelSettings) -> list[str]:
        return [describe_schedule(channel), describe_topics(channel),
                f"Collections: {', '.join(map(collection_shown, channel.collections)) or 'all'}"]

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """The week's posts (paper of the day, `next`, `discuss`) with their tallies."""
        posts = self.daily.posted_between(channel.id, since, until)
        papers = self.library.get_many(p.paper_id for p in posts)
        posts = [p for p in posts if p.paper_id in papers]
        if not posts:
            return None
        tallies = self.tally_lines([p.id for p in posts])
        zone = channel.schedule.tz if channel.schedule else timezone.utc
        lines = [f"[{p.paper_id}] {readable(papers[p.paper_id].title)} ({as_utc(p.posted_at).astimezone(zone):%a %d})"
                 + (f": {tallies[p.id]}" if p.id in tallies else "") for p in posts]
        return DigestSection(f"Posted this week ({counted(len(posts), 'paper')})", lines,
                             papers=tuple(p.paper_id for p in posts))

    def papers_ahead(self, channel: ChannelSettings, now: datetime, within: timedelta) -> list[int]:
        """The likely picks of the channel's next paper of the day, when it is due within
        `within` (not paused then)."""
        schedule = channel.schedule
        if schedule is None or not channel.enabled:
            return []
        paused = channel.paused_until if channel.paused_on(now.astimezone(schedule.tz).date()) else None
        if schedule.next_slot(now, after=paused) - now > within:
            return []
        return self.daily.likely_picks(channel, now, LIKELY_PICKS)

    def remember(self, reply: Reply, message_ref: str) -> bool:
        """A `next` the adapter posted itself: votes update it, its thread gets results."""
        if reply.post_id is None or not reply.actions:
            return False
        self.daily.set_message(reply.post_id, message_ref)
        return True

    def withdraw(self, reply: Reply) -> bool:
        """A `next` the adapter could not post: the paper goes back to the pool."""
        if reply.post_id is None or not reply.actions:
            return False
        self.daily.forget_post(reply.post_id)
        return True

    # --- schedule ---------------------------------------------------------------------

    def schedule(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        channel = self.channels.get(incoming.channel)
        if not words:
            return Reply(text=describe_schedule(channel))
        change = self._schedule_change(words)
        require_manager(incoming, "change the schedule")
        updated = self.channels.update(incoming.channel, change)
        return Reply(text=f"Done. {describe_schedule(updated)}")

    def _schedule_change(self, words: list[str]) -> Callable[[Channel], None]:
        """Parse fully before anything is written; raise UsageError on any doubt."""
        head = words[0].lower()
        try:
            if head == "off" and len(words) == 1:
                return _set(enabled=False)
            if head == "on" and len(words) == 1:
                return self._switch_on
            if head == "resume" and len(words) == 1:
                return _set(paused_until=None)
            if head == "pause":
                if len(words) != 3 or words[1].lower() != "until":
                    raise ScheduleError("say `schedule pause until YYYY-MM-DD`")
                until = parse_date(words[2])
                if until < self.clock().date():
                    raise ScheduleError(f"{until:%Y-%m-%d} has passed: pause until a date to come")
                return _set(paused_until=until)
            parsed = parse_change(words)
        except ScheduleError as problem:
            raise UsageError(str(problem)) from None
        return _changed_schedule(parsed)

    @staticmethod
    def _switch_on(row: Channel) -> None:
        if not row.post_time:
            raise UsageError("There is no schedule to switch on yet: set one first.")
        row.enabled = True

    # --- topics and collections -----------------------------------------------------------

    def topics(self, incoming: Incoming, args: str) -> Reply:
        action, _, rest = args.strip().partition(" ")
        action = action.lower()
        channel = self.channels.get(incoming.channel)
        if not action:
            return Reply(text=describe_topics(channel))
        if action not in ("add", "remove", "clear"):
            raise UsageError(f"`{action}` is not a topics action: add, remove or clear.")
        if action == "clear" and rest.strip():
            raise UsageError("`topics clear` takes nothing after it.")
        phrases = _phrases(rest)
        if action != "clear" and not phrases:
            raise UsageError(f"Say which topics to {action}.")
        current = list(channel.topics)
        if action == "add":
            new = current + [p for p in phrases if p.lower() not in {c.lower() for c in current}]
            if len(new) > TOPICS_MAX:
                raise UsageError(f"A channel keeps at most {TOPICS_MAX} topics; remove some first.")
        elif action == "remove":
            missing = [p for p in phrases if p.lower() not in {c.lower() for c in current}]
            if missing:
                raise UsageError(f"Not a topic here: {', '.join(missing)}. Topics: {'; '.join(current) or 'none'}.")
            new = [c for c in current if c.lower() not in {p.lower() for p in phrases}]
        else:
            new = []
        require_manager(incoming, "change the topics")
        updated = self.channels.update(incoming.channel, _set(topics=new))
        return Reply(text=describe_topics(updated))

    def collections(self, incoming: Incoming, args: str) -> Reply:
        if args.strip():
            raise UsageError("`collections` takes no arguments.")
        channel = self.channels.get(incoming.channel)
        rows = self.library.collections()
        if not rows:
            return Reply(text="No collections yet: import papers with `paperclub import FILE`.")
        # Each as a member reads it, with the name `use` takes where the two differ.
        lines = [
            f"{'*' if name in channel.collections else ' '} {collection_shown(name)}: {counted(count, 'paper')}"
            for name, count in rows
        ]
        using = ", ".join(map(collection_shown, channel.collections)) if channel.collections else "all collections"
        return Reply(text="Collections (* = used here):\n" + "\n".join(lines) + f"\nThis channel picks from {using}.")

    def use(self, incoming: Incoming, args: str) -> Reply:
        names = args.replace(",", " ").split()
        if not names:
            raise UsageError("Name the collections, or `use all`.")
        # `added`: this workspace's papers added in chat (bot/adding/additions.py).
        names = [added_collection(incoming.channel) if n.lower() == "added" else n for n in names]
        if [n.lower() for n in names] == ["all"]:
            chosen: list[str] = []
        else:
            known = {name.lower(): name for name, _ in self.library.collections()}
            unknown = [n for n in names if n.lower() not in known]
            if unknown:
                raise UsageError(f"No collection named {', '.join(unknown)}; `collections` lists them.")
            chosen = list(dict.fromkeys(known[n.lower()] for n in names))
        require_manager(incoming, "choose the collections")
        self.channels.update(incoming.channel, _set(collections=chosen))
        shown = ", ".join(map(collection_shown, chosen)) if chosen else "all collections"
        return Reply(text=f"This channel now picks from {shown}.")

    # --- posts ------------------------------------------------------------------------

    def today(self, incoming: Incoming, args: str) -> Reply:
        """Every paper posted here today (the paper of the day, `next` and `discuss`
        picks), newest first; else when the next is due."""
        if args.strip():
            raise UsageError("`today` takes no arguments.")
        channel = self.channels.get(incoming.channel)
        now = self.clock()
        posted = self._posted_today(channel, now)
        if not posted:
            return Reply(text=describe_next(channel, now))
        tokenizer = self.daily.search.tokenizer
        heading = "Today's paper:" if len(posted) == 1 else f"Today's {len(posted)} papers, newest first:"
        return Reply(text=heading, cards=[card(paper, tokenizer, reason=reason) for paper, reason in posted])

    def _posted_today(self, channel: ChannelSettings, now: datetime) -> list[tuple[Paper, str]]:
        """(paper, why) of the posts made today in the channel's zone (UTC without a schedule)."""
        zone = channel.schedule.tz if channel.schedule else timezone.utc
        day = now.astimezone(zone).date()
        posts = [p for p in self.daily.history(channel.id, HISTORY_MAX)
                 if (p.local_date or as_utc(p.posted_at).astimezone(zone).date()) == day]
        papers = self.library.get_many(p.paper_id for p in posts)
        return [(papers[p.paper_id], p.reason) for p in posts if p.paper_id in papers]

    def next(self, incoming: Incoming, args: str) -> Reply:
        if args.strip():
            raise UsageError("`next` takes no arguments.")
        require_manager(incoming, "post an extra pick")
        return self.daily.post_now(self.channels.get(incoming.channel), self.clock())

    def history(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        limit = number(words[0], 1, HISTORY_MAX) if len(words) == 1 else HISTORY_DEFAULT
        if len(words) > 1 or limit is None:
            raise UsageError(f"N is a number from 1 to {HISTORY_MAX}.")
        channel = self.channels.get(incoming.channel)
        posts = self.daily.history(channel.id, limit)
        if not posts:
            return Reply(text="Nothing posted here yet.")
        papers = self.library.get_many(p.paper_id for p in posts)
        lines = [f"{p.posted_at:%Y-%m-%d} [{p.paper_id}] {readable(papers[p.paper_id].title)}"
                 for p in posts if p.paper_id in papers]
        return Reply(text="Posted here, newest first:\n" + "\n".join(lines))


def describe_schedule(channel: ChannelSettings) -> str:
    if channel.schedule is None:
        return f"No schedule yet. Set one: `{SCHEDULE_EXAMPLE}`."
    state = "on" if channel.enabled else "off (`schedule on` resumes it)"
    text = f"Paper of the day at {channel.schedule.describe()}; schedule {state}."
    if channel.paused_until:
        text += f" Paused until {channel.paused_until:%Y-%m-%d}."
    return text


def describe_topics(channel: ChannelSettings) -> str:
    return f"Topics: {'; '.join(channel.topics) or 'none (picks tour the whole corpus)'}"


def describe_next(channel: ChannelSettings, now: datetime) -> str:
    if channel.schedule is None or not channel.enabled:
        return describe_schedule(channel)
    schedule = channel.schedule
    paused = channel.paused_until if channel.paused_on(now.astimezone(schedule.tz).date()) else None
    slot = schedule.next_slot(now, after=paused)
    due = f"{slot.astimezone(schedule.tz):%A %d %B %H:%M} {schedule.zone}"
    if paused is not None:  # weeks away: a countdown in hours would say nothing
        return (f"No paper today: the schedule is paused until {paused:%Y-%m-%d}; the next is due {due}. "
                "`schedule resume` ends the pause now.")
    hours, minutes = divmod(int((slot - now).total_seconds() // 60), 60)
    return f"No paper yet today. The next is due {due} (in {hours}h {minutes:02d}m)."


def _changed_schedule(parsed: ScheduleChange) -> Callable[[Channel], None]:
    """The parts named replace the row's own (read in the writing transaction, so two
    managers changing different parts at once both count); setting any part switches
    the schedule on."""

    def change(row: Channel) -> None:
        try:
            schedule = parsed.applied_to(ChannelSettings.of(row).schedule)
        except ScheduleError as problem:
            raise UsageError(str(problem)) from None
        row.post_time, row.timezone = f"{schedule.post_time:%H:%M}", schedule.zone
        row.days, row.enabled = ",".join(schedule.days), True

    return change


def _set(**values: object) -> Callable[[Channel], None]:
    def change(row: Channel) -> None:
        for name, value in values.items():
            setattr(row, name, value)

    return change


def _phrases(text: str) -> list[str]:
    """Comma-separated topic phrases, whitespace normalised, length-limited."""
    phrases = [" ".join(p.split()) for p in text.split(",")]
    phrases = [p for p in phrases if p]
    too_long = [p for p in phrases if len(p) > TOPIC_CHARS]
    if too_long:
        raise UsageError(f"A topic is at most {TOPIC_CHARS} characters.")
    return list(dict.fromkeys(phrases))

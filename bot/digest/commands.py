"""`digest`: the channel's weekly digest, when it goes out, and the tick that posts it
exactly once per channel and ISO week.

The digest asks every feature for its section (`Feature.digest`), in the features'
order; a week whose sections hold no news is said in one line. A failed delivery is
retried by later ticks within the catch-up grace, as the paper of the day is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.cards.cards import paper_link
from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings
from bot.channels.schedule import WEEKDAYS, ScheduleError
from bot.corpus.library import Library
from bot.digest.compose import LINES_SHOWN, body, digest_reply
from bot.digest.digests import SETTLED, Claimed, Digests, since_until
from bot.digest.weekly import WeeklySlot, parse_slot
from bot.feature import DigestSection, Feature, Features, Kit
from bot.grammar import Command, Param, UsageError, require_manager, with_arguments
from bot.messages import Deliver, DeliveryRefused, Incoming, Reply
from bot.ops.settings import DEFAULT_GRACE
from store.database import as_utc

log = logging.getLogger(__name__)

DIGEST_USAGE = "digest · digest DAY HH:MM · digest off · digest on · digest preview"
IN_BRIEF = "In brief"  # the section of the features' lines about the digest's papers (TL;DRs)
SWITCHES = ("off", "on", "preview")


class DigestFeature(Feature):
    """The weekly digest: its plan, its status, a preview, and the weekly post."""

    name = "digest"

    def __init__(self, channels: Channels, digests: Digests, features: Features, clock: Callable[[], datetime],
                 grace: timedelta = DEFAULT_GRACE, library: Library | None = None):
        self.channels = channels
        self.library = library  # the papers' links, for the titles the sections name
        self.digests = digests
        self.features = features  # every feature's section, asked in their order
        self.clock = clock
        self.grace = grace  # how late a digest may still go out (PAPERCLUB_CATCHUP)

    @classmethod
    def build(cls, kit: Kit) -> DigestFeature:
        return cls(kit.channels, Digests(kit.db), kit.features, kit.clock, kit.grace, kit.library)

    def commands(self) -> list[Command]:
        return [
            Command("digest", DIGEST_USAGE,
                    "The weekly digest: when it goes out in this channel's zone (managers set it, switch it off "
                    "or on, or preview it).", "digest mon 09:00", self.digest_command, with_arguments,
                    group="channel", brief="The weekly digest (managers set its day and time, or preview it).",
                    params=(Param("day", "the weekday it goes out (left out: kept)", choices=WEEKDAYS),
                            Param("time", "24-hour HH:MM in this channel's zone (left out: kept)"),
                            Param("switch", "off stops it, on restarts it, preview shows it to you now",
                                  choices=SWITCHES)),
                    written="{switch} {day} {time}"),
        ]

    def settings(self, channel: ChannelSettings) -> list[str]:
        return [self.describe(channel)]

    # --- the command ----------------------------------------------------------------------

    def digest_command(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        channel = self.channels.get(incoming.channel)
        if not words:
            return Reply(text=self.describe(channel))
        head = words[0].lower()
        if head in SWITCHES:
            if len(words) > 1:
                raise UsageError(f"`digest {head}` takes nothing after it.")
            require_manager(incoming, "change or preview the weekly digest")
            if head == "preview":
                return self.preview(channel)
            return self._change(channel, None, None, enabled=head == "on")
        try:
            day, at = parse_slot(words)
        except ScheduleError as problem:
            raise UsageError(str(problem)) from None
        require_manager(incoming, "change the weekly digest")
        return self._change(channel, day, f"{at:%H:%M}" if at else None, enabled=True)

    def _change(self, channel: ChannelSettings, day: str | None, at: str | None, enabled: bool) -> Reply:
        if self.digests.set_plan(channel.id, day, at, enabled) is None:
            raise UsageError("There is no weekly digest here yet: give a day and a time, e.g. `digest mon 09:00`.")
        return Reply(text=f"Done. {self.describe(channel)}")

    def preview(self, channel: ChannelSettings) -> Reply:
        """The digest of the seven days to now, for the asking manager alone: nothing is
        posted and the week's digest still goes out at its time."""
        now = self.clock()
        since, until = now - timedelta(days=7), now
        sections = self._sections(channel, since, until)
        reply = digest_reply(sections, since, until, _zone(channel), self._links(sections))
        reply.text = f"Preview, for you only (nothing was posted):\n{reply.text}"
        reply.ephemeral = True
        return reply

    def _sections(self, channel: ChannelSettings, since: datetime, until: datetime) -> list[DigestSection]:
        """Every feature's section, then "In brief": a line per paper they name that a
        feature has lines about (a TL;DR made ahead), which restates and is no news."""
        sections = self.features.digest(channel, since, until)
        try:
            in_brief = self._in_brief(channel, _named(sections))
        except Exception:  # a bug in a feature's lines: the digest goes out without them
            log.exception("the lines about the papers of the digest of %s failed", channel.ref.key())
            in_brief = None
        return sections + ([in_brief] if in_brief else [])

    def _in_brief(self, channel: ChannelSettings, named: list[int]) -> DigestSection | None:
        papers = self.library.get_many(named) if self.library is not None else {}
        lines, shown = [], []
        for paper_id in (n for n in named if n in papers):
            about = self.features.lines_about(channel, paper_id, "digest")
            if about:
                lines.append(f"[{paper_id}] {readable(papers[paper_id].title)} — {' '.join(about)}")
                shown.append(paper_id)
            if len(lines) == LINES_SHOWN:
                break
        return DigestSection(IN_BRIEF, lines, papers=tuple(shown), news=False) if lines else None

    def papers_ahead(self, channel: ChannelSettings, now: datetime, within: timedelta) -> list[int]:
        """The papers the channel's next digest would name, were it made now, when it is
        due within `within` and this week's is not out yet."""
        plan = self.digests.plan(channel.id)
        if plan is None or not plan.enabled:
            return []
        slot = plan.slot(channel)
        due = slot.next_slot(now)
        last = self.digests.last(channel.id)
        if due - now > within or (last is not None and slot.week(as_utc(last.due_at)) == slot.week(due)):
            return []
        return _named(self.features.digest(channel, *since_until(due)))

    def _links(self, sections: list[DigestSection]) -> dict[int, tuple[str, str]]:
        """Paper number -> (title as the sections write it, link), for the papers they name
        that have a link."""
        if self.library is None:
            return {}
        papers = self.library.get_many({n for s in sections for n in s.papers})
        return {n: (readable(p.title), link) for n, p in papers.items() if (link := paper_link(p))}

    def describe(self, channel: ChannelSettings) -> str:
        plan = self.digests.plan(channel.id)
        if plan is None:
            return "Weekly digest: none yet (a manager starts one: `digest mon 09:00`, in this channel's zone)."
        slot = plan.slot(channel)
        if not plan.enabled:
            return f"Weekly digest: off (`digest on` restarts it, {slot.describe()})."
        now = self.clock()
        last = self.digests.last(channel.id)
        due = slot.next_slot(now)
        if last is not None and slot.week(as_utc(last.due_at)) == slot.week(due):  # this week's is out
            due = slot.next_slot(due + timedelta(days=1))
        text = f"Weekly digest: {slot.describe()}; the next is due {due.astimezone(slot.tz):%a %d %b %H:%M}."
        if last is not None:
            what = "a quiet week" if last.state == "quiet" else "posted"
            text += f" Last: {as_utc(last.due_at).astimezone(slot.tz):%a %d %b} ({what})."
        return text

    # --- the tick -------------------------------------------------------------------------

    def tick(self, now: datetime, deliver: Deliver, platforms: tuple[str, ...],
             stopping: Callable[[], bool]) -> dict[str, int]:
        counts = {"digests": 0, "digests_quiet": 0, "digests_failed": 0}
        weeks = self._this_weeks(now, platforms)
        states = self.digests.states([(c.id, slot.week(at)) for c, slot, at, _ in weeks])
        for channel, slot, at, due in weeks:
            if stopping():
                break
            if states.get((channel.id, slot.week(at))) in SETTLED:
                continue
            if not due:  # passed beyond the grace unposted: recorded once, logged once
                if self.digests.claim(channel, slot, at, now, state="skipped"):
                    log.warning("skipped the %s digest of %s: its time passed more than %s ago",
                                slot.week(at), channel.ref.key(), self.grace)
                continue
            claimed = self.digests.claim(channel, slot, at, now)
            if claimed is not None:
                counts[self._post(claimed, deliver)] += 1
        return counts

    def _this_weeks(self, now: datetime,
                    platforms: tuple[str, ...]) -> list[tuple[ChannelSettings, WeeklySlot, datetime, bool]]:
        """(channel, slot, its time, due) for each channel whose digest is due now, or
        whose time this week passed beyond the grace."""
        found = []
        for channel, plan in self.digests.planned(set(platforms)):
            slot = plan.slot(channel)
            due_at = slot.due(now, self.grace)
            at = due_at if due_at is not None else slot.missed(now, self.grace)
            if at is not None:
                found.append((channel, slot, at, due_at is not None))
        return found

    def _post(self, claimed: Claimed, deliver: Deliver) -> str:
        """Build, mark `sending`, deliver, record; the count it adds to."""
        channel = claimed.channel
        since, until = since_until(claimed.due_at)
        try:
            sections = self._sections(channel, since, until)
            reply = digest_reply(sections, since, until, claimed.slot.zone, self._links(sections))
        except Exception:  # a bug in one section: retried later, the tick goes on
            log.exception("building the digest of %s failed", channel.ref.key())
            self.digests.finish(claimed.digest_id, "failed", error="building the digest failed")
            return "digests_failed"
        quiet = not reply.sections
        self.digests.sending(claimed.digest_id, body(reply, sections))
        try:
            ref = deliver(channel.ref, reply)
        except Exception as problem:  # any delivery failure is retried within the grace
            permanent = isinstance(problem, DeliveryRefused) and problem.permanent
            if isinstance(problem, DeliveryRefused | OSError):
                log.warning("posting the digest to %s failed%s: %s", channel.ref.key(),
                            " for this week" if permanent else "", problem)
            else:
                log.exception("posting the digest to %s failed", channel.ref.key())
            self.digests.finish(claimed.digest_id, "refused" if permanent else "failed", error=str(problem))
            return "digests_failed"
        self.digests.finish(claimed.digest_id, "quiet" if quiet else "posted", message_ref=ref)
        log.info("posted the %s digest to %s", claimed.slot.week(claimed.due_at), channel.ref.key())
        return "digests_quiet" if quiet else "digests"


def _named(sections: list[DigestSection]) -> list[int]:
    """The papers the sections name, in their order, each once (as many of a section as
    it shows lines)."""
    return list(dict.fromkeys(paper for s in sections for paper in s.papers[:LINES_SHOWN]))


def _zone(channel: ChannelSettings) -> str:
    return channel.schedule.zone if channel.schedule else "UTC"

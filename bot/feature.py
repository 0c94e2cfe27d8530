"""What a feature is to the core: the commands it owns, its scheduled work, its lines in
`settings`, and the hooks through which adapters' events reach it.

A feature is one folder under bot/ exposing one `Feature` object; `bot/app.py` builds
each with the services it needs and lists it once. The core only dispatches: a line
goes to the feature that owns the command, a tick runs every feature's step, an
adapter's event (a reaction, a button, a message it posted or could not post) is
offered to the features in turn, and the weekly digest asks each for its section.
Every hook has a default that does nothing, so a
feature implements only what it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from bot.channels.channels import ChannelSettings
from bot.grammar import Command
from bot.messages import Deliver, Incoming, PaperCard, Reaction, Reply


class Feature:
    """A part of the bot that plugs in. `name` heads its counts in the tick report."""

    name = ""

    def commands(self) -> list[Command]:
        """The commands it owns, in the order `help` lists them."""
        return []

    def tick(self, now: datetime, deliver: Deliver, platforms: tuple[str, ...],
             stopping: Callable[[], bool]) -> dict[str, int]:
        """The scheduler's minute: do what is due on `platforms` (those `deliver`
        reaches), start nothing new once `stopping()`; return what it did, as counts."""
        return {}

    def settings(self, channel: ChannelSettings) -> list[str]:
        """Its lines in the channel's `settings` answer."""
        return []

    def archive_sections(self, channel: ChannelSettings) -> list[tuple[str, list[str]]]:
        """Sections it adds to the channel's archive page: (heading, lines of text)."""
        return []

    def on_show(self, incoming: Incoming, paper_id: int, card: PaperCard) -> None:
        """Add what it knows of a paper to the card `show` answers with."""

    def button(self, value: str) -> str | None:
        """The command line a button it drew stands for (its value as the adapter got
        it), or None when the button is not one of its own."""
        return None

    def react(self, reaction: Reaction) -> int | None:
        """A reaction put on or taken off a message: the post whose tally changed."""
        return None

    def redraw(self, post_id: int) -> tuple[str | None, Reply] | None:
        """(message reference, the post as it should look now), after its tally changed."""
        return None

    def remember(self, reply: Reply, message_ref: str) -> bool:
        """An adapter posted `reply` (one of this feature's) itself: keep its reference."""
        return False

    def withdraw(self, reply: Reply) -> bool:
        """An adapter could not post `reply` (one of this feature's): undo it."""
        return False

    def from_message(self, incoming: Incoming) -> Reply | None:
        """A member handed the bot a whole message ("Add to paperclub")."""
        return None

    def stop(self) -> None:
        """The process is shutting down: work in flight for members (fetches) ends now,
        each line answered with what it has; nothing new starts."""

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """Its part of the channel's weekly digest: what happened in [since, until), or
        None when it has nothing to say."""
        return None


@dataclass
class DigestSection:
    """One feature's part of a channel's weekly digest (bot/digest): a title, one line per
    item, and optionally paper cards. Lines name papers by the number members type
    (`vote 12 up`, `nominate 12`), and `papers` lists those numbers so the digest can keep
    them. `news`: whether the section says something new this week; a section that only
    restates what stands (the next meeting) does not, and a week whose sections are all
    like that is a quiet week, said in one line."""

    title: str
    lines: list[str] = field(default_factory=list)
    cards: list[PaperCard] = field(default_factory=list)
    papers: tuple[int, ...] = ()
    news: bool = True


@dataclass
class TickReport:
    """What one scheduler minute did: each feature's counts under its name."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def __getitem__(self, what: str) -> int:
        """One count by its name, whichever feature keeps it ("posted", "polls_closed")."""
        return sum(counts.get(what, 0) for counts in self.counts.values())

    def flat(self) -> dict[str, int]:
        """Every count by its name, for a log line."""
        return {name: value for counts in self.counts.values() for name, value in counts.items()}

    def any(self) -> bool:
        return any(self.flat().values())


class Features(list):
    """The features, in the order `help` lists their commands. Features that answer for
    the others (`settings`, `show`) are handed this list and ask it."""

    def settings(self, channel: ChannelSettings) -> list[str]:
        return [line for feature in self for line in feature.settings(channel)]

    def archive_sections(self, channel: ChannelSettings) -> list[tuple[str, list[str]]]:
        return [section for feature in self for section in feature.archive_sections(channel)]

    def on_show(self, incoming: Incoming, paper_id: int, card: PaperCard) -> None:
        for feature in self:
            feature.on_show(incoming, paper_id, card)

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> list[DigestSection]:
        """Every feature's digest section, in the features' order."""
        return [section for feature in self if (section := feature.digest(channel, since, until)) is not None]

    def first(self, hook: Callable[[Feature], object]) -> object:
        """The first answer a feature gives that is not None or False."""
        for feature in self:
            answer = hook(feature)
            if answer is not None and answer is not False:
                return answer
        return None

    def commands(self) -> Iterable[Command]:
        for feature in self:
            yield from feature.commands()

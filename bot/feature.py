"""What a feature is to the core: the commands it owns, its scheduled work, its lines in
`settings`, its pages, its settings model and tables, and the hooks through which
adapters' events reach it.

A feature is one folder under bot/. Its package's `__init__.py` names it with a `Plugin`
(cheap to import: the command line's parser reads it to list a feature's subcommands and
pages); the plugin loads the `Feature` class, which builds itself from the `Kit` of shared
services (`Feature.build`). `bot/app.py` lists the plugins once. The core only
dispatches: a line goes to the feature that owns the command, a tick runs every
feature's step, an adapter's event (a reaction, a button, a message it posted or could
not post) is offered to the features in turn, the weekly digest asks each for its
section, and a request for a page goes to the feature whose route it is. Every hook has
a default that does nothing, so a feature implements only what it has.

This module imports nothing heavy at run time (only for type checking): the command line
imports it to read the plugins without loading the bot.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, ClassVar, TypeVar

if TYPE_CHECKING:
    from bot.channels.channels import Channels, ChannelSettings
    from bot.corpus.feeds import FeedSource
    from bot.corpus.library import Library
    from bot.grammar import Command
    from bot.messages import Deliver, Incoming, PaperCard, Reaction, Reply
    from bot.ops.settings import EnvSettings
    from bot.search.engine import SearchBackend
    from bot.services.links import PrivateLinks
    from bot.services.meetings import Meetings
    from bot.services.polls import Polls
    from bot.services.posts import Posts
    from bot.services.votes import Votes
    from store import Database

T = TypeVar("T")
S = TypeVar("S", bound="EnvSettings")


@dataclass(frozen=True)
class PageRoute:
    """A path prefix a feature answers on `paperclub serve`'s port (`Feature.page`), as
    `paperclub serve --help` lists it."""

    prefix: str  # "/archive/": every path that starts with it is the feature's
    shown: str  # "/archive/TOKEN[.bib]": the path as a reader types it
    about: str  # what it answers, a few words


@dataclass(frozen=True)
class Plugin:
    """A feature as bot/app.py lists it: its name, its pages' paths and its command-line
    subcommands, readable without loading it, and `load`, which imports its class."""

    name: str
    load: Callable[[], type[Feature]]
    routes: tuple[PageRoute, ...] = ()
    # Adds `paperclub` subcommands; their functions import what they run only when they
    # run (`paperclub --help` stays fast), each taking the parsed arguments, returning
    # the exit status.
    cli: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None] | None = None


@dataclass
class Page:
    """A feature's answer to a request for one of its paths: status, headers, body."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


NOT_FOUND = Page(404)  # the adapter answers it as every other 404


@dataclass
class Kit:
    """What a feature is built from (`Feature.build`): the shared services, built once in
    bot/app.py, and the environment its settings are read from."""

    db: Database
    clock: Callable[[], datetime]
    grace: timedelta  # how late scheduled work may still go out (PAPERCLUB_CATCHUP)
    public_url: str | None  # where `paperclub serve` is reached from outside (links)
    env: Mapping[str, str]
    library: Library
    search: SearchBackend
    channels: Channels
    posts: Posts
    votes: Votes
    polls: Polls
    meetings: Meetings
    links: PrivateLinks
    features: Features  # every feature, for those that ask the others (`settings`, the digest)
    given: tuple[object, ...] = ()  # what the caller handed in (a test's fake clients)

    def settings(self, model: type[S]) -> S:
        """A feature's settings, read from the environment (ConfigError names each problem)."""
        return model.from_env(self.env)

    def provided(self, kind: type[T]) -> T | None:
        """An object of `kind` the caller handed in, else None (the feature makes its own)."""
        return next((thing for thing in self.given if isinstance(thing, kind)), None)


class Feature:
    """A part of the bot that plugs in. `name` heads its counts in the tick report and is
    how tests and tools ask for it (`Services.feature`)."""

    name: ClassVar[str] = ""
    # Its settings (an EnvSettings read from the environment at start-up); `config check`
    # and the manual's test list every variable of every feature's model.
    settings_model: ClassVar[type[EnvSettings] | None] = None

    @classmethod
    def build(cls, kit: Kit) -> Feature:
        """The feature, built from the shared services."""
        raise NotImplementedError(f"{cls.__name__} does not say how it is built")

    def commands(self) -> list[Command]:
        """The commands it owns, in the order `help` lists them."""
        return []

    def tick(self, now: datetime, deliver: Deliver, platforms: tuple[str, ...],
             stopping: Callable[[], bool]) -> dict[str, int]:
        """The scheduler's minute: do what is due on `platforms` (those `deliver`
        reaches), start nothing new once `stopping()`; return what it did, as counts."""
        return {}

    def provider_step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """Work that waits on a provider outside (a follow's fetch, a Zotero sync): run by a
        scheduler job of its own, so the minute's posts, polls and reminders never wait for
        it; exactly-once across processes is its own claims' business. Start nothing new
        once `stopping()`; return what it did, as counts."""
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

    def page(self, path: str, query: dict[str, str]) -> Page:
        """The answer to a GET of `path` under one of its plugin's routes."""
        return NOT_FOUND

    def feed_sources(self) -> list[FeedSource]:
        """Corpus feeds it reads that are not pages (`paperclub feed add` and `import`:
        `zotero:GROUP/COLLECTION`)."""
        return []

    def stop(self) -> None:
        """The process is shutting down: work in flight for members (fetches) ends now,
        each line answered with what it has; nothing new starts."""

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """Its part of the channel's weekly digest: what happened in [since, until), or
        None when it has nothing to say."""
        return None

    def lines_about(self, channel: ChannelSettings, paper_id: int, occasion: str) -> list[str]:
        """Lines it adds about a paper to a message the scheduler sends: `occasion` is
        "post" (the paper of the day), "digest" or "reminder" (a meeting's). Only what it
        has made already: the minute's tick is waiting, so never a provider's call."""
        return []

    def papers_ahead(self, channel: ChannelSettings, now: datetime, within: timedelta) -> list[int]:
        """The papers a message it sends the channel within `within` of `now` will name
        (its paper of the day, its digest), the likeliest first: for a feature that makes
        its `lines_about` ahead (a TL;DR), on its provider step. Reads only; a guess."""
        return []

    def notes_summary(self) -> Callable[[Incoming, int], Reply] | None:
        """What answers `notes ID summary` (the paper's id): the channel's notes and tally
        on it condensed into a note by a language model (briefs), when this feature can
        make one. The notes' own feature asks; its answer comes later (the model takes
        seconds)."""
        return None


# One of the scheduler's steps: (now, stopping) -> what it did, as counts.
Step = Callable[[datetime, Callable[[], bool]], dict[str, int]]


def minute_step(feature: Feature, deliver: Deliver, platforms: tuple[str, ...], now: datetime,
                stopping: Callable[[], bool]) -> dict[str, int]:
    """A feature's tick as a Step (with `functools.partial` for the first three)."""
    return feature.tick(now, deliver, platforms, stopping)


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


class Features(list[Feature]):
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

    def lines_about(self, channel: ChannelSettings, paper_id: int, occasion: str) -> list[str]:
        """Every feature's lines about a paper for a scheduled message (`Feature.lines_about`)."""
        return [line for feature in self for line in feature.lines_about(channel, paper_id, occasion)]

    def papers_ahead(self, channel: ChannelSettings, now: datetime, within: timedelta) -> list[int]:
        """Every feature's papers coming up for the channel (`Feature.papers_ahead`), in
        the features' order, each once."""
        return list(dict.fromkeys(paper for feature in self for paper in feature.papers_ahead(channel, now, within)))

    def feed_sources(self) -> tuple[FeedSource, ...]:
        return tuple(source for feature in self for source in feature.feed_sources())

    def first(self, hook: Callable[[Feature], T | None]) -> T | None:
        """The first answer a feature gives that is not None or False."""
        for feature in self:
            answer = hook(feature)
            if answer is not None and answer is not False:
                return answer
        return None

    def commands(self) -> Iterator[Command]:
        for feature in self:
            yield from feature.commands()

    def named(self, name: str) -> Feature:
        """One feature by its name ("adding", "meetings"): tests and tools reach in here."""
        found = next((f for f in self if f.name == name), None)
        if found is None:
            raise KeyError(f"no feature is named {name!r}: {', '.join(f.name for f in self)}")
        return found


def loaded(plugins: Iterable[Plugin]) -> list[type[Feature]]:
    """Each plugin's Feature class, its name checked against the plugin's."""
    classes = []
    for plugin in plugins:
        cls = plugin.load()
        if cls.name != plugin.name:
            raise ValueError(f"plugin {plugin.name!r} loads {cls.__name__}, named {cls.name!r}")
        classes.append(cls)
    return classes


__all__ = [
    "NOT_FOUND",
    "DigestSection",
    "Feature",
    "Features",
    "Kit",
    "Page",
    "PageRoute",
    "Plugin",
    "Step",
    "TickReport",
    "loaded",
    "minute_step",
]

"""Wiring: the features in one list, and every service built once, in one place, from a
database URL.

Adapters, the CLI and tests all start here, so a reader follows a command from the
adapter to the core in one hop and sees exactly which services and features exist. A
new feature is a folder under bot/ (its package names it with a `bot.feature.Plugin`)
and its name in FEATURES below: its commands, tick, settings, tables, pages and
subcommands come with it.

Importing this module is cheap (the command line's parser reads the plugins to list the
features' subcommands and pages); what `build_services` builds is imported when it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import import_module
from typing import TYPE_CHECKING

from bot.feature import Plugin

if TYPE_CHECKING:
    from sqlalchemy import MetaData

    from bot.channels.channels import Channels
    from bot.core import PaperClub
    from bot.corpus.feeds import FeedSource
    from bot.corpus.library import Library
    from bot.feature import Feature, Features
    from bot.grammar import Command
    from bot.ops.replays import SeenRequests
    from bot.ops.settings import EnvSettings
    from bot.search.engine import SearchBackend
    from bot.services.links import PrivateLinks
    from bot.services.meetings import Meetings
    from bot.services.polls import Polls
    from bot.services.posts import Posts
    from bot.services.votes import Votes
    from store import Database

# The features, by their folder under bot/, in the order `help` lists their commands and
# `settings` their lines.
FEATURES = ("lookup", "daily", "votes", "adding", "meetings", "memory", "follows", "digest", "reactions", "zotero",
            "briefs", "enrich")

# How the search is made for a library (bot.search.engine.SearchBackend).
SearchFactory = Callable[["Library"], "SearchBackend"]


def package_of(name: str) -> str:
    """A listed feature's package: "daily" is bot.daily; a dotted name is taken as it is
    (a test's toy feature outside bot/)."""
    return name if "." in name else f"bot.{name}"


def plugins(names: Iterable[str] = FEATURES) -> list[Plugin]:
    """The plugin of each feature listed (its package's PLUGIN), in their order."""
    found = []
    for name in names:
        package = package_of(name)
        plugin = getattr(import_module(package), "PLUGIN", None)
        expected = package.rpartition(".")[2]
        if not isinstance(plugin, Plugin) or plugin.name != expected:
            raise TypeError(f"{package} must define PLUGIN = Plugin({expected!r}, ...) in its __init__.py")
        found.append(plugin)
    return found


@dataclass
class Services:
    db: Database
    library: Library
    search: SearchBackend
    channels: Channels
    posts: Posts
    votes: Votes
    polls: Polls
    meetings: Meetings
    links: PrivateLinks
    features: Features
    core: PaperClub
    seen: SeenRequests  # requests a platform may deliver twice, acted on once
    plugins: list[Plugin] = field(default_factory=list)

    @property
    def feed_sources(self) -> tuple[FeedSource, ...]:
        """Feeds that are not pages (bot.corpus.feeds.FeedSource), from the features: zotero:."""
        return self.features.feed_sources()

    def feature(self, name: str) -> Feature:
        """One feature by its name ("adding", "meetings"): tests and tools reach in here."""
        return self.features.named(name)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def catchup_grace(env: Mapping[str, str] = os.environ) -> timedelta:
    """PAPERCLUB_CATCHUP: how late a missed post may still go out (e.g. 3h, 90m)."""
    from bot.ops.settings import catchup_from_env

    return catchup_from_env(env)


def build_services(
    url: str | None = None,
    clock: Callable[[], datetime] = utc_now,
    grace: timedelta | None = None,
    ensure_schema: bool = True,
    public_url: str | None = None,
    db: Database | None = None,
    given: Iterable[object] = (),
    env: Mapping[str, str] | None = None,
    search: SearchFactory | None = None,
    features: Iterable[str] = FEATURES,
) -> Services:
    """Every service on the database at `url` (or `db`, opened already), with the
    features listed in `features` (FEATURES). `given`: objects a feature takes instead of
    making its own (a test's fake clients, `Kit.provided`); `search`: how the search is
    made (default: the built-in engine)."""
    from bot.ops.settings import public_url_from_env
    from store import Database, open_database

    env = os.environ if env is None else env
    if db is None:
        db = open_database(url) if ensure_schema else Database(url or _default_url(env))
    return _wire(db, clock, grace or catchup_grace(env), public_url or public_url_from_env(env), env,
                 tuple(given), search or _builtin_search, plugins(features))


def open_services(url: str | None = None, at: datetime | None = None) -> Services:
    """The services for a command line, the schema checked, with the clock fixed at `at`
    when the user travels in time."""
    from store import open_database

    return build_services(db=open_database(url), clock=(lambda: at) if at else utc_now)


def command_grammar(env: Mapping[str, str] | None = None) -> list[Command]:
    """Every command, in the order `help` lists them, without a database: for a platform
    that registers its commands ahead of serving (`paperclub discord sync`). The features
    are built on an in-memory SQLite that nothing opens: building one touches no
    database, only its handlers would. `env`: the settings that decide which commands
    exist (`brief` only with a language model); none: the commands every deployment has."""
    from store import Database

    services = _wire(Database("sqlite://"), utc_now, _default_grace(), None, env or {}, (), _builtin_search,
                     plugins())
    return list(services.core.commands.values())


def feature_classes(names: Iterable[str] = FEATURES) -> list[type[Feature]]:
    """Each listed feature's class, loaded."""
    from bot.feature import loaded

    return loaded(plugins(names))


def settings_models(names: Iterable[str] = FEATURES) -> list[type[EnvSettings]]:
    """The settings every process reads, then each feature's own, in the order `config
    check` shows them (the chat platforms' come from adapters/platforms.py)."""
    from bot.ops.settings import GLOBAL_SETTINGS

    own = [cls.settings_model for cls in feature_classes(names) if cls.settings_model is not None]
    return [*GLOBAL_SETTINGS, *dict.fromkeys(own)]


def schema(names: Iterable[str] = FEATURES) -> MetaData:
    """Every table of the schema: the shared ones (store.models, bot.services.models) and
    each listed feature's own (the models in its package, imported with its class)."""
    from sqlalchemy import MetaData, Table

    import bot.services.models  # noqa: F401 - registers the shared services' tables
    from store.models import Base

    names = list(names)
    feature_classes(names)
    owners = ("store", "bot.services", *(package_of(name) for name in names))
    metadata = MetaData()
    for mapper in Base.registry.mappers:
        module = mapper.class_.__module__
        if any(module == owner or module.startswith(owner + ".") for owner in owners):
            table = mapper.local_table
            assert isinstance(table, Table)  # a model is declared on a table, never on a join or a select
            table.to_metadata(metadata)
    return metadata


def _default_url(env: Mapping[str, str]) -> str:
    from store.database import resolve_database_url

    return resolve_database_url(env)


def _default_grace() -> timedelta:
    from bot.ops.settings import DEFAULT_GRACE

    return DEFAULT_GRACE


def _builtin_search(library: Library) -> SearchBackend:
    from bot.search.builtin.service import open_search

    return open_search(library)


def _wire(db: Database, clock: Callable[[], datetime], grace: timedelta, public_url: str | None,
          env: Mapping[str, str], given: tuple[object, ...], make_search: SearchFactory,
          listed: list[Plugin]) -> Services:
    from bot.channels.channels import Channels
    from bot.core import PaperClub
    from bot.corpus.library import Library
    from bot.feature import Features, Kit, loaded
    from bot.ops.replays import SeenRequests
    from bot.search.embedding import EmbeddingConfig
    from bot.search.hybrid import with_meaning
    from bot.search.vectors import import_rules
    from bot.services.links import ChannelLinks, PrivateLinks
    from bot.services.meetings import Meetings
    from bot.services.picks import Picker
    from bot.services.polls import Polls
    from bot.services.posts import Posts
    from bot.services.votes import Votes

    library = Library(db, vectors=import_rules(EmbeddingConfig.from_env(env)))
    search = with_meaning(make_search(library), db, env)
    channels = Channels(db)
    votes = Votes(db)
    polls = Polls(db)
    meetings = Meetings(db)
    # Filled below, once each feature is built from the kit: the posts ask it for the
    # features' lines about a paper (a TL;DR made ahead) when they post it.
    features = Features()
    posts = Posts(db, channels, library, search, Picker(search.tokenizer), votes.feedback, grace,
                  lines_about=features.lines_about)
    links = PrivateLinks(channels, ChannelLinks(db), public_url, clock)
    kit = Kit(db, clock, grace, public_url, env, library, search, channels, posts, votes, polls, meetings, links,
              features, given)
    features.extend(cls.build(kit) for cls in loaded(listed))
    core = PaperClub(features, channels, clock)
    return Services(db, library, search, channels, posts, votes, polls, meetings, links, features, core,
                    SeenRequests(db), listed)

"""Wiring: every service built once, in one place, from a database URL, and the list of
features.

Adapters, the CLI and tests all start here, so a reader follows a command from the
adapter to the core in one hop and sees exactly which services and features exist. A
new feature is a folder under bot/ and one line in `features` below.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from bot.adding.commands import AddCommands, per_hour_from_env
from bot.adding.providers import Providers
from bot.channels.channels import Channels
from bot.core import PaperClub
from bot.corpus.library import Library
from bot.daily.commands import ChannelCommands
from bot.daily.picks import Picker
from bot.daily.posts import DailyPosts
from bot.digest.commands import DigestCommands
from bot.digest.digests import Digests
from bot.feature import Features
from bot.follows.clients import FollowClients
from bot.follows.commands import FollowCommands
from bot.follows.follows import Follows
from bot.follows.ingest import Ingest
from bot.grammar import Command
from bot.lookup.commands import Lookup
from bot.meetings.commands import MeetingCommands
from bot.meetings.meetings import Meetings
from bot.memory.commands import MemoryCommands
from bot.memory.links import ChannelLinks
from bot.ops.replays import SeenRequests
from bot.ops.settings import (  # noqa: F401  (ConfigError: re-exported)
    DEFAULT_GRACE,
    ConfigError,
    catchup_from_env,
    public_url_from_env,
)
from bot.search.service import SearchService
from bot.votes.commands import VoteCommands
from bot.votes.polls import Polls
from bot.votes.reactions import Reactions
from bot.votes.votes import Votes
from bot.zotero.commands import ZoteroCommands
from bot.zotero.imports import ZoteroFeed
from bot.zotero.sync import ZoteroConfig
from store import Database, open_database, resolve_database_url


@dataclass
class Services:
    db: Database
    library: Library
    search: SearchService
    channels: Channels
    daily: DailyPosts
    votes: Votes
    polls: Polls
    meetings: Meetings
    features: Features
    core: PaperClub
    seen: SeenRequests  # requests a platform may deliver twice, acted on once
    feed_sources: tuple = ()  # feeds that are not pages (bot.corpus.feeds.FeedSource): zotero:

    def feature(self, name: str):
        """One feature by its name ("adding", "meetings"): tests and tools reach in here."""
        return next(f for f in self.features if f.name == name)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def catchup_grace(env=os.environ) -> timedelta:
    """PAPERCLUB_CATCHUP: how late a missed post may still go out (e.g. 3h, 90m)."""
    return catchup_from_env(env)


def build_services(
    url: str | None = None,
    clock: Callable[[], datetime] = utc_now,
    grace: timedelta | None = None,
    ensure_schema: bool = True,
    public_url: str | None = None,
    db: Database | None = None,
    follow_clients: FollowClients | None = None,
) -> Services:
    """Every service on the database at `url` (or `db`, opened already)."""
    if db is None:
        db = open_database(url) if ensure_schema else Database(url or resolve_database_url())
    return _wire(db, clock, grace or catchup_grace(), public_url or public_url_from_env(), Providers.from_env(),
                 ZoteroConfig.from_env(), follow_clients or FollowClients.from_env())


def command_grammar() -> list[Command]:
    """Every command, in the order `help` lists them, without a database or the
    environment's settings: for a platform that registers its commands ahead of serving
    (`paperclub discord sync`). The features are built on an in-memory SQLite that
    nothing opens: building one touches no database, only its handlers would."""
    return list(_wire(Database("sqlite://"), utc_now, DEFAULT_GRACE, None, Providers()).core.commands.values())


def _wire(db: Database, clock: Callable[[], datetime], grace: timedelta, public_url: str | None,
          providers: Providers, zotero: ZoteroConfig = ZoteroConfig(),
          follow_clients: FollowClients | None = None) -> Services:
    library = Library(db)
    search = SearchService(library)
    channels = Channels(db)
    votes = Votes(db)
    polls = Polls(db)
    meetings = Meetings(db)
    daily = DailyPosts(db, channels, library, search, Picker(search.tokenizer), votes.feedback, grace)
    memory = MemoryCommands(channels, ChannelLinks(db), public_url, clock)
    clients = follow_clients or FollowClients()
    follows = FollowCommands(channels, Follows(db), Ingest(db, library, search, clients.arxiv, clients.openalex),
                             clients.lookup, clock)
    daily.sources.append(follows.fresh_candidates)  # fresh picks: the follows' papers first
    features = Features()
    # The features, in the order `help` lists their commands and `settings` their lines.
    features.extend([
        Lookup(library, search, channels, features),
        ChannelCommands(channels, daily, library, clock, tally_lines=votes.tally_lines),
        VoteCommands(channels, daily, search, library, votes, polls, meetings, clock),
        AddCommands(library, search, channels, daily, providers, clock, per_hour_from_env()),
        MeetingCommands(channels, meetings, library, clock, calendar_link=memory.calendar, grace=grace),
        memory,
        follows,
        DigestCommands(channels, Digests(db), features, clock, grace),
        Reactions(channels, votes, clock),
        ZoteroCommands.build(db, channels, zotero, clock),
    ])
    core = PaperClub(features, channels, clock)
    return Services(db, library, search, channels, daily, votes, polls, meetings, features, core, SeenRequests(db),
                    feed_sources=(ZoteroFeed(zotero),))

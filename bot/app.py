"""Wiring: every service built once, in one place, from a database URL.

Adapters, the CLI and tests all start here, so a reader follows a command from the
adapter to the core in one hop and sees exactly which services exist.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from bot.adding.commands import per_hour_from_env
from bot.adding.providers import Providers
from bot.core import PaperClub
from bot.corpus.library import Library
from bot.channels.channels import Channels
from bot.daily.picks import Picker
from bot.daily.posts import DailyPosts
from bot.meetings.meetings import Meetings
from bot.ops.replays import SeenRequests
from bot.ops.settings import (  # noqa: F401  (ConfigError: re-exported)
    ConfigError,
    catchup_from_env,
    public_url_from_env,
)
from bot.search.service import SearchService
from bot.votes.polls import Polls
from bot.votes.votes import Votes
from store import Database, resolve_database_url


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
    core: PaperClub
    seen: SeenRequests  # requests a platform may deliver twice, acted on once


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
) -> Services:
    db = Database(url or resolve_database_url())
    if ensure_schema:
        db.ensure_schema()
    library = Library(db)
    search = SearchService(library)
    channels = Channels(db)
    votes = Votes(db)
    polls = Polls(db)
    daily = DailyPosts(db, channels, library, search, Picker(search.tokenizer), votes.feedback, grace or catchup_grace())
    meetings = Meetings(db)
    core = PaperClub(library, search, channels, daily, votes, polls, meetings, clock,
                     public_url=public_url or public_url_from_env(),
                     providers=Providers.from_env(), add_per_hour=per_hour_from_env())
    return Services(db, library, search, channels, daily, votes, polls, meetings, core, SeenRequests(db))

"""The Discord app: `paperclub serve discord` and `paperclub discord sync`.

The client carries the /paper command tree (discord_commands), answers interactions
(discord_answers), registers the vote buttons so clicks survive restarts
(discord_views), and, unless told not to, runs the scheduler's tick, whose posts go out
on the client's event loop (discord_messages).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from typing import Any

import discord
from apscheduler.schedulers.background import BackgroundScheduler
from discord import app_commands

from adapters.discord_answers import Answers
from adapters.discord_commands import PaperCommands
from adapters.discord_messages import ChannelLookup, DiscordDelivery, Messenger
from adapters.discord_views import VoteButton
from bot.app import ConfigError, Services, utc_now
from bot.core import PaperClub
from bot.scheduler import start_background, tick_job

# Exactly what the bot does: read and post in channels, embeds, a thread under each
# post, messages in those threads, replies next to earlier messages.
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    embed_links=True,
    create_public_threads=True,
    send_messages_in_threads=True,
    read_message_history=True,
)
INVITE_SCOPES = ("bot", "applications.commands")


class _PaperClub:
    """What the paperclub client adds to discord.py's Client (or AutoShardedClient)."""

    def __init__(self, core: PaperClub, *, scheduler: bool = False, channels: ChannelLookup | None = None,
                 **options: Any):
        # Slash commands and buttons need no privileged intent (no message content).
        # No mentions ever: replies echo what members typed, and must not ping @everyone.
        super().__init__(intents=discord.Intents.default(), allowed_mentions=discord.AllowedMentions.none(),
                         **options)
        self.core = core
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(PaperCommands())
        self.messenger = Messenger(core, channels or self)
        self.answers = Answers(core, self.messenger)
        self.run_scheduler = scheduler
        self.scheduler: BackgroundScheduler | None = None

    async def setup_hook(self) -> None:
        self.add_dynamic_items(VoteButton)
        if self.run_scheduler:
            delivery = DiscordDelivery(self.messenger, asyncio.get_running_loop())
            self.scheduler = start_background(tick_job(self.core, utc_now, delivery, ["discord"]))

    async def close(self) -> None:
        if self.scheduler is not None:
            # Not waiting: a tick in progress may be waiting for this very loop.
            self.scheduler.shutdown(wait=False)
        await super().close()


class PaperClubClient(_PaperClub, discord.Client):
    """One gateway connection: enough for up to about a thousand guilds."""


class ShardedPaperClubClient(_PaperClub, discord.AutoShardedClient):
    """Several shards in one process (PAPERCLUB_DISCORD_SHARDS)."""


def build_client(core: PaperClub, scheduler: bool, shards: dict[str, Any] | None) -> discord.Client:
    if shards is None:
        return PaperClubClient(core, scheduler=scheduler)
    return ShardedPaperClubClient(core, scheduler=scheduler, **shards)


def shard_options(env: Mapping[str, str] = os.environ) -> dict[str, Any] | None:
    """None for one connection; else the AutoShardedClient options.

    PAPERCLUB_DISCORD_SHARDS: `auto` (Discord's recommended count) or a number N.
    PAPERCLUB_DISCORD_SHARD_IDS: this process's share of the N shards (`0,1` or `0-3`),
    to split one bot over several processes.
    """
    shards = env.get("PAPERCLUB_DISCORD_SHARDS", "").strip().lower()
    ids = env.get("PAPERCLUB_DISCORD_SHARD_IDS", "").strip()
    if ids and not shards.isdigit():
        raise ConfigError("PAPERCLUB_DISCORD_SHARD_IDS needs PAPERCLUB_DISCORD_SHARDS set to the total number")
    if not shards:
        return None
    if shards == "auto":
        return {}
    if not shards.isdigit() or int(shards) < 1:
        raise ConfigError(f"PAPERCLUB_DISCORD_SHARDS={shards!r}: use auto or a number of shards, e.g. 4")
    count = int(shards)
    options: dict[str, Any] = {"shard_count": count}
    if ids:
        options["shard_ids"] = _shard_ids(ids, count)
    return options


def _shard_ids(text: str, count: int) -> list[int]:
    chosen: list[int] = []
    try:
        for part in text.split(","):
            first, _, last = part.strip().partition("-")
            chosen += range(int(first), int(last or first) + 1)
    except ValueError:
        raise ConfigError(f"PAPERCLUB_DISCORD_SHARD_IDS={text!r}: use numbers like 0,1 or a range like 0-3") from None
    if not chosen or any(not 0 <= i < count for i in chosen):
        raise ConfigError(f"PAPERCLUB_DISCORD_SHARD_IDS={text!r}: shard ids run from 0 to {count - 1}")
    return sorted(set(chosen))


def _token() -> str | None:
    token = os.environ.get("DISCORD_TOKEN", "").strip()
    if not token:
        print("error: set DISCORD_TOKEN to the bot token (Developer Portal > your app > Bot)", file=sys.stderr)
    return token or None


def serve(services: Services, scheduler: bool) -> int:
    """Run the bot until stopped. A refused token ends the process: restarting in a loop
    would spend Discord's 1,000 logins a day and get the token reset."""
    token = _token()
    if token is None:
        return 2
    client = build_client(services.core, scheduler, shard_options())
    try:
        client.run(token, log_handler=None)  # `paperclub serve` has configured logging
    except discord.LoginFailure:
        print("error: Discord refused DISCORD_TOKEN; copy a fresh token from the Developer Portal",
              file=sys.stderr)
        return 1
    return 0


def sync(guild: int | None) -> int:
    """Register /paper with Discord: in one guild (instant), or globally (slow to
    appear, and rate-limited: run it when the commands change, not on every start)."""
    token = _token()
    if token is None:
        return 2
    try:
        return asyncio.run(_sync(token, guild))
    except discord.LoginFailure:
        print("error: Discord refused DISCORD_TOKEN", file=sys.stderr)
    except discord.HTTPException as problem:
        print(f"error: Discord refused the commands: {problem}", file=sys.stderr)
    return 1


async def _sync(token: str, guild: int | None) -> int:
    # A bare client: registering commands needs the token and the tree, not the gateway.
    client = discord.Client(intents=discord.Intents.default())
    tree = app_commands.CommandTree(client)
    tree.add_command(PaperCommands())
    async with client:
        await client.login(token)
        target = discord.Object(id=guild) if guild is not None else None
        if target is not None:
            tree.copy_global_to(guild=target)
        await tree.sync(guild=target)
        application_id = client.application_id
    where = f"in guild {guild}" if guild is not None else "globally (slow to reach every guild)"
    print(f"registered /paper {where}")
    print("invite the bot with: "
          + discord.utils.oauth_url(application_id, permissions=INVITE_PERMISSIONS, scopes=INVITE_SCOPES))
    return 0

"""The Discord app: the client `paperclub serve` runs, and `paperclub discord sync`.

The client carries the /paper command tree, built from the core's grammar
(discord_commands), answers interactions (discord_answers) and registers the vote
buttons so clicks survive restarts (discord_views). `DiscordRunner` runs it on an event
loop of its own, beside the other parts of the serving process (adapters/runtime.py);
the scheduler's posts go out on that loop (discord_messages).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import discord
from discord import app_commands
from discord.http import Route

from adapters.debounce import REDRAW_SECONDS, Debouncer
from adapters.discord.answers import Answers
from adapters.discord.commands import add_to_paperclub_menu, paper_commands
from adapters.discord.config import DiscordSettings
from adapters.discord.endpoint import use_api_url
from adapters.discord.messages import ChannelLookup, DiscordDelivery, Messenger
from adapters.discord.reactions import ReactionVotes, loop_timer
from adapters.discord.views import VoteButton
from bot.app import command_grammar
from bot.core import PaperClub
from bot.messages import ChannelRef, Reply
from bot.ops.logs import drop_expected
from bot.ops.settings import ConfigError

log = logging.getLogger(__name__)
# paperclub never joins voice: discord.py's warnings about voice libraries say nothing.
drop_expected(logging.getLogger("discord.client"), "PyNaCl is not installed", "davey is not installed")
LOGIN_WAIT_SECONDS = 60.0  # how long a scheduled post waits for the client to log in
REDRAWS_AT_CLOSE_SECONDS = 5.0  # how long closing waits for post redraws after reactions

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

    def __init__(self, core: PaperClub, *, channels: ChannelLookup | None = None,
                 redraw_seconds: float = REDRAW_SECONDS, **options: Any):
        # Slash commands, buttons, the message menu and raw guild reactions need no
        # privileged intent (no message content).
        # No mentions ever: replies echo what members typed, and must not ping @everyone.
        super().__init__(intents=discord.Intents.default(), allowed_mentions=discord.AllowedMentions.none(),
                         **options)
        self.core = core
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(paper_commands(core.commands.values()))
        self.tree.add_command(add_to_paperclub_menu())
        self.messenger = Messenger(core, channels or self)
        self.answers = Answers(core, self.messenger)
        # A burst of reactions on a post is one Message.edit (adapters/debounce.py).
        self.redraws = Debouncer(redraw_seconds, loop_timer)
        self.reaction_votes = ReactionVotes(core, self, self.messenger, self.redraws, channels)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(VoteButton)

    async def close(self) -> None:
        # Posts waiting for their redraw show their last reactions before the client goes.
        self.redraws.flush()
        try:
            await asyncio.wait_for(self.reaction_votes.settled(), REDRAWS_AT_CLOSE_SECONDS)
        except TimeoutError:
            log.warning("closing with post redraws still under way")
        self.answers.later.shutdown(wait=False)  # the core was told to stop: they end at once
        await super().close()

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        await self.reaction_votes(payload)

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        await self.reaction_votes(payload)


class PaperClubClient(_PaperClub, discord.Client):
    """One gateway connection: enough for up to about a thousand guilds."""


class ShardedPaperClubClient(_PaperClub, discord.AutoShardedClient):
    """Several shards in one process (PAPERCLUB_DISCORD_SHARDS)."""


def build_client(core: PaperClub, shards: dict[str, Any] | None) -> discord.Client:
    if shards is None:
        return PaperClubClient(core)
    return ShardedPaperClubClient(core, **shards)


class DiscordRunner:
    """The client on its own event loop, in a thread of the serving process.

    `deliver` is the scheduler's way in: it waits for the login, then posts on the
    client's loop. A refused token stops the whole process through `on_exit` (restarting
    in a loop would spend Discord's 1,000 logins a day and get the token reset).
    """

    def __init__(self, core: PaperClub, token: str, shards: dict[str, Any] | None,
                 on_exit: Callable[[str | None], None], stopping: threading.Event | None = None):
        self.client = build_client(core, shards)
        self.token = token
        self.on_exit = on_exit
        self.stopping = stopping or threading.Event()  # the process is shutting down
        self.loop: asyncio.AbstractEventLoop | None = None
        self.logged_in = threading.Event()
        self._thread = threading.Thread(target=self._run, name="discord", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        problem: str | None = None
        try:
            asyncio.run(self._main())
        except discord.LoginFailure:
            problem = "Discord refused DISCORD_TOKEN; copy a fresh token from the Developer Portal"
        except (aiohttp.ClientError, OSError) as error:  # no traceback: the network, not a bug
            problem = unreachable(error)
        except Exception as error:  # whatever ended the gateway ends the process
            log.exception("the Discord client stopped")
            problem = f"the Discord client stopped: {error}"
        self.on_exit(problem)

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        async with self.client:
            await self.client.login(self.token)
            self.logged_in.set()
            await self.client.connect()

    def deliver(self, channel: ChannelRef, reply: Reply) -> str:
        # Nothing has gone out while we wait, so giving up is a plain failure the next
        # tick retries; a shutdown must not wait out the whole login timeout.
        deadline = time.monotonic() + LOGIN_WAIT_SECONDS
        while not self.logged_in.wait(0.2):
            if self.stopping.is_set() or time.monotonic() > deadline:
                raise ConnectionError("the Discord client has not logged in yet")
        assert self.loop is not None
        return DiscordDelivery(self.client.messenger, self.loop)(channel, reply)

    @property
    def delivery(self) -> Callable[[ChannelRef, Reply], str]:
        """What the scheduler posts with (adapters.platforms.Served)."""
        return self.deliver

    def stop_accepting(self) -> None:
        """Nothing to close first: the gateway stays up for the tick's post in flight,
        and `stop` closes it."""

    def stop(self, timeout: float) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed() and self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(self.client.close(), loop).result(timeout)
            except Exception as problem:  # noqa: BLE001 - stopping anyway
                log.warning("closing the Discord client: %s", problem)
        self._thread.join(timeout)


def sync(guild: int | None) -> int:
    """Register /paper with Discord: in one guild (instant), or globally (slow to
    appear, and rate-limited: run it when the commands change, not on every start).
    Exit status 0 done, 1 Discord refused or could not be reached, 2 configuration;
    every failure is one line on stderr, never a traceback."""
    try:
        settings = DiscordSettings.from_env()
        if settings.api_url:
            use_api_url(settings.api_url, gateway=False)
    except ConfigError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_sync(settings.token, guild))
    except discord.LoginFailure:
        print("error: Discord refused DISCORD_TOKEN", file=sys.stderr)
    except discord.HTTPException as problem:
        print(f"error: Discord refused the commands: {problem}", file=sys.stderr)
    except (aiohttp.ClientError, OSError) as problem:  # OSError: TimeoutError, DNS, refused
        print(f"error: {unreachable(problem)}", file=sys.stderr)
    return 1


def unreachable(problem: BaseException) -> str:
    """One line for a network failure: where discord.py tried to go, and why it failed."""
    return f"could not reach Discord at {Route.BASE}: {problem or type(problem).__name__}"


async def _sync(token: str, guild: int | None) -> int:
    # A bare client: registering commands needs the token and the tree, not the gateway;
    # the tree needs the grammar, not the database.
    client = discord.Client(intents=discord.Intents.default())
    tree = app_commands.CommandTree(client)
    tree.add_command(paper_commands(command_grammar(os.environ)))  # `brief` where a model is configured
    tree.add_command(add_to_paperclub_menu())
    async with client:
        await client.login(token)
        target = discord.Object(id=guild) if guild is not None else None
        if target is not None:
            tree.copy_global_to(guild=target)
        await tree.sync(guild=target)
        application_id = client.application_id
    where = f"in guild {guild}" if guild is not None else "globally (slow to reach every guild)"
    print(f"registered /paper and the message menu \"Add to paperclub\" {where}")
    print("invite the bot with: "
          + discord.utils.oauth_url(application_id, permissions=INVITE_PERMISSIONS, scopes=INVITE_SCOPES))
    return 0

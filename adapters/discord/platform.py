"""Discord's entry in the platform registry (adapters/platforms.py): its settings, its
client in `paperclub serve`, and `paperclub discord ...`.

Each part imports discord.py only when it runs, so listing Discord costs the other commands
nothing. It has no delivery of its own: posts go through the gateway client, so only the
process that serves Discord posts there.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.discord.app import DiscordRunner
    from adapters.discord.config import DiscordSettings
    from bot.app import Services


def settings() -> type[DiscordSettings]:
    from adapters.discord.config import DiscordSettings

    return DiscordSettings


def serve(services: Services, settings: DiscordSettings, host) -> DiscordRunner:
    """The gateway client in a thread; a refused token stops the whole process through
    `host` (the serving process, adapters.platforms.Host)."""
    from adapters.discord.app import DiscordRunner
    from adapters.discord.endpoint import use_api_url

    if settings.api_url:
        use_api_url(settings.api_url)
    return DiscordRunner(services.core, settings.token, settings.shard_options(),
                         on_exit=host.request_stop, stopping=host.stop)


def add_commands(actions: argparse._SubParsersAction) -> None:
    q = actions.add_parser("sync", help="register the /paper commands with Discord (on demand, not every start)")
    q.add_argument("--guild", type=int, help="one guild (instant); without it, global (slow to propagate)")
    q.set_defaults(func=cmd_sync)


def cmd_sync(args: argparse.Namespace) -> int:
    from adapters.discord.app import sync

    return sync(args.guild)

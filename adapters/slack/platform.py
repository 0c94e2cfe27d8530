"""Slack's entry in the platform registry (adapters/platforms.py): its settings, its app in
`paperclub serve`, its scheduler delivery, and `paperclub slack ...`.

Each part imports slack_bolt only when it runs, so listing Slack costs the other commands
nothing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.slack.config import SlackSettings
    from adapters.slack.delivery import SlackDelivery
    from adapters.slack.server import SlackServer
    from bot.app import Services


def settings() -> type[SlackSettings]:
    from adapters.slack.config import SlackSettings

    return SlackSettings


def serve(services: Services, settings: SlackSettings, host) -> SlackServer:
    """HTTP on $PORT with the routes of `host` (the serving process, adapters.platforms.Host:
    /healthz, pages) beside Slack's, or Socket Mode. Slack out of reach at start-up is one
    ConfigError line naming the setting, not a traceback from deep in a library."""
    from adapters.slack.server import SlackServer
    from adapters.wsgi import os_reason
    from bot.ops.settings import ConfigError

    try:
        return SlackServer(services, settings, extra=host.routes(), address=host.address)
    except OSError as problem:  # the token check (auth.test) found no Slack: URLError is an OSError
        raise ConfigError(f"{unreachable(settings)} ({os_reason(problem)})") from None


def unreachable(settings: SlackSettings) -> str:
    """Slack out of reach, named by what the operator set: SLACK_API_URL only when they
    set it (a proxy, the tests' fake), else Slack's own address and the token checked."""
    checked = "SLACK_BOT_TOKEN" if settings.bot_token else "SLACK_CLIENT_ID"
    if "api_url" in settings.model_fields_set:
        return f"Slack's API at {settings.api_url} (SLACK_API_URL) did not answer when checking {checked}"
    return f"Slack's API at {settings.api_url} ({checked} set) did not answer"


def deliver(services: Services, settings: SlackSettings) -> SlackDelivery:
    """Posts need only a bot token, so a scheduler posts to Slack from any process."""
    from adapters.slack.delivery import SlackDelivery, bot_clients

    return SlackDelivery(bot_clients(services, settings))


def add_commands(actions: argparse._SubParsersAction) -> None:
    q = actions.add_parser("manifest", help="print the Slack app manifest for this deployment")
    where = q.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="HTTP: the public base URL, e.g. https://paperclub.example.org")
    where.add_argument("--socket-mode", action="store_true",
                       help="Socket Mode: no public URL (then set SLACK_APP_TOKEN, an app-level token)")
    q.set_defaults(func=cmd_manifest)


def cmd_manifest(args: argparse.Namespace) -> int:
    from adapters.slack.config import manifest, socket_mode_manifest

    print(socket_mode_manifest() if args.socket_mode else manifest(args.url))
    return 0

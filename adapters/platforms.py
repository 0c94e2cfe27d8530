"""The platforms paperclub speaks, in one list: `paperclub serve`, `config check` and the
command line loop over PLATFORMS, so a new platform is an adapter folder plus one entry here.

An entry says where its parts are and loads them only when they are used: the command line
builds its parser from this list on every run (`paperclub --version` included), and
importing slack_bolt or discord.py there would make every command slower.

The contract, from the platform's side:

- its settings: an EnvSettings subclass (bot/ops/settings.py) with `describe()`,
  `mentioned(env)` and `UNSET`; its secrets are SecretStr fields, which is all it takes
  for `config check` to mask them and the logs to redact them (`secret_variables`), and
  its variables must be documented in docs/configuration.md (tests/test_docs.py reads
  them from here);
- `serve(services, settings, host) -> Served`: its app in `paperclub serve`, given the
  serving process as a `Host`;
- in its app, each request becomes an `Incoming` for `services.core`, routed first by
  `core.route(text)` (answer privately? later? look up the member's rights?), and the
  core's `Reply` goes out through adapters/replies.py with a `Sender` it writes: that
  module keeps a post's reference, takes back a post that failed, redraws a voted post
  and runs answers after the ack;
- optionally `deliver(services, settings) -> Deliver` (the scheduler posts from a process
  that does not serve it) and `commands` (`paperclub NAME ACTION`).
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from adapters.discord import platform as discord_platform
from adapters.slack import platform as slack_platform

if TYPE_CHECKING:
    from bot.app import Services
    from bot.messages import Deliver
    from bot.ops.settings import EnvSettings


class Host(Protocol):
    """What `paperclub serve` gives a platform's app (adapters.runtime.Process): where to
    listen, the process's own routes to answer beside its own when it answers on $PORT
    (`Platform.answers_port`), and the way to stop everything when it cannot go on."""

    stop: threading.Event  # set when the process shuts down
    address: str  # what an app answering on $PORT listens on (PAPERCLUB_HOST, serve --host)

    def routes(self) -> dict:
        """/healthz and the channels' pages, for an app that answers on $PORT."""

    def request_stop(self, problem: str | None = None) -> None:
        """End the whole process; `problem` (one line) makes it exit 1."""


class Served(Protocol):
    """A platform's app running in `paperclub serve`: built by `Platform.serve`, started
    once the process is ready, stopped in two steps when it shuts down (SIGTERM)."""

    delivery: Deliver  # how the scheduler posts through it: the message's reference, or DeliveryRefused

    def start(self) -> None:
        """Start taking requests (in threads of its own: `start` returns). A setting
        that cannot work (a port taken, a token refused) is a ConfigError naming it."""

    def stop_accepting(self) -> None:
        """The first step of a shutdown: take no new requests."""

    def stop(self, timeout: float) -> None:
        """Let the answers in flight finish, up to `timeout` seconds."""


@dataclass(frozen=True)
class Platform:
    """One platform. The console needs only a name and a delivery; a chat platform
    (one with `serve`) also has its settings, and may add commands of its own."""

    name: str  # as channel refs, logs and `paperclub serve NAME` spell it
    title: str  # as `config check` and the start-up log show it
    # Its settings class (an EnvSettings with describe(), mentioned(env) and UNSET, what
    # `config check` shows for a variable not set), imported when first asked for.
    settings: Callable[[], type[EnvSettings]] | None = None
    needs: str = ""  # `config check`, when none of its variables is set: what to set
    serve: Callable[[Services, Any, Host], Served] | None = None
    # How a scheduler posts there from a process that does not serve it (None: only the
    # process that serves it can: Discord posts through its gateway client).
    deliver: Callable[[Services, Any], Deliver] | None = None
    answers_port: bool = False  # its app answers on $PORT, /healthz and the pages beside its own
    commands: Callable[[argparse._SubParsersAction], None] | None = None  # `paperclub NAME ACTION`
    help: str = ""  # `paperclub NAME` in `paperclub --help`
    # The top-level modules of its library (slack_bolt, discord): only its adapter imports
    # them, and only when used (tests/test_layout.py and tests/cli/test_startup.py check).
    libraries: tuple[str, ...] = ()

    def __post_init__(self):
        if self.serve is not None and self.settings is None:
            raise ValueError(f"platform {self.name!r}: a platform that is served reads settings")


def _console_delivery(services: Services, settings: None) -> Deliver:
    import sys

    from adapters.console import ConsoleDelivery

    return ConsoleDelivery(sys.stdout)


CONSOLE = Platform("console", "console", deliver=_console_delivery)

PLATFORMS: tuple[Platform, ...] = (
    CONSOLE,
    Platform("slack", "Slack", slack_platform.settings,
             needs="set SLACK_BOT_TOKEN with SLACK_SIGNING_SECRET (HTTP) or with SLACK_APP_TOKEN "
                   "(Socket Mode) to run it", serve=slack_platform.serve,
             deliver=slack_platform.deliver, answers_port=True, commands=slack_platform.add_commands,
             help="Slack app helpers", libraries=("slack_bolt", "slack_sdk")),
    Platform("discord", "Discord", discord_platform.settings, needs="set DISCORD_TOKEN to run it",
             serve=discord_platform.serve, commands=discord_platform.add_commands, help="Discord app helpers",
             libraries=("discord",)),
)


def chat_platforms() -> tuple[Platform, ...]:
    """The platforms `paperclub serve` can run, configured from the environment."""
    return tuple(p for p in PLATFORMS if p.serve is not None)


def secret_variables() -> frozenset[str]:
    """Every secret variable: the SecretStr fields of the global settings, of each
    feature's (bot.app.settings_models) and of each chat platform's, so a new feature's
    or platform's secret is masked and redacted without being listed anywhere else."""
    from bot.app import settings_models
    from bot.ops.settings import secret_fields

    models = [*settings_models(), *(p.settings() for p in chat_platforms() if p.settings)]
    return frozenset().union(*(secret_fields(model) for model in models))


def variables() -> list[str]:
    """Every chat platform's environment variables, in the registry's order (PORT, which
    several may read, once): what `config check` shows and docs/configuration.md documents."""
    return list(dict.fromkeys(v for p in chat_platforms() if p.settings for v in p.settings().variables()))


def titles(names: Sequence[str]) -> list[str]:
    """The titles of the platforms named, in the order given."""
    by_name: Mapping[str, Platform] = {p.name: p for p in PLATFORMS}
    return [by_name[name].title if name in by_name else name for name in names]


def either(words: Sequence[str]) -> str:
    """"slack or discord", "a, b or c": the choices in an error message."""
    return _listed(words, "or")


def any_of(words: Sequence[str]) -> str:
    """"slack and/or discord": the choices in a help text."""
    return _listed(words, "and/or")


def _listed(words: Sequence[str], last: str) -> str:
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"

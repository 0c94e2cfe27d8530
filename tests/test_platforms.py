"""The platform registry is the one list: a platform added to adapters.platforms.PLATFORMS
(here a toy one, patched in) is checked by `config check`, offered by `serve`, served by
the runtime and given its own commands, with no other edit."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from pydantic import Field, SecretStr

from adapters import platforms, runtime
from adapters.cli.main import build_parser, main
from adapters.config_check import check, startup_settings
from adapters.platforms import Platform, secret_variables
from bot.app import build_services
from bot.ops.logs import secrets_in
from bot.ops.settings import ConfigError, EnvSettings, environment, is_set
from tests.conftest import REPO
from tests.test_docs import code_sources, configuration_page, undocumented

TOKEN = "toy-secret-4242"


class ToySettings(EnvSettings):
    toy_token: SecretStr = Field(validation_alias="TOY_TOKEN")
    toy_room: str | None = Field(None, validation_alias="TOY_ROOM")

    UNSET: ClassVar[dict[str, str]] = {"TOY_ROOM": "the lobby"}
    MISSING: ClassVar[dict[str, str]] = {"TOY_TOKEN": "TOY_TOKEN is not set: set it to the toy's token"}

    def describe(self) -> str:
        return f"configured (room {self.toy_room or 'lobby'})"

    @classmethod
    def mentioned(cls, env=None) -> bool:
        return any(is_set(environment(env), name) for name in cls.variables())


@dataclass
class ToyApp:
    """Stops the whole process as soon as it starts, and remembers what was asked of it."""

    host: Any
    events: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.events.append("start")
        self.host.request_stop()

    def stop_accepting(self) -> None:
        self.events.append("stop_accepting")

    def stop(self, timeout: float) -> None:
        self.events.append("stop")

    def delivery(self, channel, reply) -> str:
        return "toy-message-1"


@pytest.fixture
def toy(monkeypatch):
    apps: list[ToyApp] = []

    def serve(services, settings, host) -> ToyApp:
        apps.append(ToyApp(host))
        return apps[-1]

    def add_commands(actions: argparse._SubParsersAction) -> None:
        actions.add_parser("wave", help="wave at the toy").set_defaults(func=lambda args: 0)

    platform = Platform("toy", "Toy", lambda: ToySettings, needs="set TOY_TOKEN to run it", serve=serve,
                        commands=add_commands, help="Toy app helpers")
    monkeypatch.setattr(platforms, "PLATFORMS", (*platforms.PLATFORMS, platform))
    return apps


def test_config_check_reports_a_new_platform_and_masks_its_token(toy):
    text, code = check({"TOY_TOKEN": TOKEN, "TOY_ROOM": "attic"})
    assert code == 0, text
    assert "Toy: configured (room attic)" in text and "Ready to serve: Toy" in text
    assert f"TOY_TOKEN{' ' * 21}set ({len(TOKEN)} chars)" in text and TOKEN not in text
    text, code = check({})
    assert "Toy: not configured (set TOY_TOKEN to run it)" in text
    assert "TOY_ROOM                      (not set: the lobby)" in text
    titles = [p.title for p in platforms.chat_platforms()]  # the registry's, the toy last
    assert titles[-1] == "Toy" and f"Neither {' nor '.join(titles)} is configured" in text and code == 0


def test_config_check_and_startup_name_what_a_half_configured_platform_lacks(toy):
    text, code = check({"TOY_ROOM": "attic"})
    assert code == 1 and "Toy: not usable (see problems)" in text
    assert "  TOY_TOKEN is not set: set it to the toy's token" in text.split("Problems (1):")[1]
    with pytest.raises(ConfigError, match="TOY_TOKEN is not set"):
        startup_settings({}, ["toy"])
    assert startup_settings({"TOY_TOKEN": TOKEN}, []).platforms["toy"].toy_token.get_secret_value() == TOKEN


def test_a_new_platforms_secret_is_redacted_from_the_logs_and_its_variables_must_be_documented(toy):
    """Its settings say which variables are secret (SecretStr) and which it reads: the log
    scrubbing and the docs test (tests/test_docs.py) learn both from the registry."""
    assert "TOY_TOKEN" in secret_variables() and "TOY_ROOM" not in secret_variables()
    assert secrets_in({"TOY_TOKEN": TOKEN, "TOY_ROOM": "attic"}, secret_variables()) == [TOKEN]
    assert {"SLACK_BOT_TOKEN", "SLACK_CLIENT_SECRET", "DISCORD_TOKEN"} <= secret_variables()  # theirs too
    written = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    # The page as written does not name them (nor need it name a new feature's own variables,
    # which the manual as built lists too: whatever else it lacks is that)...
    assert {"TOY_ROOM", "TOY_TOKEN"} <= set(undocumented(code_sources(), written))
    # ... and the manual as built lists them from the toy's settings, with no edit to the page.
    assert undocumented(code_sources(), configuration_page()) == []
    assert "| `TOY_ROOM` | Toy | the lobby |" in configuration_page()


def test_serve_offers_a_new_platform_and_it_gets_its_commands(toy, capsys):
    assert build_parser().parse_args(["serve", "toy", "slack"]).platforms == ["toy", "slack"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "bogus"])
    names = [p.name for p in platforms.chat_platforms()]
    assert f"'bogus' is not a platform: {', '.join(names[:-1])} or toy" in capsys.readouterr().err
    assert main(["toy", "wave"]) == 0


def test_serve_runs_a_new_platform_and_posts_through_it(toy, tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "_install_signals", lambda process: None)  # pytest keeps its own
    services = build_services(f"sqlite:///{tmp_path / 'toy.db'}")
    assert runtime.serve(services, ["toy"], scheduler=False, env={"TOY_TOKEN": TOKEN}) == 0
    [app] = toy
    assert app.events == ["start", "stop_accepting", "stop"]
    assert app.host.apps == {"toy": app} and app.host.deliveries == {"toy": app.delivery}


def test_without_a_chat_platform_the_scheduler_posts_console_channels(tmp_path):
    services = build_services(f"sqlite:///{tmp_path / 'console.db'}")
    process = runtime.Process(services, scheduler_on=True)
    runtime._build(process, [], {p.name: None for p in platforms.chat_platforms()}, {})
    assert list(process.deliveries) == ["console"] and process.apps == {} and process.health is None
    services.db.dispose()

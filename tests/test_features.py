"""A feature plugs in through the list of features alone: its command answers on the
console, `help` lists it, `settings` shows its line, the tick runs its step and reports
its counts, its buttons are accepted and nobody else's are; the core stays dispatch."""

from __future__ import annotations

import io
import logging
from datetime import datetime, timezone

import pytest

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.channels.channels import ChannelSettings
from bot.core import PaperClub
from bot.feature import Feature, TickReport
from bot.grammar import Command, Param, UsageError
from bot.messages import ChannelRef, Incoming, Reply, UserRef
from bot.scheduler import tick_job
from tests.conftest import REPO

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)


class Echo(Feature):
    """A toy: `echo WORDS` answers them back, each tick posts one line per channel asked."""

    name = "echo"

    def __init__(self):
        self.asked: list[ChannelRef] = []

    def commands(self) -> list[Command]:
        return [Command("echo", "echo WORDS", "Say the words back.", "echo hello", self.echo)]

    def echo(self, incoming: Incoming, args: str) -> Reply:
        if not args:
            raise UsageError("Say something to echo.")
        self.asked.append(incoming.channel)
        return Reply(text=f"echo: {args}")

    def tick(self, now, deliver, platforms, stopping) -> dict[str, int]:
        sent = [deliver(ref, Reply(text=f"echo tick {now:%H:%M}")) for ref in self.asked if ref.platform in platforms]
        self.asked.clear()
        return {"echoed": len(sent)}

    def settings(self, channel: ChannelSettings) -> list[str]:
        return [f"Echo: on in {channel.ref.channel}"]

    def button(self, value: str) -> str | None:
        return value if value.startswith("echo ") else None


def _with_echo(tmp_path) -> tuple[PaperClub, Echo]:
    services = build_services(f"sqlite:///{tmp_path / 'echo.db'}", clock=lambda: NOW)
    echo = Echo()
    services.features.append(echo)  # the one line a new feature adds to bot/app.py
    return PaperClub(services.features, services.channels, services.core.clock), echo


def test_a_new_feature_answers_on_the_console_and_in_help_and_settings(tmp_path):
    core, _echo = _with_echo(tmp_path)
    out = io.StringIO()
    errors = ConsoleSession(core, channel="c1", user="u1").run(
        io.StringIO("echo hello there\necho\nhelp echo\nhelp\nsettings\n"), out)
    text = out.getvalue()
    assert "echo: hello there" in text
    assert "Say something to echo.\nUsage: echo WORDS" in text  # the core's usage rule, for free
    assert "Example: echo hello" in text
    assert "  echo WORDS" in text and "search QUERY" in text  # listed beside the built-in ones
    assert "Echo: on in c1" in text and "No schedule yet" in text  # after the built-in lines
    assert errors == 1


def test_a_new_features_tick_step_runs_and_reports_its_counts(tmp_path, caplog):
    core, _echo = _with_echo(tmp_path)
    channel = ChannelRef("console", "local", "c1")
    assert core.handle(Incoming(channel, UserRef("console", "u1"), "echo hi")).ok
    delivered: list[tuple[ChannelRef, Reply]] = []
    report = core.tick(NOW, lambda ref, reply: delivered.append((ref, reply)) or "ref", ["console"])
    assert isinstance(report, TickReport)
    assert report.counts["echo"] == {"echoed": 1} and report["echoed"] == 1
    assert [(ref, reply.text) for ref, reply in delivered] == [(channel, "echo tick 09:00")]
    assert "daily" in report.counts and report["posted"] == 0  # the built-in steps ran too
    with caplog.at_level(logging.INFO, logger="bot.scheduler"):
        core.handle(Incoming(channel, UserRef("console", "u1"), "echo again"))
        tick_job(core, lambda: NOW, lambda ref, reply: "ref", ["console"])()
    assert any(r.getMessage().startswith("tick ") and "echoed=1" in r.getMessage() for r in caplog.records)


def test_only_buttons_a_feature_drew_are_clicked(tmp_path):
    core, _echo = _with_echo(tmp_path)
    member = UserRef("console", "u1")
    clicked = core.click(Incoming(ChannelRef("console", "local", "c1"), member, "echo from a button"))
    assert clicked.text == "echo: from a button"
    refused = core.click(Incoming(ChannelRef("console", "local", "c1"), member, "schedule off"))
    assert not refused.ok and "not one of paperclub's" in refused.text


def test_the_core_is_dispatch_only():
    source = (REPO / "bot" / "core.py").read_text(encoding="utf-8")
    assert len(source.splitlines()) < 200
    for feature_package in ("daily", "votes", "meetings", "adding", "memory", "lookup"):
        assert f"bot.{feature_package}" not in source, f"core.py names the {feature_package} feature"


def test_a_commands_form_that_does_not_fit_its_params_fails_when_the_feature_is_built():
    """A form's template (Command.written) naming a param that does not exist, or leaving
    one out, would write lines the core never expects: it fails at once, not in use."""
    def echo(*, params=(Param("words", "what to echo"),), written="", group=""):
        return Command("echo", "echo WORDS", "Say the words back.", "echo hi", Echo().echo, params=params,
                       written=written, group=group)

    assert echo(written="[loudly {words}]").write({"words": "hi there"}) == "echo loudly hi there"
    assert echo().write({"words": ""}) == "echo"
    for written in ("{word}", "{words} {words}", "loud"):
        with pytest.raises(ValueError, match="command 'echo': `written` must name each param once"):
            echo(written=written)
    with pytest.raises(ValueError, match="must name each param once"):
        echo(params=(Param("words", "w"), Param("words", "again")), written="{words}")
    with pytest.raises(ValueError, match="group 'settings' is not one of"):
        echo(group="settings")
    with pytest.raises(ValueError, match="param 'when': kind 'date' is not text, number, flag or member"):
        Param("when", "a date", kind="date")

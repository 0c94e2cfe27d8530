"""A feature is a package named in bot/app.py's FEATURES: its plugin brings its commands,
its table, its setting, its page, its subcommand and its digest section, with no edit
elsewhere. The toy feature in tests/toy_feature is listed beside the built-in ones."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pytest

from adapters.cli.main import build_parser
from adapters.console import ConsoleSession
from adapters.runtime import Process
from bot.app import FEATURES, build_services, plugins, schema, settings_models
from tests.clock import Clock
from tests.toy_feature.feature import Quote, QuoteSettings

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)
LISTED = (*FEATURES, "tests.toy_feature")


@pytest.fixture
def clock():
    return Clock(NOW)


@pytest.fixture
def services(tmp_path, clock):
    services = build_services(f"sqlite:///{tmp_path / 'toy.db'}", clock=clock, features=LISTED, env={})
    Quote.__table__.create(services.db.engine)  # a real feature's migration makes it
    yield services
    services.db.dispose()


def get(services, path: str) -> tuple[str, bytes]:
    """A GET on `paperclub serve`'s routes, as the health server dispatches it."""
    routes = Process(services, scheduler_on=False).routes()
    prefix = next(p for p in routes if path.startswith(p) and p.endswith("/"))
    said: list[str] = []
    body = b"".join(routes[prefix]({"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": ""},
                                   lambda status, _headers: said.append(status)))
    return said[0], body


def test_the_toy_features_command_setting_and_digest_section_answer(services, clock):
    manager = ConsoleSession(services.core, channel="c1", user="ann", manager=True)
    assert manager.send("quote attention is all you need").text == "Kept: attention is all you need"
    clock.now += timedelta(hours=1)
    assert "  quote [TEXT]" in manager.send("help").text  # listed after the built-in commands
    assert "Quotes: 1 kept" in manager.send("settings").text
    assert "== Quotes of the week\n  attention is all you need" in _text(manager, "digest preview")
    assert services.feature("toy_feature").settings_model is QuoteSettings


def test_the_toy_features_setting_is_read_from_the_environment(tmp_path):
    services = build_services(f"sqlite:///{tmp_path / 'short.db'}", features=LISTED,
                              env={"PAPERCLUB_TOY_QUOTE_CHARS": "5"})
    Quote.__table__.create(services.db.engine)
    reply = ConsoleSession(services.core, channel="c1").send("quote too long for five")
    assert not reply.ok and "at most 5 characters" in reply.text
    assert QuoteSettings in settings_models(LISTED) and QuoteSettings not in settings_models()


def test_the_toy_features_page_is_served_and_its_table_is_in_the_schema(services):
    ConsoleSession(services.core, channel="c1", user="ann").send("quote a line worth keeping")
    assert get(services, "/quotes/ann") == ("200 OK", b"a line worth keeping")
    assert get(services, "/quotes/nobody")[0].startswith("404")
    assert "toy_quotes" in schema(LISTED).tables and "toy_quotes" not in schema().tables


def test_the_toy_features_subcommand_is_on_the_command_line(capsys):
    args = build_parser(LISTED).parse_args(["quotes", "c1"])
    assert args.func(args) == 0 and capsys.readouterr().out == "quotes of c1\n"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["quotes", "c1"])  # not listed, not there


def test_a_package_without_its_plugin_is_refused():
    with pytest.raises(TypeError, match="must define PLUGIN"):
        plugins(["tests.clock"])
    assert [p.name for p in plugins()] == list(FEATURES)


def _text(session: ConsoleSession, line: str) -> str:
    out = io.StringIO()
    session.run([line], out)
    return out.getvalue()



"""Slack over Socket Mode against a fake Socket Mode server speaking Slack's websocket
frames: hello, envelopes acknowledged by envelope id, a refresh, a dropped link, a
second process with the same app token."""

from __future__ import annotations

import json
import logging
import os
import shutil
from urllib.parse import parse_qsl

import pytest
from sqlalchemy.engine import make_url

from adapters.fakes.slack_api import (
    BOT_TOKEN,
    FakeSlack,
    event_callback,
    reaction_event,
    slash_command,
)
from adapters.slack.config import SlackSettings
from adapters.slack.server import SlackServer
from adapters.slack.socket_mode import STALE_AFTER
from bot.app import build_services
from tests.slack.fake_socket_mode import FakeSocketMode

APP_TOKEN = "xapp-1-A0PAPERCLUB-1-not-a-real-one"
FAST_PING = 0.2  # the client's check of its link, so a dropped one is noticed in a test's time
# slack_sdk calls a link dead after four pings without a pong: at FAST_PING that is 0.8 s, which
# a loaded machine can miss, and the client then opens a link of its own. Tests that count
# links check them this rarely (no check runs within a test's time); only the test of a
# dropped link needs the fast check, and it counts relatively.
SLOW_PING = 600.0


@pytest.fixture
def linked(seeded_copy):
    """(fake Slack, fake Socket Mode server, services): apps.connections.open points at the fake."""
    services = build_services(seeded_copy)
    # As `serve` does before it connects: a first search that loads the index and the model
    # inside a command's 3-second ack is a timing a loaded machine can miss.
    services.search.warm()
    with FakeSocketMode() as socket_mode, FakeSlack(socket_url=socket_mode.url) as slack:
        yield slack, socket_mode, services
    services.db.dispose()


def _server(services, slack, ping: float = SLOW_PING) -> SlackServer:
    settings = SlackSettings.from_env({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
                                       "SLACK_API_URL": slack.api_url})
    return SlackServer(services, settings, ping_interval=ping, renew_seconds=FAST_PING)


def _command(socket_mode: FakeSocketMode, slack: FakeSlack, text: str) -> dict:
    payload = dict(parse_qsl(slash_command(text, slack.response_url())))  # as Socket Mode carries it
    ack = socket_mode.ack(socket_mode.send("slash_commands", payload))
    assert ack is not None, "the command was never acknowledged"
    return ack


def test_a_slash_command_over_the_websocket_is_answered_in_its_ack(linked):
    slack, socket_mode, services = linked
    server = _server(services, slack)
    server.start()
    try:
        assert socket_mode.wait_until(lambda: socket_mode.open_connections == 1)
        ack = _command(socket_mode, slack, "search graph biconnectivity")
        card = ack["payload"]["blocks"][1]["text"]["text"]
        assert card.startswith("*Rethinking the Expressive Power of GNNs via Graph Biconnectivity*")
        # An event is acknowledged by its envelope id too (events carry no answer).
        event = json.loads(event_callback(reaction_event("+1", "1700000000.000001")))
        envelope = socket_mode.send("events_api", event)
        assert socket_mode.ack(envelope) == {"envelope_id": envelope}
        assert server.health() == {"mode": "socket", "ok": True, "status": "connected", "connections": 1,
                                   "hellos": 1}
        assert [c.token for c in slack.calls_to("apps.connections.open")] == [APP_TOKEN]
    finally:
        server.stop(1.0)
    assert socket_mode.wait_until(lambda: socket_mode.open_connections == 0)


def test_a_refresh_and_a_dropped_link_both_reconnect(linked):
    slack, socket_mode, services = linked
    server = _server(services, slack, ping=FAST_PING)  # a dropped link is noticed by the client's check
    server.start()
    try:
        assert socket_mode.wait_until(lambda: socket_mode.open_connections == 1)
        # Counted from what was opened before each: the fast check may reconnect a link on
        # a loaded machine by itself, and that is the client doing its job too.
        before = socket_mode.opened
        socket_mode.disconnect("refresh_requested")  # Slack's routine refresh
        assert socket_mode.wait_until(lambda: socket_mode.opened > before and socket_mode.open_connections == 1)
        before = socket_mode.opened
        socket_mode.drop()  # Slack's server went away without a word
        assert socket_mode.wait_until(lambda: socket_mode.opened > before and socket_mode.open_connections == 1)
        assert _command(socket_mode, slack, "search graph biconnectivity")["payload"]["blocks"]
        # Each new link came from a fresh URL, as Slack wants.
        assert socket_mode.wait_until(lambda: len(slack.calls_to("apps.connections.open")) == socket_mode.opened)
        assert server.health()["status"] == "connected"
    finally:
        server.stop(1.0)


def test_two_processes_on_one_database_take_turns_holding_the_link(linked):
    slack, socket_mode, services = linked
    first, second = _server(services, slack), _server(services, slack)
    first.start()
    try:
        assert socket_mode.wait_until(lambda: socket_mode.open_connections == 1)
        second.start()
        assert second.health()["status"] == "standby" and second.health()["ok"]
        assert second.health()["holder"]["pid"] == os.getpid()
        first.stop(1.0)  # a deploy: the lease is let go, the one waiting takes over
        assert socket_mode.wait_until(lambda: socket_mode.opened == 2 and socket_mode.open_connections == 1
                                      and second.health()["status"] == "connected")
        assert _command(socket_mode, slack, "search graph biconnectivity")["payload"]["blocks"]
        # Never two links at once, so no command went to a process that was leaving.
        assert len(slack.calls_to("apps.connections.open")) == 2
    finally:
        second.stop(1.0)
        first.stop(1.0)


def test_a_process_outside_the_lease_is_named_in_a_warning(linked, seeded_copy, tmp_path, caplog):
    """Another database, the same app token (a laptop against production's app): Slack's
    hello counts both links, and the second process says so."""
    slack, socket_mode, services = linked
    elsewhere = tmp_path / "elsewhere.db"
    shutil.copyfile(make_url(seeded_copy).database, elsewhere)
    other = build_services(f"sqlite:///{elsewhere}")
    first, second = _server(services, slack), _server(other, slack)
    first.start()
    try:
        assert socket_mode.wait_until(lambda: socket_mode.open_connections == 1)
        with caplog.at_level(logging.INFO, logger="adapters.slack.socket_mode"):
            second.start()
            assert socket_mode.wait_until(lambda: second.health()["hellos"] == 1)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings == [("Slack counts 2 Socket Mode connections for this app: another process with this "
                             "SLACK_APP_TOKEN gets some of the commands; run one (docs/deploying.md)")]
    finally:
        second.stop(1.0)
        first.stop(1.0)
        other.db.dispose()


def test_a_refused_app_token_stops_start_up_with_what_to_fix(linked):
    slack, _socket_mode, services = linked
    settings = SlackSettings.from_env({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
                                       "SLACK_API_URL": slack.api_url})
    slack.failing["apps.connections.open"] = "invalid_auth"
    server = SlackServer(services, settings)
    from bot.ops.settings import ConfigError

    with pytest.raises(ConfigError, match="SLACK_APP_TOKEN must be an app-level token with connections:write"):
        server.start()
    server.stop(1.0)


def test_serve_over_socket_mode_answers_and_reports_its_link_on_healthz(linked, seeded_copy, tmp_path):
    """`paperclub serve slack` as docs/deploying.md runs it with no public URL: commands over the
    websocket, /healthz on $PORT with the link's state, SIGTERM lets the lease go."""
    from bot.ops.leases import Lease
    from tests.processes import ServeProcess, free_port, get_json

    slack, socket_mode, services = linked
    port = free_port()
    env = {"PAPERCLUB_DATABASE_URL": seeded_copy, "PORT": str(port), "SLACK_BOT_TOKEN": BOT_TOKEN,
           "SLACK_APP_TOKEN": APP_TOKEN, "SLACK_API_URL": slack.api_url}
    server = ServeProcess(["slack", "--no-scheduler"], env, tmp_path / "serve.log").start()
    try:
        assert socket_mode.wait_until(lambda: socket_mode.open_connections == 1, 60), server.log()
        card = _command(socket_mode, slack, "search graph biconnectivity")["payload"]["blocks"][1]["text"]["text"]
        assert card.startswith("*Rethinking the Expressive Power of GNNs via Graph Biconnectivity*")
        server.wait_until_listening(port)
        code, health = get_json(f"http://127.0.0.1:{port}/healthz")
        assert code == 200 and health["slack"]["status"] == "connected", health
        assert server.terminate() == 0, server.log()
    finally:
        server.kill()
    log = server.log()
    assert "Slack over Socket Mode: connected (first link)" in log and "Traceback" not in log, log
    assert Lease(services.db, "slack-socket-mode", STALE_AFTER).holder() is None  # let go at the stop


def test_socket_mode_with_oauth_is_refused_with_what_to_set_instead():
    from bot.ops.settings import ConfigError

    with pytest.raises(ConfigError) as refused:
        SlackSettings.from_env({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c", "SLACK_APP_TOKEN": APP_TOKEN})
    assert str(refused.value).splitlines() == [
        ("SLACK_APP_TOKEN (Socket Mode) serves one workspace: set SLACK_BOT_TOKEN instead of SLACK_CLIENT_ID and "
         "SLACK_CLIENT_SECRET, or leave SLACK_APP_TOKEN out to install in many workspaces over HTTP")]


def test_the_socket_mode_manifest_turns_it_on_and_names_no_url(capsys):
    from adapters.cli.main import main
    from adapters.slack.config import manifest_data

    assert main(["slack", "manifest", "--socket-mode"]) == 0
    text = capsys.readouterr().out
    data = json.loads(text)
    assert data["settings"]["socket_mode_enabled"] is True
    assert "https://" not in text.replace("https://api.slack.com", "")  # no request URL, no redirect
    http = manifest_data()
    assert data["oauth_config"]["scopes"] == http["oauth_config"]["scopes"]
    assert data["settings"]["event_subscriptions"]["bot_events"] == http["settings"]["event_subscriptions"][
        "bot_events"]
    assert [c["command"] for c in data["features"]["slash_commands"]] == ["/paper"]

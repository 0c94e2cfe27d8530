"""`paperclub serve slack` and `paperclub slack manifest` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from adapters.bench.slack import post_signed, seeded_slack
from adapters.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    signed_headers,
    slash_command,
)
from adapters.slack.app import SlackServer
from adapters.slack.config import EVENTS_PATH, SlackSettings, manifest, manifest_data
from bot.app import build_services, command_grammar
from bot.grammar import split_command
from bot.ops.settings import ConfigError


def test_serve_slack_answers_a_signed_slash_command_over_http(tmp_path):
    with seeded_slack(tmp_path) as (slack, port):
        body = slash_command("search graph biconnectivity", slack.response_url())
        status, answer = post_signed(port, body, signed_headers(body))
        assert status == 200, (tmp_path / "server.log").read_text()
        card = json.loads(answer)["blocks"][1]["text"]["text"]
        assert card.startswith("*Rethinking the Expressive Power of GNNs via Graph Biconnectivity*")
        forged = signed_headers(body, secret="not-the-signing-secret")
        assert post_signed(port, body, forged)[0] == 401
        stale = signed_headers(body, timestamp=int(time.time()) - 360)
        assert post_signed(port, body, stale)[0] == 401
        # A member's search never asks users.info (only lines that may need manager rights do).
        assert [c.method for c in slack.calls] == ["auth.test"]
        # The same signed request again (a replay inside the five minutes): acked, not answered.
        assert post_signed(port, body, signed_headers(body)) == (200, "")

        statuses = [_post_raw(port, junk, headers) for junk, headers in _junk()]
        assert statuses == [401, 401, 401, 401, 401, 401, 400, 400, 400, 400], statuses
    log = (tmp_path / "server.log").read_text()
    assert "Slack over HTTP on port" in log
    # One line per refused request, and never a traceback or a body.
    assert log.count("refused a request to /slack/events") == 2 + len(statuses), log
    assert "Traceback" not in log, log
    assert "1795457321" not in log and "payload=" not in log
    assert log.count("seen before") == 1


def _junk() -> list[tuple[bytes, dict[str, str]]]:
    form = "application/x-www-form-urlencoded"
    junk_headers = {"content-type": form, "x-slack-signature": "v0=" + "0" * 64}
    unsigned = [
        (b"text=\xff", {"content-type": form}),
        (b"text=hello", {**junk_headers, "x-slack-request-timestamp": "abc"}),
        (b"text=hello", {**junk_headers, "x-slack-request-timestamp": "1795457321.774"}),
        (b"{x", {"content-type": "application/json"}),
        (b"payload=[]", {"content-type": form}),
        (b"payload={x", {"content-type": form}),
    ]
    signed = [
        (b"payload=[]", signed_headers(b"payload=[]")),
        (b"payload={x", signed_headers(b"payload={x")),
        (b"text=\xff", signed_headers(b"text=\xff")),
        (b"{x", signed_headers(b"{x", content_type="application/json")),
    ]
    return unsigned + signed


def _post_raw(port: int, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{EVENTS_PATH}", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as refused:
        return refused.code


def test_with_an_app_token_serve_takes_socket_mode(monkeypatch, seeded_copy):
    services = build_services(seeded_copy)
    with FakeSlack() as slack:
        for name in [n for n in os.environ if n.startswith(("SLACK_", "PAPERCLUB_SLACK_"))]:
            monkeypatch.delenv(name)
        for name, value in {
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_APP_TOKEN": "xapp-1-not-a-real-one",
            "SLACK_API_URL": slack.api_url,
        }.items():
            monkeypatch.setenv(name, value)
        # The fake refuses the connection, so start() fails with the reason instead of running.
        server = SlackServer(services, SlackSettings.from_env())
        with pytest.raises(ConfigError, match="Socket Mode could not connect"):
            server.start()
        server.stop(1.0)
        opened = slack.calls_to("apps.connections.open")
        assert len(opened) == 1 and opened[0].token == "xapp-1-not-a-real-one"
    services.db.dispose()


def test_slack_over_http_listens_on_the_address_it_is_given(seeded_copy):
    """PAPERCLUB_HOST / serve --host reach Slack's HTTP server too (it listened on 0.0.0.0 hard-coded)."""
    import socket

    from tests.processes import free_port

    services = build_services(seeded_copy)
    with FakeSlack() as slack:
        settings = SlackSettings.from_env({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                                           "SLACK_API_URL": slack.api_url, "PORT": str(free_port())})
        server = SlackServer(services, settings, address="127.0.0.1")
        server.start()
        try:
            socket.create_connection(("127.0.0.1", settings.port), timeout=5).close()
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.2", settings.port), timeout=5)
        finally:
            server.stop(1.0)
    services.db.dispose()


# --- settings ------------------------------------------------------------------------------------


def test_settings_come_from_the_environment():
    settings = SlackSettings.from_env(
        {
            "SLACK_BOT_TOKEN": "xoxb-1",
            "SLACK_SIGNING_SECRET": "s",
            "PORT": "8080",
            "SLACK_API_URL": "http://127.0.0.1:9/api",
            "PAPERCLUB_SLACK_MANAGERS": "U1, U2,,",
        }
    )
    assert (settings.port, settings.api_url, settings.managers) == (
        8080,
        "http://127.0.0.1:9/api/",
        frozenset({"U1", "U2"}),
    )
    assert not settings.oauth and settings.app_token is None
    oauth = SlackSettings.from_env(
        {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c", "SLACK_SIGNING_SECRET": "s"}
    )
    assert oauth.oauth and oauth.api_url == "https://slack.com/api/" and oauth.port == 3000


@pytest.mark.parametrize(
    "env, named",
    [
        ({"SLACK_SIGNING_SECRET": "s"}, "SLACK_BOT_TOKEN"),
        (
            {
                "SLACK_SIGNING_SECRET": "s",
                "SLACK_BOT_TOKEN": "xoxb-1",
                "SLACK_CLIENT_ID": "1.2",
                "SLACK_CLIENT_SECRET": "c",
            },
            "not both",
        ),
        ({"SLACK_SIGNING_SECRET": "s", "SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_SECRET"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-2"}, "SLACK_APP_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "PORT": "http"}, "PORT"),
        (
            {
                "SLACK_BOT_TOKEN": "xoxb-1",
                "SLACK_SIGNING_SECRET": "s",
                "SLACK_API_URL": "slack.com",
            },
            "SLACK_API_URL",
        ),
    ],
)
def test_unusable_settings_name_the_variable(env, named):
    with pytest.raises(ConfigError, match=named):
        SlackSettings.from_env(env)


def test_serve_without_credentials_says_what_to_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    env["PAPERCLUB_DATABASE_URL"] = f"sqlite:///{tmp_path / 'x.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "serve", "slack"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (
        result.returncode == 1 and "error: Slack credentials: set SLACK_BOT_TOKEN" in result.stderr
    )


# --- the manifest --------------------------------------------------------------------------------


def test_the_manifest_points_every_request_url_at_the_host():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "adapters.cli",
            "slack",
            "manifest",
            "--url",
            "https://papers.example.net/",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    command = data["features"]["slash_commands"][0]
    assert (
        command["command"] == "/paper"
        and command["usage_hint"]
        and command["should_escape"] is True
    )
    assert command["url"] == "https://papers.example.net/slack/events"
    assert data["settings"]["interactivity"] == {
        "is_enabled": True,
        "request_url": "https://papers.example.net/slack/events",
    }
    assert data["oauth_config"]["redirect_urls"] == [
        "https://papers.example.net/slack/oauth_redirect"
    ]
    assert {"commands", "chat:write", "users:read"} <= set(data["oauth_config"]["scopes"]["bot"])
    assert "example.org" not in result.stdout


def test_the_commands_the_slack_app_names_are_the_grammars():
    """The manifest's usage hint shows a few examples: a command renamed or dropped in a
    feature must not linger there. The commands answered after the ack are the grammar's."""
    commands = {c.name for c in command_grammar()}
    hint = manifest_data()["features"]["slash_commands"][0]["usage_hint"]
    assert {split_command(example)[0] for example in hint.split("·")} <= commands, hint
    answered_later = {c.name for c in command_grammar() if c.answered_later}
    assert answered_later == {"next", "poll", "vote", "add", "follow", "zotero"}


@pytest.mark.parametrize(
    "url", ["http://papers.example.net", "papers.example.net", "https://h/x/slack/events"]
)
def test_the_manifest_wants_a_public_https_base_url(url):
    with pytest.raises(ConfigError, match="--url"):
        manifest(url)

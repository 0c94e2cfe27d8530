"""The serving process's logs: one line per event, never a secret or what a member typed."""

from __future__ import annotations

import io
import json
import logging

import pytest

from adapters.platforms import secret_variables
from bot.ops.logs import Redact, configure, event, secrets_in

TOKEN = "xoxb-1111-2222-abcdefghijklmnop"
ENV = {
    "SLACK_BOT_TOKEN": TOKEN,
    "DISCORD_TOKEN": "MTAx.discord-token-value-long",
    "PAPERCLUB_DATABASE_URL": "postgresql://bot:s3cret-passw0rd@db:5432/paperclub",
    "PAPERCLUB_LOG_LEVEL": "INFO",  # not a secret: never redacted
}
# What `paperclub serve` redacts: the core's secrets and every platform's SecretStr settings.
SECRETS = secret_variables()


@pytest.fixture
def captured():
    """`configure` as serve runs it, its handler writing to a buffer."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)

    def run(fmt: str) -> io.StringIO:
        handler = configure("INFO", fmt, ENV, secrets=SECRETS)
        buffer = io.StringIO()
        handler.setStream(buffer)
        return buffer

    yield run
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])


def test_an_event_is_one_line_of_named_fields(captured):
    out = captured("text")
    event(logging.getLogger("bot.core"), "command", channel="slack:T1:C1", command="search", ok=True, ms=12.345)
    line = out.getvalue()
    assert line.count("\n") == 1
    assert line.rstrip().endswith("INFO bot.core: command channel=slack:T1:C1 command=search ok=true ms=12.3")


def test_json_lines_carry_the_fields_as_keys(captured):
    out = captured("json")
    event(logging.getLogger("bot.core"), "command", channel="slack:T1:C1", command="vote", ok=False, ms=3.0)
    record = json.loads(out.getvalue())
    assert (record["event"], record["channel"], record["command"], record["ok"], record["ms"]) == (
        "command", "slack:T1:C1", "vote", False, 3.0)
    assert record["level"] == "INFO" and record["name"] == "bot.core"


def test_secrets_that_reach_a_handler_are_replaced(captured):
    out = captured("text")
    log = logging.getLogger("some.library")
    log.info("retrying with token %s", TOKEN)  # a library echoing its own request
    log.warning("cannot connect to postgresql://bot:s3cret-passw0rd@db:5432/paperclub")
    log.info("discord said: MTAx.discord-token-value-long is invalid")
    text = out.getvalue()
    assert TOKEN not in text and "s3cret-passw0rd" not in text and "discord-token-value" not in text
    assert text.count("***") == 3 and "retrying with token ***" in text


def test_secrets_are_the_token_variables_and_the_database_password():
    assert sorted(secrets_in(ENV, SECRETS)) == sorted([TOKEN, "MTAx.discord-token-value-long", "s3cret-passw0rd"])
    assert secrets_in({"PAPERCLUB_DATABASE_URL": "sqlite:///paperclub.db"}, SECRETS) == []
    assert secrets_in({"DATABASE_URL": "not a url at all"}, SECRETS) == []


def test_the_secrets_are_the_names_given():
    """bot.ops.logs knows no platform: a name it is handed is a secret, one it is not is not."""
    env = {"TOY_TOKEN": "toy-token-value-long", "SLACK_BOT_TOKEN": TOKEN}
    assert secrets_in(env, ["TOY_TOKEN"]) == ["toy-token-value-long"]
    assert secrets_in(env, []) == []


def test_short_values_are_not_redacted_out_of_ordinary_words():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "posted to the channel", None, None)
    Redact(["the"]).filter(record)
    assert record.getMessage() == "posted to the channel"


def test_chatty_libraries_are_quiet_at_info(captured):
    out = captured("text")
    logging.getLogger("apscheduler.executors.default").info('Running job "tick" (scheduled at ...)')
    logging.getLogger("waitress.queue").info("Task queue depth is 1")
    assert out.getvalue() == ""


def test_a_secret_inside_a_traceback_is_replaced_too(captured):
    out = captured("text")
    try:
        raise ConnectionError(f"refused Authorization: Bearer {TOKEN}")
    except ConnectionError:
        logging.getLogger("slack_sdk").exception("request failed")
    text = out.getvalue()
    assert "Traceback" in text and "Bearer ***" in text and TOKEN not in text


def test_expected_library_warnings_are_dropped_and_others_kept(captured):
    import adapters.discord.app  # noqa: F401 - installs its filter
    from adapters.slack.listeners import _bolt_logger

    out = captured("text")
    logging.getLogger("discord.client").warning("PyNaCl is not installed, voice will NOT be supported")
    logging.getLogger("discord.client").warning("Shard ID None heartbeat blocked for more than 10 seconds.")
    _bolt_logger().warning("As you gave `client` as well, `token` will be unused.")
    _bolt_logger().warning("Failed to run a middleware")
    text = out.getvalue()
    assert "PyNaCl" not in text and "will be unused" not in text
    assert "heartbeat blocked" in text and "Failed to run a middleware" in text


def test_a_password_in_the_database_urls_query_string_is_a_secret_too():
    env = {"DATABASE_URL": "postgresql://bot@db/papers?sslmode=require&password=hunter2-but-longer"}
    assert "hunter2-but-longer" in secrets_in(env, SECRETS)

"""Settings from the environment: checked at start-up, one line per problem, secrets never
shown; and the `paperclub config check` report."""

from __future__ import annotations

import re
import socket
from datetime import timedelta

import pytest

from adapters import platforms
from adapters.config_check import check, startup_settings
from adapters.discord.config import DiscordSettings
from adapters.slack.config import SlackSettings
from bot.app import catchup_grace
from bot.ops.settings import (
    ConfigError,
    CoreSettings,
    catchup_from_env,
    database_problem,
    mask_secret,
    mask_url,
)

BOT_TOKEN = "xoxb-test-not-real"
SIGNING_SECRET = "signing-secret-not-real"
CLIENT_SECRET = "client-secret-not-real"
APP_TOKEN = "xapp-test-not-real"
DISCORD_TOKEN = "discord-token-not-real"
DB_PASSWORD = "db-password-not-real"
SECRETS = (BOT_TOKEN, SIGNING_SECRET, CLIENT_SECRET, APP_TOKEN, DISCORD_TOKEN, DB_PASSWORD)

SLACK = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET}


def problems(text: str) -> list[str]:
    """The report's problem lines."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Problems ("))
    return [line.strip() for line in lines[start + 1 :]]


def config_error(settings_cls, env) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        settings_cls.from_env(env)
    return str(raised.value).splitlines()


# --- core settings -------------------------------------------------------------------------------


def test_core_defaults():
    settings = CoreSettings.from_env({})
    assert settings.database_url == "sqlite:///paperclub.db"
    assert settings.catchup == timedelta(hours=3)
    assert (settings.tick_seconds, settings.log_level, settings.log_format) == (60, "INFO", "text")


def test_core_settings_from_the_environment():
    settings = CoreSettings.from_env(
        {
            "DATABASE_URL": "sqlite:////srv/papers.db",
            "PAPERCLUB_CATCHUP": "90m",
            "PAPERCLUB_TICK_SECONDS": "30",
            "PAPERCLUB_LOG_LEVEL": "debug",
            "PAPERCLUB_LOG_FORMAT": "JSON",
        }
    )
    assert settings.database_url == "sqlite:////srv/papers.db"
    assert settings.catchup == timedelta(minutes=90)
    assert (settings.tick_seconds, settings.log_level, settings.log_format) == (30, "DEBUG", "json")
    assert settings.log_level_number == 10


@pytest.mark.parametrize(
    "given, used",
    [
        ("postgres://bob:pw@db.example.org:5432/papers", "postgresql+psycopg://bob:pw@db.example.org:5432/papers"),
        ("postgresql://bob:pw@db/papers", "postgresql+psycopg://bob:pw@db/papers"),
        ("postgresql+psycopg://bob@db/papers", "postgresql+psycopg://bob@db/papers"),
        ("sqlite://", "sqlite://"),
    ],
)
def test_postgres_urls_are_rewritten_for_psycopg(given, used):
    assert CoreSettings.from_env({"DATABASE_URL": given}).database_url == used


def test_paperclub_database_url_wins_and_empty_counts_as_unset():
    both = {"PAPERCLUB_DATABASE_URL": "sqlite:///a.db", "DATABASE_URL": "sqlite:///b.db"}
    assert CoreSettings.from_env(both).database_url == "sqlite:///a.db"
    empty = {"PAPERCLUB_DATABASE_URL": "", "DATABASE_URL": "sqlite:///b.db"}
    assert CoreSettings.from_env(empty).database_url == "sqlite:///b.db"
    blank = {"PAPERCLUB_TICK_SECONDS": "  ", "PAPERCLUB_LOG_LEVEL": "", "DATABASE_URL": ""}
    assert CoreSettings.from_env(blank) == CoreSettings.from_env({})


@pytest.mark.parametrize(
    "url, says",
    [
        ("mysql://x", "is not a SQLite or PostgreSQL URL"),
        ("not a url", "is not a database URL"),
        ("postgresql+psycopg2://bob@db/papers", "psycopg2"),
        ("postgres://bob@db:port/papers", "is not a database URL"),
    ],
)
def test_an_unusable_database_url_names_the_variable(url, says):
    (line,) = config_error(CoreSettings, {"DATABASE_URL": url})
    assert line.startswith("DATABASE_URL: ") and says in line
    (line,) = config_error(CoreSettings, {"PAPERCLUB_DATABASE_URL": url, "DATABASE_URL": "sqlite://"})
    assert line.startswith("PAPERCLUB_DATABASE_URL: ")


@pytest.mark.parametrize(
    "url",
    [
        f"mysql://bob:{DB_PASSWORD}@db.example.org/papers",
        f"postgres://bob:{DB_PASSWORD}@db.example.org:port/papers",  # unparseable
        f"postgres//bob:{DB_PASSWORD}@db.example.org/papers",  # unparseable
    ],
)
def test_the_database_password_is_never_in_a_message(url):
    (line,) = config_error(CoreSettings, {"DATABASE_URL": url})
    assert DB_PASSWORD not in line and "bob" in line and "db.example.org" in line
    assert DB_PASSWORD not in mask_url(url)


def test_the_database_password_is_not_in_the_settings_repr():
    settings = CoreSettings.from_env({"DATABASE_URL": f"postgres://bob:{DB_PASSWORD}@db/papers"})
    assert DB_PASSWORD not in repr(settings) and DB_PASSWORD not in str(settings)
    assert settings.database_shown == "postgresql+psycopg://bob:***@db/papers"


@pytest.mark.parametrize(
    "raw, says",
    [
        ("abc", "'abc' is not a whole number of seconds"),
        ("1.5", "is not a whole number of seconds"),
        ("0", "out of range"),
        ("3601", "out of range"),
    ],
)
def test_tick_seconds(raw, says):
    (line,) = config_error(CoreSettings, {"PAPERCLUB_TICK_SECONDS": raw})
    assert line.startswith("PAPERCLUB_TICK_SECONDS: ") and says in line
    assert CoreSettings.from_env({"PAPERCLUB_TICK_SECONDS": "1"}).tick_seconds == 1
    assert CoreSettings.from_env({"PAPERCLUB_TICK_SECONDS": "3600"}).tick_seconds == 3600


def test_several_problems_give_one_line_each_naming_the_variable():
    lines = config_error(
        CoreSettings,
        {
            "DATABASE_URL": "mysql://x",
            "PAPERCLUB_CATCHUP": "soon",
            "PAPERCLUB_TICK_SECONDS": "abc",
            "PAPERCLUB_LOG_LEVEL": "loud",
            "PAPERCLUB_LOG_FORMAT": "xml",
        },
    )
    assert [line.split(":")[0] for line in lines] == [
        "DATABASE_URL",
        "PAPERCLUB_CATCHUP",
        "PAPERCLUB_TICK_SECONDS",
        "PAPERCLUB_LOG_LEVEL",
        "PAPERCLUB_LOG_FORMAT",
    ]
    assert "PAPERCLUB_TICK_SECONDS: 'abc' is not a whole number of seconds" in lines
    assert "PAPERCLUB_LOG_LEVEL: 'loud' is not a log level: use DEBUG, INFO, WARNING, ERROR" in lines


@pytest.mark.parametrize(
    "raw, grace",
    [
        ("3h", timedelta(hours=3)),
        ("90m", timedelta(minutes=90)),
        ("45s", timedelta(seconds=45)),
        ("2", timedelta(hours=2)),
        ("1.5", timedelta(minutes=90)),
        (" 30M ", timedelta(minutes=30)),
        ("0", timedelta(0)),
    ],
)
def test_catchup_durations(raw, grace):
    env = {"PAPERCLUB_CATCHUP": raw}
    assert catchup_grace(env) == catchup_from_env(env) == CoreSettings.from_env(env).catchup == grace


@pytest.mark.parametrize("raw", ["soon", "3 hours", "-3h", "h", "inf", "1e999h"])
def test_catchup_that_is_not_a_duration(raw):
    with pytest.raises(ConfigError, match=r"^PAPERCLUB_CATCHUP: .* is not a duration|too long"):
        catchup_grace({"PAPERCLUB_CATCHUP": raw})
    (line,) = config_error(CoreSettings, {"PAPERCLUB_CATCHUP": raw})
    assert line.startswith("PAPERCLUB_CATCHUP: ")


def test_catchup_unset_or_empty_is_the_default():
    assert catchup_grace({}) == catchup_grace({"PAPERCLUB_CATCHUP": " "}) == timedelta(hours=3)


def test_settings_read_only_the_mapping_given(monkeypatch):
    monkeypatch.setenv("PAPERCLUB_TICK_SECONDS", "abc")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xoxb-wrong-kind")
    assert CoreSettings.from_env({}).tick_seconds == 60
    assert SlackSettings.from_env(SLACK).app_token is None
    # Built directly (as tests do), settings take only what they are given.
    assert SlackSettings(SIGNING_SECRET, bot_token=BOT_TOKEN).app_token is None
    with pytest.raises(ConfigError, match="PAPERCLUB_TICK_SECONDS"):
        CoreSettings.from_env()  # None: the process environment


# --- Slack ---------------------------------------------------------------------------------------


def test_slack_secrets_are_plain_strings_to_callers_and_hidden_in_reprs():
    settings = SlackSettings.from_env({**SLACK, "SLACK_APP_TOKEN": APP_TOKEN})
    assert (settings.bot_token, settings.signing_secret, settings.app_token) == (
        BOT_TOKEN,
        SIGNING_SECRET,
        APP_TOKEN,
    )
    assert settings.client_secret is None and not settings.oauth
    for secret in (BOT_TOKEN, SIGNING_SECRET, APP_TOKEN):
        assert secret not in repr(settings) and secret not in str(settings)
    oauth = SlackSettings.from_env(
        {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": CLIENT_SECRET, "SLACK_SIGNING_SECRET": "s"}
    )
    assert oauth.oauth and oauth.client_secret == CLIENT_SECRET and oauth.bot_token is None
    assert CLIENT_SECRET not in repr(oauth)


def test_slack_settings_built_directly_like_the_dataclass_was():
    settings = SlackSettings(SIGNING_SECRET, bot_token=BOT_TOKEN, api_url="http://127.0.0.1:9/api")
    assert settings.signing_secret == SIGNING_SECRET and settings.bot_token == BOT_TOKEN
    assert settings.api_url == "http://127.0.0.1:9/api/" and settings.port == 3000
    settings._check()
    socket_mode = SlackSettings(bot_token=BOT_TOKEN, app_token=APP_TOKEN)
    assert socket_mode.signing_secret == "" and socket_mode.app_token == APP_TOKEN
    socket_mode._check()
    with pytest.raises(ConfigError, match="SLACK_CLIENT_SECRET"):
        SlackSettings("s", client_id="1.2")._check()


def test_every_slack_problem_at_once():
    lines = config_error(
        SlackSettings,
        {"SLACK_CLIENT_SECRET": CLIENT_SECRET, "PORT": "http", "SLACK_API_URL": "slack.com"},
    )
    assert lines[0].startswith("Slack credentials: set SLACK_BOT_TOKEN")
    assert any(line.startswith("SLACK_CLIENT_SECRET is set but SLACK_CLIENT_ID is not") for line in lines)
    assert any(line.startswith("SLACK_SIGNING_SECRET is not set") for line in lines)
    assert any(line.startswith("SLACK_API_URL='slack.com'") for line in lines)
    assert any(line.startswith("PORT='http'") for line in lines)
    assert len(lines) == 5


def test_a_wrong_app_token_is_named_but_not_shown():
    secret = "xoxb-secret-not-real"
    lines = config_error(SlackSettings, {**SLACK, "SLACK_APP_TOKEN": secret})
    assert lines == ["SLACK_APP_TOKEN must be an app-level token (xapp-...) with connections:write"]


def test_slack_is_configured_by_any_credential_but_not_by_port():
    assert not SlackSettings.configured({})
    assert not SlackSettings.configured({"PORT": "8080", "SLACK_BOT_TOKEN": " "})
    assert SlackSettings.configured({"SLACK_SIGNING_SECRET": "s"})
    assert SlackSettings.configured({"SLACK_CLIENT_ID": "1.2"})
    assert not SlackSettings.mentioned({"PORT": "8080"})
    assert SlackSettings.mentioned({"SLACK_API_URL": "http://127.0.0.1:9/api/"})


# --- Discord -------------------------------------------------------------------------------------


def test_discord_settings():
    settings = DiscordSettings.from_env({"DISCORD_TOKEN": DISCORD_TOKEN})
    assert settings.token == DISCORD_TOKEN and settings.api_url is None
    assert settings.shard_options() is None
    assert DISCORD_TOKEN not in repr(settings) and DISCORD_TOKEN not in str(settings)
    api = DiscordSettings.from_env({"DISCORD_TOKEN": "t", "DISCORD_API_URL": "http://127.0.0.1:9/api"})
    assert api.api_url == "http://127.0.0.1:9/api"
    assert DiscordSettings.configured({"DISCORD_TOKEN": "t"})
    assert not DiscordSettings.configured({"DISCORD_API_URL": "http://127.0.0.1:9/api"})
    assert DiscordSettings.mentioned({"PAPERCLUB_DISCORD_SHARDS": "2"})


@pytest.mark.parametrize(
    "shards, ids, options",
    [
        ("", "", None),
        ("auto", "", {}),
        ("AUTO", "", {}),
        ("4", "", {"shard_count": 4}),
        ("4", "0-1,3", {"shard_count": 4, "shard_ids": [0, 1, 3]}),
        ("4", "3,1,1", {"shard_count": 4, "shard_ids": [1, 3]}),
    ],
)
def test_discord_shard_options(shards, ids, options):
    env = {"DISCORD_TOKEN": "t", "PAPERCLUB_DISCORD_SHARDS": shards, "PAPERCLUB_DISCORD_SHARD_IDS": ids}
    assert DiscordSettings.from_env(env).shard_options() == options


@pytest.mark.parametrize(
    "shards, ids, message",
    [
        ("many", "", "PAPERCLUB_DISCORD_SHARDS='many': use auto or a number of shards, e.g. 4"),
        ("0", "", "PAPERCLUB_DISCORD_SHARDS='0': use auto or a number of shards, e.g. 4"),
        ("", "0", "PAPERCLUB_DISCORD_SHARD_IDS needs PAPERCLUB_DISCORD_SHARDS set to the total number"),
        ("auto", "0", "PAPERCLUB_DISCORD_SHARD_IDS needs PAPERCLUB_DISCORD_SHARDS set to the total number"),
        ("2", "2", "PAPERCLUB_DISCORD_SHARD_IDS='2': shard ids run from 0 to 1"),
        ("2", "one", "PAPERCLUB_DISCORD_SHARD_IDS='one': use numbers like 0,1 or a range like 0-3"),
    ],
)
def test_discord_shard_problems_keep_their_messages(shards, ids, message):
    env = {"DISCORD_TOKEN": "t", "PAPERCLUB_DISCORD_SHARDS": shards, "PAPERCLUB_DISCORD_SHARD_IDS": ids}
    assert config_error(DiscordSettings, env) == [message]
    # Reported along with a missing token, not hidden behind it.
    del env["DISCORD_TOKEN"]
    lines = config_error(DiscordSettings, env)
    assert message in lines and lines[0].startswith("DISCORD_TOKEN is not set")


def test_discord_problems_name_the_variable():
    lines = config_error(DiscordSettings, {"DISCORD_API_URL": "discord.com"})
    assert lines[0].startswith("DISCORD_TOKEN is not set")
    assert lines[1] == (
        "DISCORD_API_URL: 'discord.com' is not an http(s) URL, e.g. https://discord.com/api/v10"
    )


# --- paperclub config check ----------------------------------------------------------------------


def test_check_with_nothing_set_shows_the_defaults_and_passes():
    text, code = check({})
    assert code == 0
    assert "sqlite:///paperclub.db (the default)" in text
    assert "(not set: 60 seconds)" in text and "(not set: 3h)" in text
    assert "(not set: INFO)" in text and "(not set: text)" in text
    assert "Slack: not configured" in text and "Discord: not configured" in text
    titles = [p.title for p in platforms.chat_platforms()]  # every platform the registry lists
    assert f"Neither {' nor '.join(titles)} is configured" in text
    assert "No problems found." in text
    for group in ("Database", "Scheduler", "Logging"):
        assert f"\n{group}\n" in text


def test_check_everything_configured_shows_no_secret():
    env = {
        **SLACK,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "DATABASE_URL": f"postgres://bob:{DB_PASSWORD}@db.example.org:5432/papers",
        "DISCORD_TOKEN": DISCORD_TOKEN,
        "PAPERCLUB_DISCORD_SHARDS": "2",
        "PAPERCLUB_TICK_SECONDS": "30",
    }
    text, code = check(env)
    assert code == 0, text
    for secret in SECRETS:
        assert secret not in text
    assert "postgresql+psycopg://bob:***@db.example.org:5432/papers" in text
    assert f"xoxb-…({len(BOT_TOKEN)} chars)" in text
    assert f"set ({len(SIGNING_SECRET)} chars)" in text
    assert "Slack: one workspace (bot token), over Socket Mode" in text
    assert "Discord: configured (2 shards)" in text
    assert "Ready to serve: Slack, Discord" in text
    assert "  PAPERCLUB_TICK_SECONDS        30" in text


def test_check_oauth():
    env = {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": CLIENT_SECRET, "SLACK_SIGNING_SECRET": "s"}
    text, code = check(env)
    assert code == 0 and "Slack: OAuth (many workspaces), over HTTP on port 3000" in text
    assert CLIENT_SECRET not in text


@pytest.mark.parametrize("url", ["mysql://x", "not a url"])
def test_check_a_bad_database_url_names_it(url):
    text, code = check({"DATABASE_URL": url})
    assert code == 1
    (line,) = problems(text)
    assert line.startswith("DATABASE_URL: ") and repr(url) in line


def test_check_a_bad_database_url_keeps_its_password_hidden():
    text, code = check({"DATABASE_URL": f"mysql://bob:{DB_PASSWORD}@db/papers"})
    assert code == 1 and DB_PASSWORD not in text and "mysql://bob:***@db/papers" in text


def test_check_a_signing_secret_without_a_token_names_the_token():
    text, code = check({"SLACK_SIGNING_SECRET": SIGNING_SECRET})
    assert code == 1 and "Slack: not usable (see problems)" in text
    (line,) = problems(text)
    assert "SLACK_BOT_TOKEN" in line
    assert SIGNING_SECRET not in text


def test_check_discord_settings_without_a_token_name_the_token():
    text, code = check({"DISCORD_API_URL": "http://127.0.0.1:9/api"})
    assert code == 1
    assert problems(text) == [
        "DISCORD_TOKEN is not set: set it to the bot token (Developer Portal > your app > Bot)"
    ]


def test_check_several_problems_give_several_lines():
    env = {
        "DATABASE_URL": "mysql://x",
        "PAPERCLUB_TICK_SECONDS": "abc",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "DISCORD_API_URL": "discord.com",
        "PAPERCLUB_LOG_FORMAT": "xml",
    }
    text, code = check(env)
    assert code == 1
    lines = problems(text)
    assert f"Problems ({len(lines)}):" in text and len(lines) == 6
    assert [line.split(":")[0].split("=")[0].split(" ")[0] for line in lines] == [
        "DATABASE_URL",
        "PAPERCLUB_TICK_SECONDS",
        "PAPERCLUB_LOG_FORMAT",
        "Slack",  # "Slack credentials: set SLACK_BOT_TOKEN ..."
        "DISCORD_TOKEN",
        "DISCORD_API_URL",
    ]
    assert "SLACK_BOT_TOKEN" in lines[3]


def test_check_ignores_port_alone():
    text, code = check({"PORT": "not-a-port"})
    assert code == 0 and "Slack: not configured" in text


def test_mask_secret():
    assert mask_secret(None) == mask_secret("") == "(not set)"
    assert mask_secret(BOT_TOKEN) == f"xoxb-…({len(BOT_TOKEN)} chars)"
    assert mask_secret("s3cr3t") == "set (6 chars)"


# --- what `paperclub serve` starts from ---------------------------------------------------------


def test_startup_a_requested_platform_without_credentials_names_what_to_set():
    with pytest.raises(ConfigError) as raised:
        startup_settings({}, ["slack", "discord"])
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("Slack credentials: set SLACK_BOT_TOKEN")
    assert any(line.startswith("SLACK_SIGNING_SECRET is not set") for line in lines)
    assert lines[-1].startswith("DISCORD_TOKEN is not set")


def test_startup_lists_every_problem():
    env = {"DATABASE_URL": "mysql://x", "PAPERCLUB_TICK_SECONDS": "0"}
    with pytest.raises(ConfigError) as raised:
        startup_settings(env, ["discord"])
    lines = str(raised.value).splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "DATABASE_URL",
        "PAPERCLUB_TICK_SECONDS",
        "DISCORD_TOKEN is not set",
    ]


def test_startup_reads_configured_platforms_even_when_not_requested():
    env = {**SLACK, "DISCORD_TOKEN": DISCORD_TOKEN, "PAPERCLUB_TICK_SECONDS": "15"}
    core, read = startup_settings(env, ["slack"])
    slack, discord = read["slack"], read["discord"]
    assert core.tick_seconds == 15 and slack.bot_token == BOT_TOKEN and discord.token == DISCORD_TOKEN
    core, read = startup_settings({}, [])
    slack, discord = read["slack"], read["discord"]
    assert slack is None and discord is None and core.tick_seconds == 60
    with pytest.raises(ConfigError, match="DISCORD_TOKEN"):
        startup_settings({**SLACK, "PAPERCLUB_DISCORD_SHARDS": "2"}, ["slack"])


def test_startup_an_unknown_platform():
    with pytest.raises(ConfigError, match="'teams' is not a platform"):
        startup_settings(SLACK, ["slack", "teams"])


# --- config check opens the database -------------------------------------------------------------


def test_check_connect_reports_a_current_schema(postgres_url):
    from store import Database

    Database(postgres_url).upgrade()
    text, code = check({"DATABASE_URL": postgres_url}, connect=True)
    assert code == 0, text
    assert re.search(r"→ connection +reachable, schema \w+ \(current\)", text)


def test_check_connect_names_a_schema_that_needs_an_upgrade(postgres_url):
    text, code = check({"PAPERCLUB_DATABASE_URL": postgres_url}, connect=True)
    assert code == 1
    assert "PAPERCLUB_DATABASE_URL: the schema is empty, this code needs" in text
    assert "run `paperclub db upgrade`" in text


def test_check_connect_names_an_unreachable_database_without_its_password():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    text, code = check({"DATABASE_URL": f"postgresql://bot:pa55word-here@127.0.0.1:{port}/db"}, connect=True)
    assert code == 1
    assert f"DATABASE_URL: cannot connect to postgresql+psycopg://bot:***@127.0.0.1:{port}/db" in text
    assert "pa55word-here" not in text


def test_check_connect_creates_no_sqlite_file(tmp_path):
    path = tmp_path / "paperclub.db"
    text, code = check({"PAPERCLUB_DATABASE_URL": f"sqlite:///{path}"}, connect=True)
    assert code == 0 and "does not exist yet: the first command creates it" in text
    assert not path.exists()


def test_check_shows_and_checks_the_feed_settings():
    text, code = check({"PAPERCLUB_FEED_PAGE_SIZE": "lots", "PAPERCLUB_FEED_CONTACT": "ops@example.org"})
    assert code == 1
    assert "PAPERCLUB_FEED_PAGE_SIZE='lots': give a whole number of at least 1" in text
    assert re.search(r"PAPERCLUB_FEED_CONTACT +ops@example.org", text)
    assert re.search(r"PAPERCLUB_FEED_MAX_ENTRIES +\(not set: 500 entries per refresh\)", text)


def test_startup_refuses_a_bad_feed_setting():
    with pytest.raises(ConfigError, match="PAPERCLUB_FEED_MAX_ENTRIES='0': give a whole number of at least 1"):
        startup_settings({"PAPERCLUB_FEED_MAX_ENTRIES": "0"}, [])


# --- a database URL that cannot be used, and passwords in its query string ------------------------


def test_mask_url_hides_a_password_given_in_the_query_string():
    url = f"postgresql://bob@db/papers?sslmode=require&password={DB_PASSWORD}"
    assert mask_url(url) == "postgresql://bob@db/papers?password=***&sslmode=require"  # keys sorted
    assert DB_PASSWORD not in mask_url(f"postgres://bob@db:port/papers?password={DB_PASSWORD}")  # unparseable


def test_check_an_unknown_dialect_is_a_problem_not_a_crash():
    url = "nosuchdb://x"
    text, code = check({"PAPERCLUB_DATABASE_URL": url}, connect=True)
    assert code == 1
    (line,) = problems(text)
    assert line.startswith(f"PAPERCLUB_DATABASE_URL: {url!r}")


def test_check_connect_names_a_sqlite_file_in_a_missing_directory(tmp_path):
    path = tmp_path / "missing" / "paperclub.db"
    text, code = check({"DATABASE_URL": f"sqlite:///{path}"}, connect=True)
    assert code == 1
    assert problems(text) == [f"DATABASE_URL: cannot create {path}: the directory {path.parent} does not exist"]
    assert not path.parent.exists()


def test_check_connect_hides_a_password_given_in_the_query_string():
    text, code = check({"DATABASE_URL": f"postgresql://bot@127.0.0.1:1/db?password={DB_PASSWORD}"}, connect=True)
    assert code == 1 and DB_PASSWORD not in text
    (line,) = problems(text)
    assert line.startswith("DATABASE_URL: cannot connect to postgresql+psycopg://bot@127.0.0.1:1/db?password=***: ")


def test_a_database_problem_scrubs_the_password_from_what_the_driver_said():
    url = f"postgresql://bob:{DB_PASSWORD}@db/papers"
    line = database_problem(url, "--database-url", RuntimeError(f"login refused for bob:{DB_PASSWORD}\nmore"))
    assert line == "--database-url: cannot connect to postgresql://bob:***@db/papers: login refused for bob:***"


def test_the_check_says_whether_the_embedding_model_loads(tmp_path):
    from tests.conftest import MINILM

    base = {"PAPERCLUB_DATABASE_URL": f"sqlite:///{tmp_path / 'none.db'}"}
    text, code = check({**base, "PAPERCLUB_MODEL_DIR": str(MINILM)}, connect=True)
    assert "→ model" in text and "all-MiniLM-L6-v2 loads (384 dimensions)" in text and code == 0
    text, code = check({**base, "PAPERCLUB_EMBEDDINGS": "off"}, connect=True)
    assert "off: search, similar and picks rank by words alone" in text and code == 0
    text, code = check({**base, "PAPERCLUB_MODEL_DIR": str(tmp_path)}, connect=True)
    assert "PAPERCLUB_MODEL_DIR" in text and "holds no model.onnx" in text and code == 1
    text, code = check({**base, "PAPERCLUB_EMBEDDINGS": "sometimes"}, connect=False)
    assert "PAPERCLUB_EMBEDDINGS" in text and "use on or off" in text and code == 1

"""Slack settings from the environment, and the app manifest filled in for a host.

Secrets only ever come from the environment and are never logged (SecretStr fields); a
setting that cannot be used is a `ConfigError`, one line per problem, naming the variable
and what to set instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from bot.ops.settings import ConfigError, EnvSettings, environment, is_set

EVENTS_PATH = "/slack/events"  # slash commands and button clicks
INSTALL_PATH = "/slack/install"  # OAuth: where a workspace admin starts an install
REDIRECT_PATH = "/slack/oauth_redirect"
DEFAULT_API_URL = "https://slack.com/api/"
DEFAULT_PORT = 3000
# Inside the package, so an installed wheel has it too.
MANIFEST = Path(__file__).resolve().parent / "manifest.json"
MANIFEST_PLACEHOLDER = "https://paperclub.example.org"

# Any of these set means Slack is meant to run (PORT alone does not: hosts always set it).
CREDENTIAL_VARIABLES = (
    "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
    "SLACK_CLIENT_ID",
    "SLACK_CLIENT_SECRET",
)
# The constructor's keyword names from before the secrets became SecretStr fields.
_SECRET_FIELDS = {
    "client_id": "slack_client_id",
    "signing_secret": "slack_signing_secret",
    "bot_token": "slack_bot_token",
    "client_secret": "slack_client_secret",
    "app_token": "slack_app_token",
}


class SlackSettings(EnvSettings):
    """SLACK_* (and PORT, PAPERCLUB_SLACK_MANAGERS) from the environment.

    The secrets are SecretStr fields (which is what makes `config check` mask them and the
    logs redact them: adapters.platforms.secret_variables); `client_id`, `signing_secret`,
    `bot_token`, `client_secret` and `app_token` give their values as plain strings (the
    signing secret "" when unset, the others None) for the code that hands them to Slack.
    """

    slack_signing_secret: SecretStr | None = Field(None, validation_alias="SLACK_SIGNING_SECRET")
    # One workspace: a bot token; many: OAuth (client id and secret); Socket Mode: app token.
    slack_bot_token: SecretStr | None = Field(None, validation_alias="SLACK_BOT_TOKEN")
    # Not secret to Slack (an install link shows it), but kept as one: masked and redacted.
    slack_client_id: SecretStr | None = Field(None, validation_alias="SLACK_CLIENT_ID")
    slack_client_secret: SecretStr | None = Field(None, validation_alias="SLACK_CLIENT_SECRET")
    slack_app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN")
    api_url: str = Field(DEFAULT_API_URL, validation_alias="SLACK_API_URL")
    managers: Annotated[frozenset[str], NoDecode] = Field(
        frozenset(), validation_alias="PAPERCLUB_SLACK_MANAGERS"
    )
    port: int = Field(DEFAULT_PORT, validation_alias="PORT")

    # What `paperclub config check` shows for a variable that is not set.
    UNSET: ClassVar[dict[str, str]] = {
        "SLACK_API_URL": DEFAULT_API_URL,
        "PAPERCLUB_SLACK_MANAGERS": "none, workspace admins and owners only",
        "PORT": str(DEFAULT_PORT),
    }

    def __init__(self, signing_secret: str | None = None, /, **values: Any):
        # SlackSettings(secret, bot_token=...) as when this was a dataclass.
        if signing_secret is not None:
            values["slack_signing_secret"] = signing_secret
        for old, new in _SECRET_FIELDS.items():
            if old in values:
                values[new] = values.pop(old)
        super().__init__(**values)

    @property
    def client_id(self) -> str | None:
        return _reveal(self.slack_client_id)

    @property
    def signing_secret(self) -> str:
        return _reveal(self.slack_signing_secret) or ""

    @property
    def bot_token(self) -> str | None:
        return _reveal(self.slack_bot_token)

    @property
    def client_secret(self) -> str | None:
        return _reveal(self.slack_client_secret)

    @property
    def app_token(self) -> str | None:
        return _reveal(self.slack_app_token)

    @property
    def oauth(self) -> bool:
        return self.client_id is not None

    def describe(self) -> str:
        """How this app talks to Slack, for `paperclub config check` and start-up logs."""
        mode = "OAuth (many workspaces)" if self.oauth else "one workspace (bot token)"
        transport = "over Socket Mode" if self.app_token else f"over HTTP on port {self.port}"
        return f"{mode}, {transport}"

    @classmethod
    def configured(cls, env: Mapping[str, str] | None = None) -> bool:
        """Whether any Slack credential variable is set: Slack is meant to run."""
        env = environment(env)
        return any(is_set(env, name) for name in CREDENTIAL_VARIABLES)

    @classmethod
    def mentioned(cls, env: Mapping[str, str] | None = None) -> bool:
        """Whether any Slack variable but PORT is set (a credential or not)."""
        env = environment(env)
        return any(is_set(env, name) for name in cls.variables() if name != "PORT")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SlackSettings:
        """The settings, or one ConfigError with a line per problem."""
        present = environment(env)
        settings, problems = None, []
        try:
            settings = super().from_env(present)
        except ConfigError as problem:
            problems = str(problem).splitlines()
        problems = _credential_problems({name for name in CREDENTIAL_VARIABLES if name in present}) + problems
        if problems:
            raise ConfigError("\n".join(problems))
        return settings

    def _check(self) -> None:
        given = {
            "SLACK_BOT_TOKEN": self.bot_token is not None,
            "SLACK_CLIENT_ID": self.client_id is not None,
            "SLACK_CLIENT_SECRET": bool(self.client_secret),
            "SLACK_SIGNING_SECRET": bool(self.signing_secret),
            "SLACK_APP_TOKEN": self.app_token is not None,
        }
        problems = _credential_problems({name for name, present in given.items() if present})
        if problems:
            raise ConfigError("\n".join(problems))

    @field_validator("slack_app_token")
    @classmethod
    def _app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError(
                "SLACK_APP_TOKEN must be an app-level token (xapp-...) with connections:write"
            )
        return value

    @field_validator("api_url", mode="before")
    @classmethod
    def _api_url(cls, value: Any) -> Any:
        return _api_url(value) if isinstance(value, str) else value

    @field_validator("managers", mode="before")
    @classmethod
    def _managers(cls, value: Any) -> Any:
        if isinstance(value, str):
            return frozenset(u.strip() for u in value.split(",") if u.strip())
        return value

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, value: Any) -> Any:
        return _port(value) if isinstance(value, str) else value


def _credential_problems(given: set[str]) -> list[str]:
    """Which credentials go together, from which of CREDENTIAL_VARIABLES are set."""
    bot_token, app_token = "SLACK_BOT_TOKEN" in given, "SLACK_APP_TOKEN" in given
    client_id, client_secret = "SLACK_CLIENT_ID" in given, "SLACK_CLIENT_SECRET" in given
    signing_secret = "SLACK_SIGNING_SECRET" in given
    problems = []
    if client_id == bot_token:
        problems.append(
            "Slack credentials: set SLACK_BOT_TOKEN for one workspace, or SLACK_CLIENT_ID and "
            "SLACK_CLIENT_SECRET to install in many through OAuth (one of the two, not both)"
        )
    if client_id and not client_secret:
        problems.append(
            "SLACK_CLIENT_ID is set but SLACK_CLIENT_SECRET is not: set both for OAuth"
        )
    if client_secret and not client_id:
        problems.append(
            "SLACK_CLIENT_SECRET is set but SLACK_CLIENT_ID is not: set both for OAuth"
        )
    if app_token and client_id:
        problems.append(
            "SLACK_APP_TOKEN (Socket Mode) serves one workspace: set SLACK_BOT_TOKEN instead of "
            "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, or leave SLACK_APP_TOKEN out to install in many "
            "workspaces over HTTP"
        )
    if not app_token and not signing_secret:
        problems.append(
            "SLACK_SIGNING_SECRET is not set: copy it from the app's Basic Information page"
        )
    return problems


def _reveal(secret: SecretStr | None) -> str | None:
    return None if secret is None else secret.get_secret_value()


def _api_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"SLACK_API_URL={url!r} is not an http(s) URL, e.g. {DEFAULT_API_URL}")
    return url if url.endswith("/") else url + "/"  # WebClient joins method names onto it


def _port(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_PORT
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise ConfigError(f"PORT={raw!r} is not a TCP port number (1-65535)")
    return int(raw)


# --- the app manifest ---------------------------------------------------------------------


def manifest_data() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def bot_scopes() -> list[str]:
    """The bot scopes an OAuth install asks for: the manifest's, so the two cannot differ."""
    return manifest_data()["oauth_config"]["scopes"]["bot"]


def manifest(url: str) -> str:
    """adapters/slack/manifest.json with the request URLs pointing at `url` (https://HOST)."""
    return MANIFEST.read_text(encoding="utf-8").replace(MANIFEST_PLACEHOLDER, public_base_url(url))


def socket_mode_manifest() -> str:
    """The manifest for Socket Mode: `socket_mode_enabled`, and no request URL or OAuth
    redirect (Slack sends everything over the app's websocket; one workspace, no OAuth)."""
    data = manifest_data()
    for command in data["features"]["slash_commands"]:
        command.pop("url", None)
    data["settings"]["event_subscriptions"].pop("request_url", None)
    data["settings"]["interactivity"].pop("request_url", None)
    data["oauth_config"].pop("redirect_urls", None)
    data["settings"]["socket_mode_enabled"] = True
    return json.dumps(data, indent=2, ensure_ascii=False)


def public_base_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if (
        parts.scheme != "https"
        or not parts.netloc
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise ConfigError(
            f"--url {url!r}: give the public https base URL only, e.g. "
            f"https://paperclub.example.org (Slack needs https; the app answers at {EVENTS_PATH})"
        )
    return f"https://{parts.netloc}"

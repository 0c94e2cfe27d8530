"""Slack settings from the environment, and the app manifest filled in for a host.

Secrets only ever come from the environment and are never logged; a setting that cannot
be used is a `ConfigError` naming the variable and what to set instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bot.app import ConfigError

EVENTS_PATH = "/slack/events"  # slash commands and button clicks
INSTALL_PATH = "/slack/install"  # OAuth: where a workspace admin starts an install
REDIRECT_PATH = "/slack/oauth_redirect"
DEFAULT_API_URL = "https://slack.com/api/"
DEFAULT_PORT = 3000
# Inside the package, so an installed wheel has it too.
MANIFEST = Path(__file__).resolve().parent / "slack_manifest.json"
MANIFEST_PLACEHOLDER = "https://paperclub.example.org"


@dataclass(frozen=True)
class SlackSettings:
    signing_secret: str
    bot_token: str | None = None  # one workspace
    client_id: str | None = None  # many workspaces, through OAuth
    client_secret: str | None = None
    app_token: str | None = None  # Socket Mode (development)
    api_url: str = DEFAULT_API_URL
    managers: frozenset[str] = frozenset()
    port: int = DEFAULT_PORT

    @property
    def oauth(self) -> bool:
        return self.client_id is not None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SlackSettings:
        env = os.environ if env is None else env

        def value(name: str) -> str | None:
            return env.get(name, "").strip() or None  # unset and empty alike

        settings = cls(
            signing_secret=value("SLACK_SIGNING_SECRET") or "",
            bot_token=value("SLACK_BOT_TOKEN"),
            client_id=value("SLACK_CLIENT_ID"),
            client_secret=value("SLACK_CLIENT_SECRET"),
            app_token=value("SLACK_APP_TOKEN"),
            api_url=_api_url(value("SLACK_API_URL") or DEFAULT_API_URL),
            managers=frozenset(
                u.strip() for u in env.get("PAPERCLUB_SLACK_MANAGERS", "").split(",") if u.strip()
            ),
            port=_port(value("PORT")),
        )
        settings._check()
        return settings

    def _check(self) -> None:
        if self.oauth == (self.bot_token is not None):
            raise ConfigError(
                "Slack credentials: set SLACK_BOT_TOKEN for one workspace, or SLACK_CLIENT_ID and "
                "SLACK_CLIENT_SECRET to install in many through OAuth (one of the two, not both)"
            )
        if self.oauth and not self.client_secret:
            raise ConfigError(
                "SLACK_CLIENT_ID is set but SLACK_CLIENT_SECRET is not: set both for OAuth"
            )
        if self.app_token is None and not self.signing_secret:
            raise ConfigError(
                "SLACK_SIGNING_SECRET is not set: copy it from the app's Basic Information page"
            )
        if self.app_token is not None and not self.app_token.startswith("xapp-"):
            raise ConfigError(
                "SLACK_APP_TOKEN must be an app-level token (xapp-...) with connections:write"
            )


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
    """adapters/slack_manifest.json with the request URLs pointing at `url` (https://HOST)."""
    return MANIFEST.read_text(encoding="utf-8").replace(MANIFEST_PLACEHOLDER, public_base_url(url))


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

"""Discord settings from the environment, checked at start-up.

DISCORD_TOKEN (the bot token: a secret, never shown or logged), DISCORD_API_URL (another
HTTP API than Discord's own, e.g. a test double), and the sharding options
PAPERCLUB_DISCORD_SHARDS / PAPERCLUB_DISCORD_SHARD_IDS. A value that cannot be used is a
`ConfigError` naming the variable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from bot.ops.settings import EnvSettings, environment, is_set

DEFAULT_API_URL = "https://discord.com/api/v10"  # discord.py's own (discord.http.Route.BASE)


class DiscordSettings(EnvSettings):
    discord_token: SecretStr = Field(validation_alias="DISCORD_TOKEN")
    api_url: str | None = Field(None, validation_alias="DISCORD_API_URL")  # None: Discord's
    shards: str | None = Field(None, validation_alias="PAPERCLUB_DISCORD_SHARDS")
    shard_ids: str | None = Field(
        None, validation_alias="PAPERCLUB_DISCORD_SHARD_IDS", validate_default=True
    )

    # What `paperclub config check` shows for a variable that is not set.
    UNSET: ClassVar[dict[str, str]] = {
        "DISCORD_API_URL": "Discord's own",
        "PAPERCLUB_DISCORD_SHARDS": "one gateway connection",
    }
    MISSING: ClassVar[dict[str, str]] = {
        "DISCORD_TOKEN": "DISCORD_TOKEN is not set: set it to the bot token "
        "(Developer Portal > your app > Bot)",
    }

    @property
    def token(self) -> str:
        return self.discord_token.get_secret_value()

    def shard_options(self) -> dict[str, Any] | None:
        """None for one connection; else the AutoShardedClient options (as
        adapters.discord.app.shard_options)."""
        return _shard_options(self.shards or "", self.shard_ids or "")

    def describe(self) -> str:
        """How this bot connects, for `paperclub config check` and start-up logs."""
        options = self.shard_options()
        if options is None:
            how = "one gateway connection"
        elif "shard_count" not in options:
            how = "shards: as many as Discord recommends"
        elif "shard_ids" in options:
            how = f"shards {_ranges(options['shard_ids'])} of {options['shard_count']}"
        else:
            how = f"{options['shard_count']} shards"
        api = f", API at {self.api_url}" if self.api_url else ""
        return f"configured ({how}{api})"

    @classmethod
    def configured(cls, env: Mapping[str, str] | None = None) -> bool:
        """Whether DISCORD_TOKEN is set: Discord is meant to run."""
        return is_set(environment(env), "DISCORD_TOKEN")

    @classmethod
    def mentioned(cls, env: Mapping[str, str] | None = None) -> bool:
        """Whether any Discord variable is set (the token or not)."""
        env = environment(env)
        return any(is_set(env, name) for name in cls.variables())

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DiscordSettings:
        """The settings, or one ConfigError with a line per problem."""
        return super().from_env(env)

    @field_validator("api_url", mode="before")
    @classmethod
    def _api_url(cls, value: Any) -> Any:
        if isinstance(value, str):
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"{value!r} is not an http(s) URL, e.g. {DEFAULT_API_URL}")
        return value

    @field_validator("shard_ids")
    @classmethod
    def _shards(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Checked here, not after the whole model, so a shard problem is reported along
        # with a missing token; raises ValueError naming the variable.
        _shard_options(info.data.get("shards") or "", value or "")
        return value


def _shard_options(shards: str, ids: str) -> dict[str, Any] | None:
    """PAPERCLUB_DISCORD_SHARDS: `auto` (Discord's recommended count) or a number N.
    PAPERCLUB_DISCORD_SHARD_IDS: this process's share of the N shards (`0,1` or `0-3`),
    to split one bot over several processes."""
    shards = shards.strip().lower()
    ids = ids.strip()
    if ids and not shards.isdigit():
        raise ValueError(
            "PAPERCLUB_DISCORD_SHARD_IDS needs PAPERCLUB_DISCORD_SHARDS set to the total number"
        )
    if not shards:
        return None
    if shards == "auto":
        return {}
    if not shards.isdigit() or int(shards) < 1:
        raise ValueError(
            f"PAPERCLUB_DISCORD_SHARDS={shards!r}: use auto or a number of shards, e.g. 4"
        )
    count = int(shards)
    options: dict[str, Any] = {"shard_count": count}
    if ids:
        options["shard_ids"] = _shard_ids(ids, count)
    return options


def _shard_ids(text: str, count: int) -> list[int]:
    chosen: list[int] = []
    try:
        for part in text.split(","):
            first, _, last = part.strip().partition("-")
            chosen += range(int(first), int(last or first) + 1)
    except ValueError:
        raise ValueError(
            f"PAPERCLUB_DISCORD_SHARD_IDS={text!r}: use numbers like 0,1 or a range like 0-3"
        ) from None
    if not chosen or any(not 0 <= i < count for i in chosen):
        raise ValueError(
            f"PAPERCLUB_DISCORD_SHARD_IDS={text!r}: shard ids run from 0 to {count - 1}"
        )
    return sorted(set(chosen))


def _ranges(ids: list[int]) -> str:
    """[0, 1, 2, 5] as 0-2,5."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)

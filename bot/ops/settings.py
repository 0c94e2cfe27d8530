"""Settings from the environment, checked once at start-up.

Every setting comes from an environment variable and is checked when the process starts:
a value that cannot be used is a `ConfigError` with one line per problem, each line
starting with the variable's name and saying what is wrong. Empty variables count as
unset. Secrets (tokens, the database password) are never shown: `SecretStr` hides them
from reprs, and `mask_secret` / `mask_url` are what messages and reports print instead.

The settings classes read the environment only through `from_env(env)`; constructing one
directly takes just the values given (as tests do), never the process environment.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, get_args
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, JsonValue, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticUndefined
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from bot.corpus.fetch import FetchPolicy, feed_count
from bot.ops.defaults import DATABASE_VARIABLES, DEFAULT_HOST, listen_host
from bot.search.params import DEFAULT_MODEL, MODEL, MODEL_DIR, OFF, ON, SWITCH
from store.database import DEFAULT_URL, mask_url, resolve_database_url, url_secrets


class ConfigError(ValueError):
    """A setting from the environment that cannot be used; the message names it."""


# PAPERCLUB_CATCHUP: how late a missed daily post may still go out. Defined here rather than
# in bot.daily so that settings (and logs, which reads it) stay below every domain.
DEFAULT_GRACE = timedelta(hours=3)
DEFAULT_TICK_SECONDS = 60
TICK_RANGE = (1, 3600)  # 1 s: fast ticks for tests and demos (tests/test_outage.py)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOG_FORMATS = ("text", "json")
DATABASE_EXAMPLES = "postgresql://USER:PASSWORD@HOST:5432/NAME or sqlite:///paperclub.db"

# Token prefixes say what kind of token it is and are safe to show.
_TOKEN_PREFIXES = ("xoxb-", "xoxp-", "xapp-", "xoxe-")


# --- reading the environment -------------------------------------------------------------------


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables that are set: values stripped, empty (or blank) ones dropped."""
    env = os.environ if env is None else env
    return {
        name: value.strip()
        for name, value in env.items()
        if isinstance(value, str) and value.strip()
    }


def is_set(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name)
    return isinstance(value, str) and bool(value.strip())


class MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source reading a given mapping instead of
    os.environ (names matched exactly, blank values counting as unset)."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str] | None = None):
        self._mapping = environment(env)  # read by _load_env_vars during __init__
        super().__init__(settings_cls, case_sensitive=True, env_ignore_empty=True)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return dict(self._mapping)


class EnvSettings(BaseSettings):
    """Base of paperclub's settings: `from_env(env)` reads, checks, and raises one
    ConfigError listing every problem."""

    model_config = SettingsConfigDict(
        case_sensitive=True,
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
    )
    # What to say when a required variable is not set, by variable name.
    MISSING: ClassVar[dict[str, str]] = {}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Only what the constructor is given: from_env passes the environment's values in,
        # so a test's settings never pick up the developer's own variables.
        return (init_settings,)

    @classmethod
    def variables(cls) -> list[str]:
        """The environment variables this class reads, in field order."""
        names: list[str] = []
        for name, field in cls.model_fields.items():
            names += _variables_of(name, field.validation_alias)
        return names

    @classmethod
    def values_from(cls, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The raw values of this class's variables in `env`, keyed by variable name."""
        return MappingEnvSource(cls, env)()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        try:
            return cls(**cls.values_from(env))
        except ValidationError as error:
            raise config_error(error, cls, environment(env)) from None

    @classmethod
    def connection(cls, env: Mapping[str, str]) -> str | None:
        """What `config check --connect` says under this model's group about the service its
        settings reach (a feature's provider: does it answer?), in a few words; None: nothing
        to connect to. Never raises, never prints a secret."""
        return None


def _variables_of(field_name: str, alias: Any) -> list[str]:
    if isinstance(alias, str):
        return [alias]
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str)]
    return [field_name]


def secret_fields(settings_cls: type[EnvSettings]) -> frozenset[str]:
    """The variables a settings class keeps as SecretStr: never printed or logged, shown
    only as "set (N chars)". Declaring a field so is all it takes for `config check` to
    mask it and the logs to redact its value (DATABASE_URL's password is hidden apart:
    mask_url)."""
    return frozenset(
        field.validation_alias
        for field in settings_cls.model_fields.values()
        if isinstance(field.validation_alias, str) and SecretStr in (field.annotation, *get_args(field.annotation))
    )


# --- declaring a setting ------------------------------------------------------------------------


def setting(default: Any, variable: str | AliasChoices, group: str, unset: str | None = None, **field: Any) -> Any:
    """A field read from `variable`. `config check` lists it under `group` with what leaving
    it unset means (`unset`; else the default itself; "": nothing): declaring the field is
    all it takes for a new setting to be read, checked at start-up and shown."""
    extra: dict[str, JsonValue] = {"group": group, "unset": unset}
    return Field(default, validation_alias=variable, json_schema_extra=extra, **field)


def declared(settings_cls: type[EnvSettings]) -> list[tuple[str, str, str | None]]:
    """(group, variable, what unset means) for every variable the class reads, in field order."""
    rows = []
    for name, field in settings_cls.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        given = extra.get("unset")  # setting() wrote a str or None
        unset = given if isinstance(given, str) else None
        if unset is None and field.default not in (None, PydanticUndefined):
            unset = str(field.default)
        group = str(extra.get("group") or "Other settings")
        rows += [(group, variable, unset or None) for variable in _variables_of(name, field.validation_alias)]
    return rows


# --- turning validation errors into ConfigError -------------------------------------------------


def error_lines(
    error: ValidationError,
    settings_cls: type[EnvSettings] | None = None,
    given: Mapping[str, Any] | None = None,
) -> list[str]:
    """One line per problem, each starting with the variable's name. Validators raise
    ValueError with the text after the name (or with the whole line, name first).
    `given`, the variables that are set, tells which of a field's variables was used."""
    hints = settings_cls.MISSING if settings_cls is not None else {}
    lines: list[str] = []
    for problem in error.errors(include_url=False):
        name = _variable_name(problem["loc"], settings_cls, given or {})
        kind = problem["type"]
        if kind == "missing":
            text = hints.get(name) or f"{name} is not set"
        elif kind == "value_error" and "error" in problem.get("ctx", {}):
            text = str(problem["ctx"]["error"])
        elif (settings_cls is not None and name in secret_fields(settings_cls)) or name in DATABASE_VARIABLES:
            text = problem["msg"]  # never echo a secret's value
        else:
            text = f"{problem.get('input')!r}: {problem['msg']}"
        named = [name] + (settings_cls.variables() if settings_cls is not None else [])
        if name and not any(text.startswith(n) for n in named):
            text = f"{name}: {text}"
        lines.append(text)
    return lines


def config_error(
    error: ValidationError,
    settings_cls: type[EnvSettings] | None = None,
    given: Mapping[str, Any] | None = None,
) -> ConfigError:
    """A pydantic ValidationError as one ConfigError, one line per problem."""
    return ConfigError("\n".join(error_lines(error, settings_cls, given)))


def _variable_name(loc: tuple[int | str, ...], settings_cls: type[EnvSettings] | None,
                   given: Mapping[str, object]) -> str:
    if not loc:
        return ""
    name = str(loc[0])
    if settings_cls is None:
        return name
    for field_name, field in settings_cls.model_fields.items():
        names = _variables_of(field_name, field.validation_alias)
        if name == field_name or name in names:
            # A field read from one of several variables (PAPERCLUB_DATABASE_URL, else
            # DATABASE_URL): name the one that was set.
            return next((n for n in names if n in given), names[0])
    return name


# --- showing values without their secrets -------------------------------------------------------


def mask_secret(value: str | None) -> str:
    """"(not set)", or that it is set and how long it is: never any of the secret itself
    beyond a token's kind (xoxb-, xapp-, ...)."""
    if not value:
        return "(not set)"
    prefix = next((p for p in _TOKEN_PREFIXES if value.startswith(p)), "")
    return f"{prefix}…({len(value)} chars)" if prefix else f"set ({len(value)} chars)"


# --- the checks ---------------------------------------------------------------------------------


def database_url(raw: str) -> str:
    """The URL SQLAlchemy will use (postgres:// and postgresql:// become
    postgresql+psycopg://), or ValueError saying what is wrong (password hidden)."""
    url = resolve_database_url({"DATABASE_URL": raw})
    shown = mask_url(raw)
    try:
        parsed = make_url(url)
    except Exception:  # noqa: BLE001 - whatever make_url raises (ArgumentError, ValueError...), it is no URL
        raise ValueError(f"{shown!r} is not a database URL: use {DATABASE_EXAMPLES}") from None
    # Read from the text, not get_driver_name(): that loads the dialect, and an unknown one
    # (nosuchdb://) would raise instead of being named.
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in ("sqlite", "postgresql"):
        raise ValueError(f"{shown!r} is not a SQLite or PostgreSQL URL ({DATABASE_EXAMPLES})")
    if backend == "postgresql" and driver != "psycopg":
        raise ValueError(
            f"{shown!r} asks for the {driver or 'psycopg2'} driver, which paperclub does not install: "
            f"write it as postgresql://… (paperclub uses psycopg)"
        )
    if backend == "sqlite" and driver not in ("", "pysqlite"):
        raise ValueError(f"{shown!r} asks for the {driver} driver: write it as sqlite:///PATH")
    return url


def database_problem(url: str, source: str, error: BaseException) -> str:
    """One line for a database a command could not open: where its URL came from
    (`source`: the variable or --database-url), the URL without its password, and why.
    A URL paperclub cannot use is named as `config check` names it."""
    try:
        database_url(url)
    except ValueError as problem:
        return f"{source}: {problem}"
    return f"{source}: cannot connect to {mask_url(url)}: {driver_reason(error, url)}"


def driver_reason(error: BaseException, url: str) -> str:
    """The first line of what the driver said (SQLAlchemy wraps it as `orig`), with the
    URL's passwords scrubbed, and why a SQLite file cannot be opened when we can tell."""
    text = str(getattr(error, "orig", None) or error).strip()
    reason = text.splitlines()[0] if text else type(error).__name__
    for secret in url_secrets(url):
        if len(secret) >= 4:  # a shorter one would blank out letters of ordinary words
            reason = reason.replace(secret, "***")
    return reason + _missing_directory(url)


def _missing_directory(url: str) -> str:
    try:
        parsed = make_url(resolve_database_url({"DATABASE_URL": url}))
    except (ArgumentError, ValueError):
        return ""
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return ""
    folder = os.path.dirname(os.path.abspath(parsed.database))
    return "" if os.path.isdir(folder) else f" (the directory {folder} does not exist)"


_DURATION = re.compile(r"^([0-9]*\.?[0-9]+)\s*([hms]?)$")
_UNITS = {"h": 3600, "m": 60, "s": 1, "": 3600}


def duration(raw: str) -> timedelta:
    """3h, 90m, 45s, or a plain number of hours (1.5); ValueError otherwise."""
    text = raw.strip().lower()
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(
            f"{raw!r} is not a duration: use e.g. 3h, 90m or 45s (a plain number is hours)"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not math.isfinite(seconds) or seconds > timedelta.max.total_seconds():
        raise ValueError(f"{raw!r} is too long a duration: use e.g. 3h, 90m or 45s")
    return timedelta(seconds=seconds)


def catchup_from_env(env: Mapping[str, str] | None = None) -> timedelta:
    """PAPERCLUB_CATCHUP: how late a missed post may still go out (default 3h)."""
    raw = environment(env).get("PAPERCLUB_CATCHUP")
    if raw is None:
        return DEFAULT_GRACE
    try:
        return duration(raw)
    except ValueError as problem:
        raise ConfigError(f"PAPERCLUB_CATCHUP: {problem}") from None


def public_url(raw: str) -> str:
    """PAPERCLUB_PUBLIC_URL: where `paperclub serve` is reached from outside, as an http(s)
    URL with a host and no query or fragment (links are made by appending /archive/...);
    returned without a trailing slash. ValueError saying what is wrong otherwise."""
    text = raw.strip()
    parts = urlsplit(text)
    example = "use e.g. https://paperclub.example.org"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{raw!r} is not an http(s) URL with a host: {example}")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise ValueError(f"{raw!r} has a query or fragment: give only the address, {example}")
    if parts.username or parts.password:
        raise ValueError(f"{raw!r} has a user or password in it: {example}")
    if any(c.isspace() for c in text):
        raise ValueError(f"{raw!r} has a space in it: {example}")
    try:
        parts.port  # noqa: B018 - reading it checks it
    except ValueError:
        raise ValueError(f"{raw!r} has a port that is not a number from 0 to 65535: {example}") from None
    return text.rstrip("/")


def public_url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """PAPERCLUB_PUBLIC_URL, checked; None when it is not set (the link commands then say
    what to set)."""
    raw = environment(env).get("PAPERCLUB_PUBLIC_URL")
    if raw is None:
        return None
    try:
        return public_url(raw)
    except ValueError as problem:
        raise ConfigError(f"PAPERCLUB_PUBLIC_URL: {problem}") from None


# config check's groups, in the order it shows them.
DATABASE, SCHEDULER, LOGGING = "Database", "Scheduler", "Logging"
LINKS, SERVING, INDEX = "Links (archive page, calendar feed)", "Serving (paperclub serve)", "Search index"
FEEDS, ADDING = "Feeds", "Adding papers from chat (add, imports by link)"
OPENALEX = "OpenAlex (follows, enrichment)"
RELEVANCE = "Relevance (ranking by meaning as well as words)"


class CoreSettings(EnvSettings):
    """What every paperclub process needs, whatever the platform."""

    # The URL SQLAlchemy uses (after the postgres:// rewrite); its password is a secret:
    # left out of repr, shown through `database_shown`.
    database_url: str = setting(
        DEFAULT_URL, AliasChoices("PAPERCLUB_DATABASE_URL", "DATABASE_URL"), DATABASE, unset="", repr=False
    )
    catchup: timedelta = setting(DEFAULT_GRACE, "PAPERCLUB_CATCHUP", SCHEDULER,
                                 unset=f"{int(DEFAULT_GRACE.total_seconds()) // 3600}h")
    tick_seconds: int = setting(DEFAULT_TICK_SECONDS, "PAPERCLUB_TICK_SECONDS", SCHEDULER,
                                unset=f"{DEFAULT_TICK_SECONDS} seconds")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = setting("INFO", "PAPERCLUB_LOG_LEVEL", LOGGING)
    log_format: Literal["text", "json"] = setting("text", "PAPERCLUB_LOG_FORMAT", LOGGING)
    # Where the archive page and the calendar feed are reached (bot/memory); None: no links.
    public_url: str | None = setting(None, "PAPERCLUB_PUBLIC_URL", LINKS,
                                     unset="none: `archive` and `session calendar` give no links")
    # The address `paperclub serve` listens on ($PORT: Slack over HTTP, /healthz, the pages).
    host: str = setting(DEFAULT_HOST, "PAPERCLUB_HOST", SERVING,
                        unset=f"{DEFAULT_HOST}, every interface (127.0.0.1: this machine only)")
    # Read by bot.search.builtin.files (below this layer): declared here to be checked and shown.
    index_dir: Path | None = setting(None, "PAPERCLUB_INDEX_DIR", INDEX,
                                     unset="beside a SQLite file; a per-user cache directory for a server database")

    @property
    def database_shown(self) -> str:
        return mask_url(self.database_url)

    @property
    def log_level_number(self) -> int:
        return logging.getLevelNamesMapping()[self.log_level]

    @field_validator("database_url", mode="before")
    @classmethod
    def _database_url(cls, value: Any) -> Any:
        return database_url(value) if isinstance(value, str) else value

    @field_validator("public_url", mode="before")
    @classmethod
    def _public_url(cls, value: Any) -> Any:
        return public_url(value) if isinstance(value, str) else value

    @field_validator("catchup", mode="before")
    @classmethod
    def _catchup(cls, value: Any) -> Any:
        return duration(value) if isinstance(value, str) else value

    @field_validator("tick_seconds", mode="before")
    @classmethod
    def _tick_seconds(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip().isdigit():
                raise ValueError(f"{value!r} is not a whole number of seconds")
            value = int(value)
        low, high = TICK_RANGE
        if isinstance(value, int) and not low <= value <= high:
            raise ValueError(f"{value} seconds is out of range: use {low} to {high}")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _log_level(cls, value: Any) -> Any:
        if isinstance(value, str):
            level = value.strip().upper()
            if level not in LOG_LEVELS:
                raise ValueError(f"{value!r} is not a log level: use {', '.join(LOG_LEVELS)}")
            return level
        return value

    @field_validator("log_format", mode="before")
    @classmethod
    def _log_format(cls, value: Any) -> Any:
        if isinstance(value, str):
            fmt = value.strip().lower()
            if fmt not in LOG_FORMATS:
                raise ValueError(f"{value!r} is not a log format: use text or json")
            return fmt
        return value

    @field_validator("host", mode="before")
    @classmethod
    def _host(cls, value: Any) -> Any:
        return listen_host(value) if isinstance(value, str) else value

    @field_validator("index_dir", mode="before")
    @classmethod
    def _index_dir(cls, value: Any) -> Any:
        if isinstance(value, str) and Path(value).exists() and not Path(value).is_dir():
            raise ValueError(f"{value!r} is a file: give a directory (it is created when missing)")
        return value




# --- feeds and the providers ---------------------------------------------------------------------


class FeedSettings(EnvSettings):
    """The scheduled corpus feeds (bot.corpus.fetch.FetchPolicy reads the same variables
    where it runs; this is what start-up checks and `config check` shows), and what every
    provider's client shares: the contact in the User-Agent, arXiv's API (`add`, the
    follows) and OpenAlex's (the follows, the enrichment)."""

    page_size: int = setting(FetchPolicy.page_size, "PAPERCLUB_FEED_PAGE_SIZE", FEEDS,
                             unset=f"{FetchPolicy.page_size} entries per arXiv API request")
    max_entries: int = setting(FetchPolicy.max_entries, "PAPERCLUB_FEED_MAX_ENTRIES", FEEDS,
                               unset=f"{FetchPolicy.max_entries} entries per refresh")
    contact: str | None = setting(None, "PAPERCLUB_FEED_CONTACT", FEEDS, unset="none in the User-Agent")
    arxiv_api_url: str = setting("https://export.arxiv.org/api/query", "PAPERCLUB_ARXIV_API_URL", ADDING)
    # Where OpenAlex is reached: the follows' ingest and the enrichment both ask it.
    openalex_api_url: str = setting("https://api.openalex.org", "PAPERCLUB_OPENALEX_API_URL", OPENALEX)

    @field_validator("arxiv_api_url", mode="before")
    @classmethod
    def _arxiv_url(cls, value: Any) -> Any:
        return http_url(value) if isinstance(value, str) else value

    @field_validator("openalex_api_url", mode="before")
    @classmethod
    def _openalex_url(cls, value: Any) -> Any:
        return base_url(value)

    @field_validator("page_size", mode="before")
    @classmethod
    def _page_size(cls, value: Any) -> Any:
        return feed_count("PAPERCLUB_FEED_PAGE_SIZE", value) if isinstance(value, str) else value

    @field_validator("max_entries", mode="before")
    @classmethod
    def _max_entries(cls, value: Any) -> Any:
        return feed_count("PAPERCLUB_FEED_MAX_ENTRIES", value) if isinstance(value, str) else value


class EmbeddingSettings(EnvSettings):
    """The sentence-embedding model search, similar papers and picks rank with besides
    BM25. Read by bot.search.embedding (below this layer): declared here to be checked
    and shown."""

    embeddings: Literal["on", "off"] = setting("on", SWITCH, RELEVANCE,
                                               unset="on: papers with a vector rank by meaning too")
    embedding_model: str = setting(DEFAULT_MODEL, MODEL, RELEVANCE)
    model_dir: Path | None = setting(None, MODEL_DIR, RELEVANCE,
                                     unset="none: the runtime's own download and cache (FASTEMBED_CACHE_PATH)")

    @field_validator("embeddings", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        return on_off(value)

    @field_validator("embedding_model", mode="before")
    @classmethod
    def _model(cls, value: Any) -> Any:
        return (value.strip() or DEFAULT_MODEL) if isinstance(value, str) else value

    @field_validator("model_dir", mode="before")
    @classmethod
    def _model_dir(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            folder = Path(value.strip()).expanduser()
            if not (folder / "model.onnx").is_file():
                raise ValueError(f"{value!r} holds no model.onnx: give the folder of an ONNX model and its tokenizer")
            return folder
        return None if isinstance(value, str) else value


def http_url(raw: str) -> str:
    """An http(s) URL with a host, or ValueError."""
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in raw.strip()):
        raise ValueError(f"{raw!r} is not an http(s) URL with a host")
    return raw.strip()


def on_off(value: Any) -> Any:
    """A switch as a settings validator takes it: on/off (or yes/no, true/false, 1/0), as
    "on" or "off"; a value not read from text as is."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word not in ON + OFF:
            raise ValueError(f"{value!r}: use on or off")
        return "on" if word in ON else "off"
    return value


def base_url(value: Any) -> Any:
    """A provider's base URL as a settings validator takes it: an http(s) URL (http_url),
    without a trailing slash, so paths join on with one; a value not read from text as is."""
    return http_url(value).rstrip("/") if isinstance(value, str) else value


# The settings every process reads, whatever its features, in the order `config check` shows
# them; each feature's own come after (bot.app.settings_models), the platforms' from
# adapters/platforms.py.
GLOBAL_SETTINGS: tuple[type[EnvSettings], ...] = (CoreSettings, FeedSettings, EmbeddingSettings)

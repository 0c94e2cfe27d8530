"""`paperclub config check`, and the settings `paperclub serve` starts from.

`check(env)` reports every variable paperclub reads, grouped, with its value (secrets
masked: only that they are set and how long they are; a database URL without its
password), the default where it is not set, which platforms are configured, and then every
problem, one line each naming the variable and what is wrong. With `connect` it also
opens the database (a SQLite file only if it exists: a check creates nothing) and says
whether it answers and whether its schema is current; nothing else is connected to.

`startup_settings(env, platforms)` is what the serve code calls: all the settings a
process needs, or one ConfigError with a line per problem.

The chat platforms and their settings come from the registry (adapters/platforms.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from adapters import platforms
from bot.ops.defaults import DATABASE_VARIABLES, DEFAULT_DATABASE_SOURCE
from bot.ops.settings import (
    DATABASE,
    RELEVANCE,
    ConfigError,
    CoreSettings,
    EnvSettings,
    database_problem,
    declared,
    environment,
    mask_secret,
    mask_url,
)
from store.database import resolve_database_url


def settings_models() -> list[type[EnvSettings]]:
    """The global settings and every feature's (bot.app.settings_models), in the order
    `config check` shows them: a feature's model is shown without an edit here."""
    from bot.app import settings_models

    return settings_models()


def core_groups() -> dict[str, list[str]]:
    """Every variable of the settings models by its group, in declaration order: a field
    added to a model is shown without an edit here."""
    groups: dict[str, list[str]] = {}
    for settings_cls in settings_models():
        for group, variable, _unset in declared(settings_cls):
            groups.setdefault(group, []).append(variable)
    return groups


def unset_meanings() -> dict[str, str]:
    """What an unset variable means (a platform's own: its settings' UNSET)."""
    return {variable: unset for settings_cls in settings_models() for _, variable, unset in declared(settings_cls)
            if unset}


def secret_names() -> frozenset[str]:
    """Every variable a settings model keeps secret (SecretStr fields)."""
    return platforms.secret_variables()
WIDTH = 30  # the variable-name column


class Startup(NamedTuple):
    core: CoreSettings
    platforms: dict[str, Any]  # every chat platform's settings by name; None: not configured


def startup_settings(env: Mapping[str, str] | None, requested: Iterable[str]) -> Startup:
    """The settings for a process serving the chat platforms `requested` (by name), or
    one ConfigError listing every problem, one per line.

    A platform asked for without its credentials is a problem naming what to set. A
    platform not asked for is read too when any of its variables is set (the scheduler
    posts to every configured platform), so a half-configured one is a problem as well;
    one with none of its variables set is None.
    """
    env = environment(env)
    wanted = list(dict.fromkeys(requested))
    names = [p.name for p in platforms.chat_platforms()]
    problems = [f"{p!r} is not a platform: {platforms.either(names)}" for p in wanted if p not in names]
    core, *_others = [_read(settings_cls, env, problems) for settings_cls in settings_models()]
    read: dict[str, Any] = {}
    for platform in platforms.chat_platforms():
        settings_cls = platform.settings()
        wanted_here = platform.name in wanted or settings_cls.mentioned(env)
        read[platform.name] = _read(settings_cls, env, problems) if wanted_here else None
    if problems:
        raise ConfigError("\n".join(problems))
    return Startup(core, read)


def _read(settings_cls, env: Mapping[str, str], problems: list[str]):
    try:
        return settings_cls.from_env(env)
    except ConfigError as problem:
        problems += str(problem).splitlines()
        return None


def check(env: Mapping[str, str], connect: bool = False) -> tuple[str, int]:
    """The report for `paperclub config check`, and its exit code: 0 if every setting
    can be used, else 1. Not configuring Slack or Discord is fine (console use); setting
    some of a platform's variables but not all it needs is a problem."""
    env = environment(env)
    problems: list[str] = []
    lines = ["paperclub configuration (secrets masked)"]

    core, *_others = [_read(settings_cls, env, problems) for settings_cls in settings_models()]
    for title, names in core_groups().items():
        lines += ["", title]
        lines += [_row(name, env) for name in names]
        if title == DATABASE:
            lines.append(_row("→ in use", env, shown=_database_in_use(env, core)))
            if connect and core is not None:
                lines.append(_row("→ connection", env, shown=database_status(core.database_url, env, problems)))
        if title == RELEVANCE and connect:
            lines.append(_row("→ model", env, shown=model_status(env)))
        if connect:
            lines += [_row("→ connection", env, shown=status) for status in feature_statuses(title, env)]

    chat = platforms.chat_platforms()
    secrets = platforms.secret_variables()
    ready: list[str] = []
    for platform in chat:
        settings_cls = platform.settings()
        if settings_cls.mentioned(env):
            settings = _read(settings_cls, env, problems)
            status = settings.describe() if settings is not None else "not usable (see problems)"
            if settings is not None:
                ready.append(platform.title)
        else:
            status = f"not configured ({platform.needs})"
        lines += ["", f"{platform.title}: {status}"]
        lines += [_row(variable, env, defaults=settings_cls.UNSET, secrets=secrets)
                  for variable in settings_cls.variables()]

    lines.append("")
    if not ready and not problems:
        lines.append(
            f"{_none_configured([p.title for p in chat])}: only the console commands "
            "(paperclub search, paperclub console, ...) will run."
        )
    elif ready:
        lines.append(f"Ready to serve: {', '.join(ready)}")
    if problems:
        lines.append(f"Problems ({len(problems)}):")
        lines += [f"  {problem}" for problem in problems]
    else:
        lines.append("No problems found.")
    return "\n".join(lines), 1 if problems else 0


def _none_configured(titles: list[str]) -> str:
    if len(titles) == 1:
        return f"{titles[0]} is not configured"
    return f"Neither {' nor '.join(titles)} is configured" if titles else "No chat platform is configured"


def _row(name: str, env: Mapping[str, str], shown: str | None = None,
         defaults: Mapping[str, str] | None = None, secrets: frozenset[str] | None = None) -> str:
    if shown is None:
        shown = _shown(name, env, unset_meanings() if defaults is None else defaults,
                       secret_names() if secrets is None else secrets)
    return f"  {name:<{WIDTH}}{shown}"



def _shown(name: str, env: Mapping[str, str], defaults: Mapping[str, str], secrets: frozenset[str]) -> str:
    value = env.get(name)
    if value is None:
        default = defaults.get(name)
        return f"(not set: {default})" if default else "(not set)"
    if name in secrets:
        return mask_secret(value)
    if name in DATABASE_VARIABLES:
        return mask_url(value)
    return value


def _database_in_use(env: Mapping[str, str], core: CoreSettings | None) -> str:
    if core is not None:
        url = core.database_shown
    else:
        url = mask_url(resolve_database_url(env))
    if not any(name in env for name in DATABASE_VARIABLES):
        return f"{url} (the default)"
    if all(name in env for name in DATABASE_VARIABLES):
        return f"{url} (PAPERCLUB_DATABASE_URL wins over DATABASE_URL)"
    return url if core is not None else f"{url} (unusable: see problems)"



CONNECT_TIMEOUT_SECONDS = 5


def feature_statuses(title: str, env: Mapping[str, str]) -> list[str]:
    """What each settings model whose variables are shown under `title` says about the
    service it reaches (`EnvSettings.connection`: a feature's provider answers or not)."""
    statuses = []
    for settings_cls in settings_models():
        if any(group == title for group, _variable, _unset in declared(settings_cls)):
            status = settings_cls.connection(env)
            if status:
                statuses.append(status)
    return statuses


def model_status(env: Mapping[str, str]) -> str:
    """Whether the embedding model loads, from its folder or the runtime's cache (a check
    downloads nothing); not a problem when it does not: search then ranks by words."""
    from bot.search.embedding import EmbeddingConfig, FastEmbedder, ModelUnavailable

    try:
        config = EmbeddingConfig.from_env(env)
    except ValueError:
        return "(see problems)"
    if not config.enabled:
        return "off: search, similar and picks rank by words alone"
    try:
        model = FastEmbedder(config.model, config.model_dir, offline=True)
    except ModelUnavailable as problem:
        return f"unavailable, ranking by words alone: {problem}"
    return f"{model.name} loads ({model.dimension} dimensions)"


def database_status(url: str, env: Mapping[str, str], problems: list[str]) -> str:
    """Whether the database answers and its schema is current, in a few words; a
    database that cannot be used adds a problem naming the variable it came from."""
    from sqlalchemy.engine import make_url

    variable = next((name for name in DATABASE_VARIABLES if name in env), DEFAULT_DATABASE_SOURCE)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_status(url, parsed.database, variable, problems)
    if "connect_timeout" not in parsed.query:
        parsed = parsed.update_query_dict({"connect_timeout": str(CONNECT_TIMEOUT_SECONDS)})
    return _schema_status(url, variable, problems, parsed.render_as_string(hide_password=False))


def _sqlite_status(url: str, path: str | None, variable: str, problems: list[str]) -> str:
    # A check creates nothing: a file that is not there yet is only described.
    if not path or path == ":memory:":
        return "in memory (nothing is kept)"
    if Path(path).exists():
        return _schema_status(url, variable, problems)
    folder = Path(path).absolute().parent
    if not folder.is_dir():
        problems.append(f"{variable}: cannot create {path}: the directory {folder} does not exist")
        return "unusable (see problems)"
    return f"{path} does not exist yet: the first command creates it"


def _schema_status(url: str, variable: str, problems: list[str], connect_url: str | None = None) -> str:
    """Opens the database at `connect_url` (`url` with a connect timeout); messages show `url`."""
    from sqlalchemy.exc import SQLAlchemyError

    from store import Database
    from store.database import DatabaseUrlError

    try:
        db = Database(connect_url or url)
    except DatabaseUrlError as error:
        problems.append(database_problem(url, variable, error))
        return "unusable (see problems)"
    try:
        current, head = db.current_revision(), db.head_revision()
    except SQLAlchemyError as error:
        problems.append(database_problem(url, variable, error))
        return "unreachable (see problems)"
    finally:
        db.dispose()
    if current == head:
        return f"reachable, schema {current} (current)"
    if db.is_sqlite:
        return f"reachable, schema {current or 'empty'}: upgraded to {head} on first use"
    state = f"is at {current}" if current else "is empty"
    problems.append(f"{variable}: the schema {state}, this code needs {head}: run `paperclub db upgrade`")
    return f"reachable, schema {current or 'empty'} (behind: see problems)"

"""The database handle: which URL, one engine, sessions, and schema upgrades."""

from __future__ import annotations

import functools
import json
import os
import re
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import orjson
from sqlalchemy import Connection, Engine, Table, create_engine, event, inspect, text
from sqlalchemy.engine import CursorResult, Result, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SQLiteInsert
    from sqlalchemy.engine.interfaces import DBAPIConnection
    from sqlalchemy.pool import ConnectionPoolEntry

DEFAULT_URL = "sqlite:///paperclub.db"
MIGRATIONS = Path(__file__).parent / "migrations"
_REVISION = re.compile(r"""^(down_revision|revision)\s*(?::[^=]*)?=\s*(?:["']([^"']+)["']|None)""", re.MULTILINE)


def migrations_head(folder: Path = MIGRATIONS / "versions") -> str:
    """The newest migration's revision, read from the migrations' files (the one no other
    revises) without Alembic, which costs a third of a second to import: a database
    standing there is opened without it. tests/test_store.py holds it to Alembic's head."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in folder.glob("*.py"):
        for kind, value in _REVISION.findall(path.read_text(encoding="utf-8")):
            if value:
                (revisions if kind == "revision" else revised).add(value)
    heads = sorted(revisions - revised)
    if len(heads) != 1:
        raise RuntimeError(f"the migrations in {folder} have {len(heads)} heads ({', '.join(heads)}): "
                           "each migration must revise the one before it")
    return heads[0]


@functools.cache
def schema_head() -> str:
    """The newest migration's revision, read once per process."""
    return migrations_head()


@overload
def as_utc(moment: datetime) -> datetime: ...
@overload
def as_utc(moment: None) -> None: ...
def as_utc(moment: datetime | None) -> datetime | None:
    """A stored timestamp as an aware UTC datetime: SQLite hands back naive datetimes
    for what was written in UTC; PostgreSQL keeps the zone."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=timezone.utc)


def upsert_insert(session: Session, table: type[DeclarativeBase]) -> PostgresInsert | SQLiteInsert:
    """An INSERT with on_conflict_do_nothing / on_conflict_do_update for this session's
    database: both dialects we support spell ON CONFLICT the same way."""
    # Imported here: PostgreSQL's dialect costs ~50 ms of start-up a search never uses.
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def table_of(model: type[DeclarativeBase]) -> Table:
    """A model's Table, for Core statements that need one (its name, INSERT, UPDATE):
    SQLAlchemy types `__table__` as any FromClause, since a class may map a SELECT;
    every model here maps a table of its own."""
    table = model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} maps {table!r}, not a table")
    return table


def dml_result(result: Result[Any]) -> CursorResult[Any]:
    """The result of an INSERT, UPDATE or DELETE run by Session.execute, which types it as
    any Result: it is a CursorResult, which counts the rows matched (`rowcount`) and holds
    an inserted row's primary key."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"not the result of an INSERT, UPDATE or DELETE: {result!r}")
    return result


class SchemaOutOfDate(RuntimeError):
    """The database is behind the code; the message says what to run."""


class DatabaseUrlError(ValueError):
    """A URL no engine can be made from: unparseable, an unknown dialect, or a driver that
    is not installed. SQLAlchemy raises three unrelated kinds of error for these (a port
    that is not a number is a bare ValueError); callers catch this one."""


def resolve_database_url(env: Mapping[str, str] | None = None) -> str:
    """PAPERCLUB_DATABASE_URL, else DATABASE_URL, else ./paperclub.db.

    Hosts hand out `postgres://` URLs, which SQLAlchemy rejects; and a bare
    `postgresql://` would pick psycopg2, which we do not install: both become
    `postgresql+psycopg://`.
    """
    env = os.environ if env is None else env
    url = env.get("PAPERCLUB_DATABASE_URL") or env.get("DATABASE_URL") or DEFAULT_URL
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def mask_url(url: str) -> str:
    """A database URL with its password hidden (in the user part or as `?password=`),
    even when SQLAlchemy cannot parse it."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        return _mask_unparsed(url)
    return _SECRET_IN_QUERY.sub(r"\1***", parsed.render_as_string(hide_password=True))


# Query parameters libpq takes a password from: `?password=...`, `?sslpassword=...`.
_SECRET_IN_QUERY = re.compile(r"([?&](?:ssl)?password=)([^&#]*)", re.IGNORECASE)


def _mask_unparsed(url: str) -> str:
    # Hide everything between the user name and the last "@", and any password parameter.
    url = _SECRET_IN_QUERY.sub(r"\1***", url)
    head, at, host = url.rpartition("@")
    if not at:
        return url
    scheme, sep, userinfo = head.rpartition("://")
    user, colon, _password = userinfo.partition(":")
    return f"{scheme}{sep}{user}{colon}{'***' if colon else ''}@{host}"


def url_secrets(url: str) -> list[str]:
    """The passwords written in a database URL, to scrub from a driver's error message."""
    found = [value for _, value in _SECRET_IN_QUERY.findall(url) if value]
    try:
        password = make_url(url).password
    except (ArgumentError, ValueError):
        password = url.rpartition("@")[0].partition("://")[2].partition(":")[2] or None
    return [str(password), *found] if password else found


def json_text(value: Any) -> str:
    """A JSON column's text, written by orjson: an import writes each source's fields,
    abstract included, and json.dumps was 7% of a large import's time (orjson takes an
    eighth of that). What orjson refuses and json writes (an integer past 64 bits, a
    lone surrogate) is written by json, so a column takes what it took before; the one
    other difference, NaN written as null, no column meets: none holds a float."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value)


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # Foreign keys are off by default in SQLite; WAL lets searches read while an import
    # writes; the busy timeout makes a second writer wait instead of failing at once.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


class Database:
    """One engine and its session factory for a URL; passed to whoever needs state."""

    def __init__(self, url: str, *, echo: bool = False):
        self.url = url
        try:
            # A server's connections die with its restarts: each is pinged as the pool
            # hands it out. A SQLite file's never do, and a ping per session is a query
            # per session (three of them in a search command).
            ping = make_url(url).get_backend_name() != "sqlite"
            self.engine: Engine = create_engine(
                url, echo=echo, pool_pre_ping=ping, json_serializer=json_text
            )
        except (ArgumentError, ValueError, ImportError) as problem:  # NoSuchModuleError is an ArgumentError
            raise DatabaseUrlError(str(problem)) from problem
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        _databases.add(self)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def describe(self) -> str:
        """The URL with any password hidden, for messages and logs."""
        return mask_url(self.url)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back if it raises."""
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A transaction without the ORM, for the statements every command runs (a
        third of a millisecond a statement less than a session): committed when the
        block ends, rolled back if it raises."""
        with self.engine.begin() as connection:
            yield connection

    # --- schema -------------------------------------------------------------------

    def _alembic_config(self) -> Config:
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["engine"] = self.engine
        return config

    def current_revision(self) -> str | None:
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    def head_revision(self) -> str | None:
        from alembic.script import ScriptDirectory

        return ScriptDirectory.from_config(self._alembic_config()).get_current_head()

    def upgrade(self) -> tuple[str | None, str | None]:
        """Apply every pending migration; returns (before, after) revisions."""
        from alembic import command

        before = self.current_revision()
        command.upgrade(self._alembic_config(), "head")
        return before, self.current_revision()

    def _at_head(self) -> bool:
        """Whether the database stands at the newest migration, read without Alembic (a third of a
        second to import, for a command that answers in less): anything else, even no
        version table, goes the long way through Alembic."""
        with self.engine.connect() as connection:
            if not inspect(connection).has_table("alembic_version"):
                return False
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        return [tuple(row) for row in rows] == [(schema_head(),)]

    def ensure_schema(self) -> None:
        """Bring a SQLite file up to date on first use; PostgreSQL is upgraded by the
        release step (`paperclub db upgrade`), so a stale one is an error that says so."""
        if self._at_head() or self.current_revision() == self.head_revision():
            return
        if self.is_sqlite:
            self.upgrade()
            return
        raise SchemaOutOfDate(
            f"the database at {self.describe()} is at schema {self.current_revision() or 'none'}, "
            f"the code needs {self.head_revision()}: run `paperclub db upgrade`"
        )

    def dispose(self) -> None:
        self.engine.dispose()


_databases: weakref.WeakSet[Database] = weakref.WeakSet()  # every handle this process opened


def close_databases() -> None:
    """Close every connection this process holds: for a process that leaves without the
    interpreter's teardown (adapters.cli.main.run), which would otherwise close them. A
    SQLite connection's close is what folds the write-ahead log back into the file."""
    for database in list(_databases):
        database.dispose()


def open_database(url: str | None = None) -> Database:
    """The database at `url` (else the environment's), its schema checked: a SQLite file
    upgraded on first use, a stale PostgreSQL one an error that says to upgrade it."""
    db = Database(url or resolve_database_url())
    db.ensure_schema()
    return db

"""A whole database to one file and back: `paperclub backup` and `paperclub restore`.

A SQLite database is backed up with SQLite's online backup API: the copy is one
consistent snapshot even while `paperclub serve` writes, and the file is itself a SQLite
database. A PostgreSQL database is backed up by `pg_dump` in its custom format (`-Fc`)
and restored by `pg_restore` and `psql`, when PostgreSQL's client programs are installed. The first
bytes of a file tell which of the two it is, so a restore refuses a file of the other kind,
or a file that is neither, before it changes anything.

A password in the database URL reaches pg_dump and psql through PGPASSWORD, never on
their command line (where `ps` would show it to every user of the machine)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from sqlalchemy import MetaData, func, inspect, select
from sqlalchemy.engine import URL, make_url

from store.database import Database, mask_url

SQLITE = "SQLite"
POSTGRES = "PostgreSQL"
SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
PG_DUMP_MAGIC = b"PGDMP"  # the first 5 bytes of a pg_dump custom-format archive
VERSION_TABLE = "alembic_version"  # every paperclub database has it: the schema's revision
CLIENT_PROGRAMS = ("PostgreSQL's client programs (Debian/Ubuntu: apt install postgresql-client; "
                   "the server's major version or newer)")


class BackupError(Exception):
    """A backup or restore that cannot be done; str() is one line saying why and what to do.
    Raised before anything was changed."""


def kind_of(path: Path) -> str:
    """SQLITE or POSTGRES, from the file's first bytes; BackupError if it is neither or cannot be read."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise BackupError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BackupError(f"{path} is a directory, not a backup file") from None
    except OSError as problem:
        raise BackupError(f"{path} cannot be read: {problem.strerror}") from None
    if head == SQLITE_MAGIC:
        return SQLITE
    if head.startswith(PG_DUMP_MAGIC):
        return POSTGRES
    raise BackupError(f"{path} is not a paperclub backup: neither a SQLite database nor a pg_dump archive "
                      "(`paperclub backup FILE` writes one; a JSON Lines export is imported with `paperclub import`)")


def kind_of_database(db: Database) -> str:
    return SQLITE if db.is_sqlite else POSTGRES


def sqlite_path(db: Database) -> Path:
    """The file of a SQLite database; BackupError for one in memory (nothing to back up)."""
    name = make_url(db.url).database
    if not name or name == ":memory:" or name.startswith("file:"):
        raise BackupError(f"{db.describe()} is not a database file: there is nothing to back up or restore")
    return Path(name)


# --- backup ---------------------------------------------------------------------------------


def backup(db: Database, target: Path) -> None:
    """Write the whole database to `target` (written beside it first, then renamed over it,
    so a failed backup leaves an older one at that name untouched)."""
    if target.is_dir():
        raise BackupError(f"{target} is a directory: give the backup's file name")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a directory: create it first")
    if db.is_sqlite and sqlite_path(db).resolve() == target.resolve():
        raise BackupError(f"{target} is the database itself: give another file name")
    partial = target.with_name(target.name + ".partial")
    try:
        if db.is_sqlite:
            _sqlite_backup(sqlite_path(db), partial)
        else:
            _pg_dump(db.url, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _sqlite_backup(source: Path, target: Path) -> None:
    if not source.is_file():
        raise BackupError(f"{source}: no such database file")
    # Read-only: a backup never creates or changes the database. The backup API copies
    # pages under a read lock that writers (in WAL mode) do not wait for; a write made
    # meanwhile through another connection restarts the copy, so what lands is one snapshot.
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
        # The copy took the database's journal mode: WAL would leave -wal and -shm files
        # beside it the first time anything opens it. A backup is one self-contained file.
        writer.execute("PRAGMA journal_mode=DELETE")
    finally:
        writer.close()
        reader.close()


def _pg_dump(url: str, target: Path) -> None:
    _run([_client("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", f"--file={target}",
          *_connection(url)], _password_env(url), f"pg_dump of {mask_url(url)}")


# --- restore --------------------------------------------------------------------------------


def check_restorable(db: Database, source: Path) -> str:
    """The kind of `source`, once it is known to be a paperclub backup of the database's kind."""
    kind = kind_of(source)
    here = kind_of_database(db)
    if kind != here:
        raise BackupError(_mismatch(source, kind, db))
    if kind == SQLITE:
        _check_sqlite_backup(source)
    else:
        _run([_client("pg_restore"), "--list", str(source)], {}, f"reading {source}")
    return kind


def _mismatch(source: Path, kind: str, db: Database) -> str:
    if kind == SQLITE:
        return (f"{source} is a SQLite backup and {db.describe()} is PostgreSQL: restore it into a SQLite file "
                "(--database-url sqlite:///paperclub.db); moving a group from SQLite to PostgreSQL is not built in")
    return (f"{source} is a PostgreSQL backup (pg_dump archive) and {db.describe()} is SQLite: restore it into a "
            "PostgreSQL database (--database-url postgresql://...)")


def _check_sqlite_backup(source: Path) -> None:
    try:
        reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            found = reader.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                                   (VERSION_TABLE,)).fetchone()[0]
        finally:
            reader.close()
    except sqlite3.DatabaseError as problem:
        raise BackupError(f"{source} cannot be read as a SQLite database: {problem}") from None
    if not found:
        raise BackupError(f"{source} is a SQLite database but not paperclub's (it has no schema revision)")


def contents(db: Database) -> dict[str, int]:
    """The tables of the database that hold rows, and how many (the schema's revision left out)."""
    with db.engine.connect() as connection:
        tables = [name for name in inspect(connection).get_table_names() if name != VERSION_TABLE]
        metadata = MetaData()
        metadata.reflect(connection, only=tables)
        counts = {name: connection.scalar(select(func.count()).select_from(metadata.tables[name]))
                  for name in sorted(tables)}
    return {name: count for name, count in counts.items() if count}


def restore(db: Database, source: Path) -> None:
    """Replace the database's contents with the backup's (checked by check_restorable first).
    The engine's connections are closed first; the caller runs the migrations after."""
    db.dispose()
    if db.is_sqlite:
        _sqlite_restore(source, sqlite_path(db))
    else:
        _pg_restore(db, source)
    db.dispose()


def _sqlite_restore(source: Path, target: Path) -> None:
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a directory: create it first")
    # Through the backup API into the database's own file: every page replaced under the
    # database's lock, its write-ahead log kept consistent (a copied file would not be).
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    writer = sqlite3.connect(target, timeout=30)
    try:
        reader.backup(writer)
    finally:
        writer.close()
        reader.close()


def _pg_restore(db: Database, source: Path) -> None:
    # What is there goes first, tables the backup does not have included (a newer schema's),
    # so the migrations after the restore start from the backup's revision alone. pg_restore
    # writes the backup as SQL first, whole (a cut or damaged archive fails here, before any
    # change); then psql runs the drops and that SQL in one transaction, all or nothing.
    with db.engine.connect() as connection:
        tables = inspect(connection).get_table_names()
    drops = "".join(f'DROP TABLE IF EXISTS "{name}" CASCADE;\n' for name in tables) or "SELECT 1;"
    with tempfile.TemporaryFile() as script:
        _run([_client("pg_restore"), "--no-owner", "--no-privileges", "--file=-", str(source)], {},
             f"reading {source}", stdout=script)
        script.seek(0)
        _run([_client("psql"), "--no-psqlrc", "--quiet", "--single-transaction", "--set=ON_ERROR_STOP=1",
              f"--command={drops}", "--file=-", *_connection(db.url)],
             _password_env(db.url), f"restoring into {db.describe()}", stdin=script)


# --- PostgreSQL's client programs -----------------------------------------------------------


def _client(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        raise BackupError(f"{program} is not installed: a PostgreSQL backup needs {CLIENT_PROGRAMS}")
    return found


def _libpq_url(url: str) -> URL:
    """The SQLAlchemy URL as libpq reads it: no driver name, no password (it goes by PGPASSWORD)."""
    parsed = make_url(url)
    query = {key: value for key, value in parsed.query.items() if key.lower() != "password"}
    # URL.create, not parsed.set(password=None): set() takes None as "leave it as it is".
    return URL.create("postgresql", username=parsed.username, host=parsed.host, port=parsed.port,
                      database=parsed.database, query=query)


def _connection(url: str) -> list[str]:
    return [f"--dbname={_libpq_url(url).render_as_string(hide_password=False)}"]


def _password_env(url: str) -> dict[str, str]:
    parsed = make_url(url)
    password = parsed.password or parsed.query.get("password")
    if isinstance(password, tuple):
        password = password[-1]
    return {"PGPASSWORD": str(password)} if password else {}


def _run(command: list[str], env: Mapping[str, str], what: str, stdin: IO[bytes] | None = None,
         stdout: IO[bytes] | None = None) -> None:
    done = subprocess.run(command, env={**os.environ, **env}, stdin=stdin,
                          stdout=stdout if stdout is not None else subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    if done.returncode != 0:
        raise BackupError(f"{what} failed: {_first_line(done.stderr.decode(errors='replace'), done.returncode)}")


def _first_line(stderr: str, status: int) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[0] if lines else f"exit status {status}"

"""`paperclub backup FILE` and `paperclub restore FILE [--force]`: the whole database, every
channel's history, schedule, votes, polls, meetings, notes, follows and Zotero link, to one
file and back (store/backups.py says how). A restore refuses to replace a database that
holds anything unless --force is given; after it, the migrations bring an older backup up
to this code's schema and the search index is deleted, to be rebuilt from the database."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from store import Database, resolve_database_url
from store.backups import BackupError, backup, check_restorable, contents, restore

SECRET_REMINDER = ("Keep PAPERCLUB_SECRET_KEY apart from it, safely: the Zotero keys given in chat are encrypted with "
                   "it, and a restore under another secret cannot read them.")


def _open(args: argparse.Namespace) -> Database:
    """The database, a server's answering checked first: one that does not answer is the one
    line every command gives (adapters.cli.main.failed), not a pg_dump error. A SQLite file
    is not opened here: connecting would create one that does not exist."""
    db = Database(args.database_url or resolve_database_url())
    if not db.is_sqlite:
        with db.engine.connect():
            pass
    return db


def cmd_backup(args: argparse.Namespace) -> int:
    db = _open(args)
    target = Path(args.file)
    try:
        backup(db, target)
    except BackupError as problem:
        return _fail(problem)
    print(f"Backed up {db.describe()} to {target} ({target.stat().st_size:,} bytes). {SECRET_REMINDER}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    db = _open(args)
    source = Path(args.file)
    try:
        check_restorable(db, source)
        held = contents(db)
        if held and not args.force:
            return _fail(BackupError(f"{db.describe()} is not empty ({_summary(held)}): restore replaces all of it; "
                                     "give --force to do so (a `paperclub backup` of it first is wise). "
                                     "Nothing was changed."))
        restore(db, source)
    except BackupError as problem:
        return _fail(problem)
    before, after = db.upgrade()
    print(f"Restored {source} into {db.describe()}" + (f", replacing {_summary(held)}" if held else "") + ".")
    print(f"Schema {before or 'empty'} -> {after}." if before != after else f"Schema {after}: current.")
    print(_drop_index(db.url))
    return 0


def _summary(counts: dict[str, int]) -> str:
    """The biggest tables first, the rest counted: 'papers 1,204 rows, posts 88, ... and 9 more tables'."""
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    shown = ", ".join(f"{name} {count:,}" for name, count in ranked[:4])
    rest = len(ranked) - 4
    return f"rows in {shown}" + (f" and {rest} more tables" if rest > 0 else "")


def _drop_index(url: str) -> str:
    """The search index (and the vector snapshots under it) described the old database: it goes,
    and the next start builds it from the restored one."""
    from bot.search.builtin.files import default_index_dir

    folder = default_index_dir(url)
    if folder is None or not folder.exists():
        return "No search index to drop: the next start builds it from the database."
    shutil.rmtree(folder)
    return f"Deleted the search index at {folder}: the next start (or search) rebuilds it from the database."


def _fail(problem: BackupError) -> int:
    print(f"error: {problem}", file=sys.stderr)
    return 1

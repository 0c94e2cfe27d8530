"""The command line costs only what a command uses (issue 31): parsing, `--version` and
every `--help` import none of the heavy libraries, and each subcommand's function is
found where its parser says."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from adapters.cli.lazy import Lazy
from adapters.cli.main import build_parser
from adapters.platforms import PLATFORMS
from tests.cli.test_help import commands
from tests.conftest import REPO

# What a parse must not load: the database layer, the search engine's numerics, the
# settings models, the platforms' libraries, the pages' templates, the core and any
# feature's code. (bot.app and the features' packages are read: they name the features'
# subcommands and pages, and are cheap by design.)
HEAVY = ("sqlalchemy", "alembic", "numpy", "numba", "scipy", "pydantic", "emoji", "rapidfuzz", "jinja2",
         "icalendar", "waitress", "apscheduler", "bibtexparser", "rich",
         "bot.core", "bot.search.engine", "bot.services.models", "bot.services.posts", "bot.daily.commands",
         "bot.memory.commands", "store",
         *(library for platform in PLATFORMS for library in platform.libraries))

PROBE = """
import json, sys
from adapters.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_by(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after `paperclub ARGV` parsed (and exited)."""
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("argv", [
    ("--version",),
    ("--help",),
    ("search", "--help"),
    ("serve", "--help"),
    ("import", "--help"),
    ("feed", "add", "--help"),
    ("slack", "manifest", "--help"),
    ("bench", "--help"),
    ("export", "--help"),
])
def test_parsing_imports_no_heavy_library(argv):
    assert heavy(loaded_by(*argv)) == []


def test_a_command_loads_what_it_runs():
    """The probe would pass for a command line that ran nothing: a real command loads
    the database layer, through its own module."""
    modules = loaded_by("--database-url", "sqlite:////nonexistent-dir/x.db", "db", "current")
    assert {"sqlalchemy", "adapters.cli.commands", "store"} <= modules


def test_every_subcommand_names_a_function_that_exists():
    """A misspelt "module:function" would show only when that command runs."""
    import importlib

    checked = 0
    for path, sub, _ in commands(build_parser()):
        func = sub.get_default("func")
        if isinstance(func, Lazy):
            module = importlib.import_module(func.module)
            assert callable(getattr(module, func.__name__, None)), (
                f"paperclub {' '.join(path)}: {func.module}:{func.__name__}")
            checked += 1
    assert checked >= 14  # (a feature's subcommand, `export`, names its function itself)


EXIT_PROBE = """
import atexit, sys
from adapters.cli import main as cli

class Freed:  # says so when teardown frees it, as it frees every module's globals
    def __del__(self):
        print("torn down", file=sys.stderr)

kept = Freed()

def handler_after_the_command():  # registered after run()'s: Python runs it before
    print("handler ran", file=sys.stderr)

cli.main = lambda: (atexit.register(handler_after_the_command), print("x" * 200_000), int(sys.argv[1]))[-1]
cli.run()
"""


@pytest.mark.parametrize("status", [0, 2])
def test_the_script_leaves_without_teardown_keeping_status_output_and_handlers(status):
    """`paperclub` skips the interpreter's teardown once a command has returned: its exit
    status, all it printed into a pipe (past any buffer) and the exit handlers its
    command registered all survive; what teardown would free is never freed."""
    done = subprocess.run([sys.executable, "-c", EXIT_PROBE, str(status)], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == status
    assert done.stdout == "x" * 200_000 + "\n"
    assert done.stderr == "handler ran\n"


def test_the_installed_script_and_python_m_use_run():
    """Both ways of starting paperclub go through run(), not main()."""
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["paperclub"] == "adapters.cli.main:run"
    assert "run()" in (REPO / "adapters" / "cli" / "__main__.py").read_text()


def test_a_command_that_leaves_early_still_closes_its_database(tmp_path):
    """Leaving without teardown must not leave the write-ahead log behind: closing the
    last SQLite connection folds it into the file, so the file alone (as a backup copies
    it) holds what the import wrote."""
    import shutil
    import sqlite3

    db = tmp_path / "club.db"
    corpus = REPO / "bot" / "demo_corpus" / "iclr2021-openreview.md"
    done = subprocess.run([sys.executable, "-m", "adapters.cli", "--database-url", f"sqlite:///{db}",
                           "import", "--collection", "c", str(corpus)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "club.db-wal").exists()
    shutil.copy(db, tmp_path / "copy.db")
    with sqlite3.connect(tmp_path / "copy.db") as copy:
        assert copy.execute("select count(*) from papers").fetchone()[0] > 100

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
from tests.cli.test_help import commands
from tests.conftest import REPO

# What a parse must not load: the database layer, the search engine's numerics, the
# settings models, the platforms' libraries, the pages' templates, the bot's wiring.
HEAVY = ("sqlalchemy", "alembic", "numpy", "numba", "scipy", "pydantic", "emoji", "rapidfuzz", "jinja2",
         "icalendar", "slack_bolt", "slack_sdk", "discord", "waitress", "apscheduler", "bibtexparser", "rich",
         "bot.app", "bot.core", "bot.search.engine", "store")

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
                          timeout=60)
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
            assert callable(getattr(module, func.__name__, None)), f"paperclub {' '.join(path)}: {func.module}:{func.__name__}"
            checked += 1
    assert checked >= 15

"""The wheel leaves adapters.bench out (pyproject's packages.find exclude): from an installed
wheel the bench commands say in one line what to do, exit 2, and show no traceback; the
sandbox's fakes (adapters.fakes) are shipped, so the sandbox runs from a wheel."""

from __future__ import annotations

import sys
import tomllib

import pytest

from adapters.cli.main import NO_BENCH, main
from tests.conftest import REPO


@pytest.fixture
def no_bench_package(monkeypatch):
    """As in a wheel: `import adapters.bench...` raises ModuleNotFoundError for adapters.bench."""
    # Loaded by an earlier test, the sandbox goes too: it must load again without adapters.bench.
    for name in [n for n in sys.modules if n.startswith("adapters.bench.") or n == "adapters.cli.sandbox"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "adapters.bench", None)


@pytest.mark.parametrize("argv", [
    ["bench", "--sizes", "200", "--engines", "paperclub"],
    ["tick-bench", "--channels", "1"],
    ["slack", "bench", "--requests", "1"],
])
def test_a_bench_command_without_the_bench_package_says_to_use_a_checkout(no_bench_package, argv, capsys,
                                                                          tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # tick-bench's default database, were it to get that far
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err == f"error: {NO_BENCH}\n" and out == ""
    assert "pip install -e '.[bench]'" in NO_BENCH
    assert not (tmp_path / "paperclub.db").exists()


def test_another_missing_module_is_not_mistaken_for_the_bench(monkeypatch):
    from adapters.cli import commands
    from adapters.cli import main as cli

    def needs_rich(args):
        from rich.progress import Progress  # noqa: F401

    monkeypatch.setitem(sys.modules, "rich.progress", None)
    monkeypatch.setattr(commands, "cmd_db", needs_rich)  # found there when `db` runs
    with pytest.raises(ModuleNotFoundError, match=r"rich\.progress"):
        cli.main(["db", "current"])


def test_the_wheel_excludes_the_bench_package():
    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert {"adapters.bench", "adapters.bench.*"} <= set(find["exclude"])


def test_the_sandbox_and_its_fakes_load_without_the_bench_package(no_bench_package):
    """What `paperclub sandbox` runs comes with the wheel: its module and every fake load."""
    import importlib

    sandbox = importlib.import_module("adapters.cli.sandbox")
    for fake in ("arxiv", "openalex", "zotero", "slack_api", "llm"):
        importlib.import_module(f"adapters.fakes.{fake}")
    assert callable(sandbox.cmd_sandbox)


def test_the_wheel_ships_the_fakes():
    """packages.find takes adapters* and leaves out only the benchmarks."""
    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert "adapters*" in find["include"]
    assert not any(pattern.startswith("adapters.fakes") for pattern in find["exclude"])

"""The layout keeps the core free of its faces: nothing under bot/ imports an adapter or a
platform library, and every package says in its first line what it is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

# What only the faces may import: our own adapters, and the platforms' libraries and server.
FACES = ("adapters", "slack_bolt", "slack_sdk", "discord", "waitress")
LOOSE_CORE_MODULES_MAX = 8


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, those inside functions included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def reaches_a_face(module: str) -> bool:
    return module.split(".")[0] in FACES


def core_modules() -> list[Path]:
    return sorted((REPO / "bot").rglob("*.py"))


def test_the_walk_sees_the_whole_core():
    names = {path.relative_to(REPO / "bot").as_posix() for path in core_modules()}
    assert {"core.py", "search/bm25.py", "daily/posts.py", "votes/polls.py", "ops/logs.py"} <= names


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_core_module_imports_an_adapter_or_a_platform_library(path):
    offending = [f"line {line}: {module}" for line, module in imported_modules(path) if reaches_a_face(module)]
    assert not offending, f"{path.relative_to(REPO)} imports {offending}"


def test_the_guard_catches_an_import_inside_a_function(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def later():\n    from adapters.slack.app import manifest\n    import discord.ui\n")
    assert [m for _, m in imported_modules(sneaky) if reaches_a_face(m)] == ["adapters.slack.app", "discord.ui"]


def test_bot_has_few_loose_modules_and_a_package_per_domain():
    loose = sorted(p.name for p in (REPO / "bot").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= LOOSE_CORE_MODULES_MAX, loose
    packages = {p.parent.name for p in (REPO / "bot").glob("*/__init__.py")}
    assert {"search", "corpus", "daily", "votes", "meetings", "ops"} <= packages
    assert {p.parent.name for p in (REPO / "adapters").glob("*/__init__.py")} >= {"cli", "slack", "discord"}


@pytest.mark.parametrize(
    "init",
    sorted(list((REPO / "bot").rglob("__init__.py")) + list((REPO / "adapters").rglob("__init__.py"))),
    ids=lambda p: p.relative_to(REPO).as_posix(),
)
def test_every_package_starts_with_a_one_line_docstring(init):
    tree = ast.parse(init.read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree)
    assert docstring, f"{init.relative_to(REPO)} has no docstring"
    assert "\n" not in docstring.split("\n\n")[0].strip(), "the first paragraph is one line"

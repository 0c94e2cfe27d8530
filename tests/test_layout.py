"""The layout: layers that only import downwards (no loops between packages), a core free
of its faces (nothing under bot/ imports an adapter or a platform library), no engine
arrays outside the search package, and every package saying in its first line what it is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from adapters.platforms import PLATFORMS
from bot.app import FEATURES
from tests.conftest import REPO

# What only the faces may import: our own adapters, the HTTP server, and every platform's
# library as the registry names it.
FACES = ("adapters", "waitress", *(library for platform in PLATFORMS for library in platform.libraries))
LOOSE_CORE_MODULES_MAX = 8

# The layers, lowest first. A package imports only packages in layers below its own (and
# itself): never one beside it or above, so no two packages import each other. The
# features (bot/app.py's FEATURES) share one layer: no feature imports another, and a new
# one joins them without an edit here. shared/DESIGN.md draws the same picture.
LAYERS: list[tuple[str, ...]] = [
    ("store",),  # the ground: the shared Base and tables, the database handle, migrations
    ("bot.messages", "bot.collector"),  # the neutral message model; bulk-work helpers
    ("bot.grammar",),  # the command grammar every platform shares
    ("bot.corpus",),  # papers: readers, the library, identifiers
    ("bot.search",),  # the engine interface, what engines share, the built-in engine
    ("bot.ops",),  # settings from the environment, logs, heartbeats, health
    ("bot.channels", "bot.cards"),  # shared parts every feature uses
    ("bot.services",),  # shared services several features use: posts, votes, polls, meetings, links
    ("bot.feature",),  # what a feature is to the core, and what it is built from
    tuple(f"bot.{name}" for name in FEATURES),  # the features, side by side
    ("bot.core",),  # dispatch
    ("bot.scheduler", "bot.app"),  # the minute's job; the wiring
    ("adapters",),  # the faces
]
LAYER_OF = {package: level for level, names in enumerate(LAYERS) for package in names}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, those inside functions included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def package_of(module: str) -> str | None:
    """The layer-table entry a module belongs to: "bot.search" for bot.search.builtin.service,
    "bot.core" for bot.core, "store" for store.models; None outside the project."""
    parts = module.split(".")
    if parts[0] in ("store", "adapters"):
        return parts[0]
    if parts[0] == "bot" and len(parts) > 1:
        return f"bot.{parts[1]}"
    return None


def project_modules() -> list[Path]:
    return sorted(p for top in ("bot", "store", "adapters") for p in (REPO / top).rglob("*.py"))


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def upward_imports(path: Path) -> list[str]:
    return upward(package_of(module_name(path)), imported_modules(path))


def upward(own: str | None, imports: list[tuple[int, str]]) -> list[str]:
    """The imports (line, module) of a module of package `own` that reach a package in
    its own layer or above."""
    found = []
    for line, module in imports:
        target = package_of(module)
        if target is None or target == own or own is None:
            continue
        if target not in LAYER_OF or own not in LAYER_OF:
            found.append(f"line {line}: {module} (a package the layer table does not list)")
        elif LAYER_OF[target] >= LAYER_OF[own]:
            found.append(f"line {line}: {module} (layer {LAYER_OF[target]}, not below {LAYER_OF[own]})")
    return found


def test_every_package_is_in_the_layer_table():
    packages = {package_of(module_name(p)) for p in project_modules()} - {None}
    assert packages <= set(LAYER_OF), sorted(packages - set(LAYER_OF))


@pytest.mark.parametrize("path", project_modules(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_imports_only_run_down_the_layers(path):
    offending = upward_imports(path)
    assert not offending, f"{path.relative_to(REPO)} imports {offending}"


def test_no_feature_package_imports_another():
    """Features side by side: what several of them share is a service below them."""
    features = {f"bot.{name}" for name in FEATURES}
    offending = []
    for path in project_modules():
        own = package_of(module_name(path))
        if own in features:
            offending += [f"{path.relative_to(REPO)}:{line} imports {module}" for line, module in imported_modules(path)
                          if package_of(module) in features - {own}]
    assert not offending, offending


def test_the_layer_check_catches_an_import_beside_or_above(tmp_path):
    daily = tmp_path / "bot" / "daily"
    daily.mkdir(parents=True)
    (daily / "picks.py").write_text("from bot.votes.commands import VotesFeature\nfrom bot.lookup import x\n"
                                    "from bot.search.engine import SearchBackend\n")
    wrong = upward("bot.daily", imported_modules(daily / "picks.py"))
    assert [w.split()[2] for w in wrong] == ["bot.votes.commands", "bot.lookup"]


def test_nothing_outside_search_touches_the_engines_arrays():
    """The search seam: the rest of the bot ranks through the engine's interface, never
    its numpy arrays, document numbers or masks."""
    offending = []
    for path in project_modules():
        if module_name(path).startswith(("bot.search", "adapters.bench")):
            continue
        for line, module in imported_modules(path):
            if module.split(".")[0] in ("numpy", "scipy", "numba"):
                offending.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert not offending, offending


def reaches_a_face(module: str) -> bool:
    return module.split(".")[0] in FACES


def core_modules() -> list[Path]:
    return sorted((REPO / "bot").rglob("*.py"))


def test_the_walk_sees_the_whole_core():
    names = {path.relative_to(REPO / "bot").as_posix() for path in core_modules()}
    assert {"core.py", "search/builtin/bm25.py", "services/posts.py", "services/polls.py", "ops/logs.py"} <= names


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_core_module_imports_an_adapter_or_a_platform_library(path):
    offending = [f"line {line}: {module}" for line, module in imported_modules(path) if reaches_a_face(module)]
    assert not offending, f"{path.relative_to(REPO)} imports {offending}"


def test_the_platforms_libraries_are_faces():
    assert {"slack_bolt", "slack_sdk", "discord"} <= set(FACES)


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

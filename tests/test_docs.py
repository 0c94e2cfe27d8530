"""The README and the manual in docs/: the manual builds with no broken link or anchor, the
README stays short and keeps the lines CI reads, and every variable the code reads is documented."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from adapters import platforms
from adapters.manual import MARKER, rendered, settings_table
from tests.conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
CONFIGURATION = DOCS / "configuration.md"
SOURCE_DIRS = ("bot", "adapters", "store")
README_MAX_LINES = 250
TEST_COMMAND = 'pip install -e ".[test]" && pytest'
QUICK_START = "pip install -e . && paperclub demo\n" + TEST_COMMAND + "\n"

# A string literal that is a whole variable name: PAPERCLUB_..., DATABASE_URL, SLACK_...,
# DISCORD_..., PORT, XDG_CACHE_HOME. A prefix such as "PAPERCLUB_SLACK_" (ends in "_") is not one.
VARIABLE = re.compile(
    r"""["'](PAPERCLUB_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|SLACK_[A-Z0-9_]*[A-Z0-9]"""
    r"""|DISCORD_[A-Z0-9_]*[A-Z0-9]|PORT|XDG_CACHE_HOME)["']"""
)
# Read by the test suite and CI only, never by paperclub itself.
TEST_ONLY = frozenset({"PAPERCLUB_TEST_POSTGRES_URL", "PAPERCLUB_REQUIRE_POSTGRES", "PAPERCLUB_REQUIRE_BROWSER",
                       "PAPERCLUB_EXPORT_EXAMPLES"})


def variables_read(sources: Iterable[str]) -> set[str]:
    """The environment variable names that appear as string literals in these sources."""
    return {name for text in sources for name in VARIABLE.findall(text)} - TEST_ONLY


def variables_declared() -> set[str]:
    """Every chat platform's variables, read from its settings class through the registry
    (adapters/platforms.py): a new platform's names need no family in VARIABLE."""
    return set(platforms.variables())


def undocumented(sources: Iterable[str], documentation: str) -> list[str]:
    """The names the sources read, or a platform declares, that the documentation never
    names (as `NAME`)."""
    names = variables_read(sources) | variables_declared()
    return sorted(name for name in names if f"`{name}`" not in documentation)


def code_sources() -> list[str]:
    return [
        path.read_text(encoding="utf-8")
        for directory in SOURCE_DIRS
        for path in sorted((REPO / directory).rglob("*.py"))
    ]


def test_the_manual_builds_with_no_broken_link_anchor_or_page_left_out(tmp_path):
    """mkdocs.yml sets strict and turns missing pages, anchors, absolute links and pages left
    out of the nav into warnings, so any of them fails the build."""
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (site / "index.html").is_file() and (site / "configuration" / "index.html").is_file()
    assert (site / "bench.png").is_file()  # performance.md shows it


def test_mkdocs_yml_validates_anchors_and_lists_every_page():
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^strict: true$", config, re.M)
    assert re.search(r"^docs_dir: docs$", config, re.M)
    for setting in ("anchors", "unrecognized_links", "absolute_links", "omitted_files"):
        assert re.search(rf"^\s+{setting}: warn$", config, re.M), setting
    listed = set(re.findall(r"^\s+- [^:]+: (\S+\.md)$", config, re.M))
    assert listed == {path.name for path in DOCS.glob("*.md")}


def test_the_readme_is_short_and_keeps_the_quick_start_and_the_test_command():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert TEST_COMMAND in text.splitlines()  # .ci/run greps for it at the start of a line
    assert re.search(r'^pip install -e "\.\[test\]" && pytest', text, re.M)
    assert f"```\n{QUICK_START}```" in text
    setup = text[text.index("## Set it up for your group"):text.index("## Commands")]
    for name in ("Slack", "Discord", "PAPERCLUB_PUBLIC_URL", "PostgreSQL", "Deploy"):
        assert f"**{name}" in setup or f"**`{name}`" in setup, name
    assert "`PAPERCLUB_PUBLIC_URL`" in setup and "`PORT`" in setup


def test_the_readme_links_only_to_pages_that_exist():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    for target in targets:
        assert (REPO / target).is_file(), target
    linked = {Path(target).name for target in targets}
    assert linked == {path.name for path in DOCS.glob("*.md")}  # every page, from the README


def configuration_page() -> str:
    """docs/configuration.md as the manual shows it: the table of every setting filled in
    from the settings models (the MkDocs hook in adapters/manual.py)."""
    return rendered(CONFIGURATION.read_text(encoding="utf-8"))


def test_every_variable_the_code_reads_is_in_the_configuration_page():
    names = variables_read(code_sources())
    # The scan finds what it must: a name from each family.
    assert {"PAPERCLUB_DATABASE_URL", "DATABASE_URL", "SLACK_BOT_TOKEN", "DISCORD_TOKEN", "PORT",
            "PAPERCLUB_PUBLIC_URL"} <= names
    assert undocumented(code_sources(), configuration_page()) == []


def test_the_table_of_every_setting_has_each_models_variables():
    """A feature's setting reaches the manual from its model: no page needs an edit."""
    from bot.app import settings_models

    table = settings_table()
    for model in settings_models():
        for variable in model.variables():
            assert f"| `{variable}` |" in table, variable
    assert "| `PAPERCLUB_ADD_PER_HOUR` | Adding papers from chat (add, imports by link) | 20 papers a member" in table
    assert MARKER in CONFIGURATION.read_text(encoding="utf-8") and MARKER not in configuration_page()


@pytest.mark.parametrize("source, missing", [
    ('timeout = env.get("PAPERCLUB_FROBNICATE_SECONDS", "5")', ["PAPERCLUB_FROBNICATE_SECONDS"]),
    ("token = os.environ['SLACK_WEBHOOK_URL']", ["SLACK_WEBHOOK_URL"]),
    ('Field(None, validation_alias="DISCORD_PROXY")', ["DISCORD_PROXY"]),
    ('startswith(("SLACK_", "PAPERCLUB_SLACK_"))', []),  # prefixes, not variables
    ('url = env.get("PAPERCLUB_TEST_POSTGRES_URL")', []),  # the tests' own
    ('headers["HTTP_X_SLACK_SIGNATURE"]', []),  # a WSGI key that only contains SLACK_
])
def test_an_undocumented_variable_is_caught(source, missing):
    documentation = configuration_page()
    assert undocumented([*code_sources(), source], documentation) == missing


def test_the_test_only_variables_are_read_by_the_tests_only():
    code = "\n".join(code_sources())
    for name in TEST_ONLY:
        assert name not in code, f"{name} is read by paperclub itself: document it in configuration.md"

"""The example replies in the manual (and the README) are what the code answers.

A fenced block right after the line `<!-- replies -->` is a console transcript: each
`paperclub> COMMAND` line is sent, as a manager, to one console channel over the demo
corpus (what `paperclub demo` imports) at a fixed instant, and the lines after it must be
the reply the console prints. A line that is only `…` stands for any lines (a card
shortened); `$ ...` lines before the first command are the shell's. Each block starts
from the same fresh database, so blocks do not depend on each other.

To see what a block answers now: `python -m tests.test_doc_examples docs/search.md`.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import pytest

from adapters.cli.commands import DEMO_COLLECTIONS, DEMO_EXTRAS, demo_listing
from adapters.console import ConsoleSession, render_text
from bot.app import build_services
from tests.conftest import REPO

MARKER = "<!-- replies -->"
PROMPT = "paperclub> "
ELIDED = "…"
AT = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)  # a Monday, noon UTC
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
_BLOCK = re.compile(re.escape(MARKER) + r"\n```[^\n]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Example:
    page: str
    number: int
    text: str

    @property
    def commands(self) -> list[str]:
        return [line[len(PROMPT):] for line in self.text.splitlines() if line.startswith(PROMPT)]


def examples(pages: list[Path] = PAGES) -> list[Example]:
    found = []
    for page in pages:
        for number, match in enumerate(_BLOCK.finditer(page.read_text(encoding="utf-8")), 1):
            found.append(Example(page.relative_to(REPO).as_posix(), number, match.group(1)))
    return found


def transcript(session: ConsoleSession, example: Example) -> str:
    """What the console prints for the example's commands, prompts included."""
    out = [line for line in example.text.splitlines() if line.startswith("$ ")]
    for command in example.commands:
        out.append(PROMPT + command)
        out.append(render_text(session.answer(command)))
    return "\n".join(out) + "\n"


def matches(expected: str, actual: str) -> bool:
    """`actual` line for line, where an `…` line of `expected` stands for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line.strip() == ELIDED else re.escape(line.rstrip()) + r"[ \t]*\n"
        for line in expected.splitlines()
    )
    return re.fullmatch(pattern, actual) is not None


def import_demo(url: str) -> None:
    services = build_services(url, clock=lambda: AT)
    for package, files in (("demo_corpus", DEMO_COLLECTIONS), ("demo_extras", DEMO_EXTRAS)):
        for name, collection in files.items():
            with resources.as_file(resources.files("bot") / package / name) as path:
                services.library.import_file(path, collection, listing=demo_listing(name))
    services.search.current()  # the index, built once beside the database
    services.db.dispose()


@pytest.fixture(scope="session")
def demo_directory(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("demo")
    import_demo(f"sqlite:///{directory / 'paperclub.db'}")
    return directory


def fresh_session(demo_directory: Path, target: Path):
    shutil.copytree(demo_directory, target)
    services = build_services(f"sqlite:///{target / 'paperclub.db'}", clock=lambda: AT)
    return services, ConsoleSession(services.core, channel="demo", user="ann", manager=True)


def test_the_manual_has_examples_and_each_has_commands():
    found = examples()
    assert len(found) >= 5
    assert all(example.commands for example in found), [e.page for e in found if not e.commands]


@pytest.mark.parametrize("example", examples(), ids=lambda e: f"{e.page}#{e.number}")
def test_each_example_reply_is_what_the_code_answers(example, demo_directory, tmp_path):
    services, session = fresh_session(demo_directory, tmp_path / "db")
    try:
        actual = transcript(session, example)
    finally:
        services.db.dispose()
    assert matches(example.text, actual), f"{example.page}, block {example.number}, now answers:\n{actual}"


NUMBERS = {"five": 5, "six": 6, "seven": 7}


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_quick_start_counts_the_demo_files_and_papers_it_imports(page, demo_directory):
    """Issue 28: the docs said "five documents, 1,091 papers"; the demo imports 6 files, 1,094 papers."""
    said = re.search(r"demo corpus \((\w+) files, ([\d,]+) papers", (REPO / page).read_text(encoding="utf-8"))
    services = build_services(f"sqlite:///{demo_directory / 'paperclub.db'}", ensure_schema=False)
    try:
        papers = services.search.current().live_count()
    finally:
        services.db.dispose()
    assert said and (NUMBERS[said.group(1)], said.group(2)) == (len(DEMO_COLLECTIONS) + len(DEMO_EXTRAS),
                                                                f"{papers:,}")


@pytest.mark.parametrize("expected, ok", [
    ("a\n…\nd\n", True), ("a\nb\nc\nd\n", True), ("a\n…\n", True), ("a\nc\n", False), ("…\nx\n", False),
])
def test_an_elision_stands_for_any_lines_and_nothing_else_is_skipped(expected, ok):
    assert matches(expected, "a\nb\nc\nd\n") is ok


if __name__ == "__main__":  # print what each block of the named pages answers now
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        demo = Path(scratch) / "demo"
        demo.mkdir()
        import_demo(f"sqlite:///{demo / 'paperclub.db'}")
        chosen = [Path(arg).resolve() for arg in sys.argv[1:]] or PAGES
        for n, example in enumerate(examples(chosen)):
            services, session = fresh_session(demo, Path(scratch) / f"run{n}")
            print(f"--- {example.page}, block {example.number}\n{transcript(session, example)}")
            services.db.dispose()

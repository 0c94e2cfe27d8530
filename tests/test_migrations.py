"""Migrations stand alone: a revision does forever what it did the day it was written, so it
keeps frozen copies of the code it runs, and nothing under store/ imports the bot."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from bot.corpus.identifiers import normalise
from tests.conftest import REPO
from tests.corpus.test_identifiers import NOT_IDENTIFIERS, PARSED
from tests.test_layout import imported_modules  # the one walker of imports

STORE = REPO / "store"
SOURCE_FIELDS = STORE / "migrations" / "versions" / "0007_source_fields.py"

# Every spelling the identifier tests know, plus ids as sources label them: arXiv new and
# old style with versions and prefixes, DOIs behind every URL prefix and in any case, arXiv
# DOIs, OpenReview ids and links, values that read as another scheme, and junk.
SPELLINGS = sorted(
    {text for text, _ in PARSED}
    | set(NOT_IDENTIFIERS)
    | {
        "2102.11107v1", " arXiv:2102.11107 ", "1234", "N/A", "4983", " 4983 ", "Devlin2018",
        "HTTPS://ARXIV.ORG/ABS/2106.01345V2", "arxiv:hep-th/9901001v3", "Math.GT/0309136v2",
        "https://DOI.org/10.1109/JPROC.2021.3058954", "HTTP://DX.DOI.ORG/10.1000/ABC",
        "https://www.doi.org/10.1145/3292500.3330701", "doi: 10.1000/XYZ",
        "https://doi.org/10.48550/ARXIV.1706.03762v2", "YicbFdNTTy", "abc", "a b c",
        "https://openreview.net/pdf?id=Y", "https://openreview.net/forum?id=abc",
        "https://openreview.net/attachment?id=YicbFdNTTy", "openreview.net/forum?id=x_y-Z1",
    }
)
SCHEMES = ["arxiv", "doi", "openreview", " ArXiv ", "DOI", "OpenReview", "beir", "BibTeX", "bench"]


def load_migration(path: Path) -> ModuleType:
    """A revision script as Alembic loads it: by its path (versions/ is no package)."""
    spec = importlib.util.spec_from_file_location(f"migration_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_0007s_frozen_normalisation_agrees_with_the_readers():
    """The copy in 0007 spells every id as the live parser does today, so the migration
    still normalises old rows as it did when it was written. Should the live parser
    change on purpose one day, pin the copy's present results here as literal values
    instead of comparing, and leave the copy alone."""
    frozen = load_migration(SOURCE_FIELDS)._normalise
    pairs = [(scheme, value) for scheme in SCHEMES for value in SPELLINGS]
    differing = [(s, v, frozen(s, v), normalise(s, v)) for s, v in pairs]
    assert [row for row in differing if row[2] != row[3]] == []
    # The sample reaches every kind of answer, not only the "kept as given" one.
    outcomes = {frozen(s, v) for s, v in pairs}
    assert {
        ("arxiv", "2106.01345"),  # a version dropped, from a link or a prefix
        ("arxiv", "math/0309136"),  # an old-style id loses its subject class
        ("arxiv", "1706.03762"),  # an arXiv DOI is the arXiv id
        ("doi", "10.1109/jproc.2021.3058954"),  # a DOI lower cased, behind a URL prefix
        ("openreview", "YicbFdNTTy"),  # an OpenReview link
        ("doi", "N/A"),  # what does not read as its scheme is kept
        ("bibtex", "Devlin2018"),  # another scheme: its own key, stripped
    } <= outcomes


def store_modules() -> list[Path]:
    return sorted(STORE.rglob("*.py"))


def of_the_bot(module: str) -> bool:
    return module.split(".")[0] == "bot"


def test_the_walk_sees_the_models_and_every_revision():
    names = {path.relative_to(STORE).as_posix() for path in store_modules()}
    assert {"models.py", "migrations/env.py", "migrations/versions/0007_source_fields.py"} <= names
    assert len([n for n in names if n.startswith("migrations/versions/")]) >= 9


def test_the_walk_catches_an_import_of_the_bot_inside_a_function(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def upgrade():\n    from bot.corpus import identifiers\n    import bot\n")
    assert [m for _, m in imported_modules(sneaky) if of_the_bot(m)] == ["bot.corpus", "bot"]


@pytest.mark.parametrize("path", store_modules(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_nothing_under_store_imports_the_bot(path):
    imports = imported_modules(path)
    offending = [f"line {line}: {module}" for line, module in imports if of_the_bot(module)]
    assert not offending, f"{path.relative_to(REPO)} imports {offending}"

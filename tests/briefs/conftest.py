"""Fixtures of the briefs tests: the fake model on loopback, and a reading group using it."""

from __future__ import annotations

import pytest

from adapters.fakes.llm import FakeLLM
from tests.briefs.scene import build


@pytest.fixture
def llm():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def scene(db, database_url, tmp_path, llm):
    built = build(database_url, tmp_path, llm)
    yield built
    built.services.db.dispose()

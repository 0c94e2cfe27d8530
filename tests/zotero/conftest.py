"""Fixtures of the Zotero tests: the fake Zotero Web API on loopback."""

from __future__ import annotations

import pytest

from tests.zotero.scene import fake_zotero


@pytest.fixture
def zotero():
    with fake_zotero() as fake:
        yield fake

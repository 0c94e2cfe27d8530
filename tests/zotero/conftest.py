"""Fixtures of the Zotero tests: the fake Zotero Web API on loopback, and a linked-channel
scene on it (a channel's services with the Zotero key in the environment)."""

from __future__ import annotations

import pytest

from tests.zotero.scene import KEY, build, environment, fake_zotero


@pytest.fixture
def zotero():
    with fake_zotero() as fake:
        yield fake


@pytest.fixture
def scene(db, database_url, tmp_path, zotero, monkeypatch):
    environment(monkeypatch, zotero, env_key=KEY)
    built = build(database_url, tmp_path, zotero)
    yield built
    built.services.db.dispose()

"""The cycle collector paused for bulk work, and given back however the work ends."""

from __future__ import annotations

import gc

import pytest

from bot.collector import without_cycle_collection
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError


def test_the_collector_is_paused_inside_and_back_after():
    assert gc.isenabled()
    with without_cycle_collection():
        assert not gc.isenabled()
        with without_cycle_collection():  # nested: the outer one gives it back
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_paused_by_someone_else_stays_paused():
    gc.disable()
    try:
        with without_cycle_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_import_that_fails_gives_the_collector_back(sqlite_db, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "fine", "abstract": "ok"}\n{"title": 3}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError):
        Library(sqlite_db).import_file(bad)
    assert gc.isenabled()
    good = tmp_path / "good.jsonl"
    good.write_text('{"title": "fine", "abstract": "ok"}\n', encoding="utf-8")
    assert Library(sqlite_db).import_file(good).added == 1 and gc.isenabled()

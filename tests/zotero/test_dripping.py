"""A Zotero that drips its answer a byte at a time (issue 45): every request ends by its
deadline (the caller's, or REQUEST_SECONDS), however short each single read is, and a
stop cuts every request in flight of every client the process made."""

from __future__ import annotations

import threading
import time

import pytest

from adapters.fakes.http import FakeServer
from bot.zotero import api as zotero_api
from bot.zotero.api import ZoteroApi, ZoteroCut
from bot.zotero.sync import ZoteroConfig

KEY = "k" * 24


@pytest.fixture
def dripping():
    with FakeServer(lambda path, params: (200, "application/json", b"{}")) as server:
        server.fail("drip")  # 1,000 bytes, one every 50 ms
        yield server


def test_a_drip_is_cut_at_the_callers_deadline(dripping):
    api = ZoteroApi(dripping.base, KEY)
    with api.within(0.5), pytest.raises(ZoteroCut) as cut:
        api.key_info()
    assert cut.value.late and len(dripping.requests) == 1


def test_a_drip_without_a_deadline_is_cut_at_the_requests_own(dripping, monkeypatch):
    monkeypatch.setattr(zotero_api, "REQUEST_SECONDS", 0.5)
    with pytest.raises(ZoteroCut):
        ZoteroApi(dripping.base, KEY).key_info()


def test_a_stop_cuts_the_request_in_flight_of_every_client_made(dripping):
    config = ZoteroConfig(api_url=dripping.base)
    raised: list[BaseException] = []

    def ask() -> None:
        try:
            config.api(KEY).key_info()
        except BaseException as problem:  # noqa: BLE001 - looked at below
            raised.append(problem)

    thread = threading.Thread(target=ask)
    thread.start()
    while not dripping.requests:
        time.sleep(0.01)
    config.cutoffs.cut_all()  # what the feature's stop() does
    thread.join(30)
    assert not thread.is_alive() and isinstance(raised[0], ZoteroCut)
    assert not dripping.release.is_set()  # cut by the stop, not by the drip ending

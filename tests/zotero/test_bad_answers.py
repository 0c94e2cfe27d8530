"""Issue 45 (items 4, 6 and 7) for Zotero: a Backoff or Retry-After of any size or spelling
never crashes the tick and never leaves the link leased (a long one defers the link to a
stored time, at most WAIT_MOST away); one bad item of a collection is skipped, logged once
(link, item, why), and the rest synced or imported; JSON nested past reason or of the wrong
shape is a failure that says so, not a traceback. On SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
import logging
from datetime import timedelta, timezone

import pytest
from sqlalchemy import select

from adapters.cli.main import main
from bot.zotero.api import WAIT_MOST
from bot.zotero.models import ZoteroLink
from tests.zotero.scene import COLLECTION, GROUP, KEY, build, environment, touch

UTC = timezone.utc
NESTED = b"[" * 100_000 + b"]" * 100_000
DAY = timedelta(seconds=WAIT_MOST)


def linked(scene) -> None:
    scene.zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Quokka Descent (as the group filed it)",
                                  "DOI": "10.5555/QUOKKA", "collections": [COLLECTION]})
    touch(scene)
    assert scene.member("boss", manager=True).send("zotero link 4242 Reading group").ok


def link_row(scene) -> ZoteroLink:
    with scene.services.db.session() as session:
        return session.scalars(select(ZoteroLink)).one()


def retry_at(scene):
    return link_row(scene).retry_at.replace(tzinfo=UTC)


@pytest.mark.parametrize("backoff", ["9" * 400, "99999999999999", "9999999999", "86401"])
def test_a_backoff_of_any_length_defers_the_link_and_the_tick_goes_on(scene, backoff):
    linked(scene)
    scene.zotero.backoff = backoff  # on the first answer: the collection's read
    first = scene.tick()  # no OverflowError out of the tick
    assert not first["zotero_written"] and not first["zotero_failed"]
    link = link_row(scene)
    assert link.lease_owner is None and link.lease_until is None  # released, not left leased
    assert retry_at(scene) == scene.clock.now + DAY  # deferred to a stored time, at most a day away
    requests = len(scene.zotero.requests)
    assert not scene.tick(minutes=60)["zotero_written"] and len(scene.zotero.requests) == requests
    assert scene.tick(minutes=24 * 60)["zotero_written"] == 3


@pytest.mark.parametrize("backoff", ["soon", "-5", "²", "1e400", "", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_a_backoff_that_is_not_seconds_is_ignored(scene, backoff):
    linked(scene)
    scene.zotero.backoff = backoff
    report = scene.tick()
    assert report["zotero_written"] == 3 and not report["zotero_failed"]


@pytest.mark.parametrize("retry_after", ["9" * 400, "99999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_retry_after_of_any_length_defers_the_link_and_says_so(scene, retry_after):
    linked(scene)
    scene.zotero.refuse_next(429, {"Retry-After": retry_after})
    report = scene.tick()
    assert report["zotero_failed"] == 1
    link = link_row(scene)
    assert link.lease_owner is None and retry_at(scene) == scene.clock.now + DAY
    said = scene.member("ann").send("zotero").text
    assert "HTTP 429, asking to wait 86400 s" in said, said
    assert scene.tick(minutes=24 * 60 + 1)["zotero_written"] == 3


@pytest.mark.parametrize("retry_after", ["soon", "²", "-30"])
def test_a_retry_after_that_is_not_a_wait_is_an_ordinary_failure(scene, retry_after):
    linked(scene)
    scene.zotero.refuse_next(503, {"Retry-After": retry_after})
    assert scene.tick()["zotero_failed"] == 1
    assert link_row(scene).lease_owner is None and retry_at(scene) == scene.clock.now + timedelta(minutes=1)
    assert "Zotero is busy (HTTP 503)" in scene.member("ann").send("zotero").text
    assert scene.tick(minutes=2)["zotero_written"] == 3


def spoil(scene, change) -> str:
    """An item of the collection, listed spoilt by `change` (of a copy of its object)."""
    key = scene.zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Spoilt", "collections": [COLLECTION]})

    def spoilt(obj):
        obj = copy.deepcopy(obj)
        change(obj)
        return obj

    scene.zotero.spoilt[key] = spoilt
    return key


@pytest.mark.parametrize("change, why", [
    (lambda o: o.update(key=12345678), "key is a number, not a string"),
    (lambda o: o.update(version="7"), "version is a string, not a whole number"),
    (lambda o: o.update(data="journalArticle"), "data is a string, not an object"),
    (lambda o: o["data"].update(DOI=["10.5555/a", "10.5555/b"]), "DOI is a list, not a string"),
    (lambda o: o["data"].update(extra={"arXiv": "2101.00001"}), "extra is an object, not a string"),
    (lambda o: o["data"].update(tags="paperclub"), "tags is a string, not a list"),
    (lambda o: o["data"].update(url="https://example.org/" + "x" * 100_000), "url is 100,020 characters long"),
])
def test_one_bad_item_of_the_collection_is_skipped_and_the_rest_synced(scene, caplog, change, why):
    linked(scene)
    key = spoil(scene, change)
    with caplog.at_level(logging.WARNING, logger="bot.zotero"):
        report = scene.tick()
    assert report["zotero_written"] == 3 and report["zotero_matched"] == 1 and not report["zotero_failed"]
    said = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(said) == 1 and "group 4242" in said[0] and why in said[0], said
    assert key in said[0] or "12345678" in said[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bot.zotero"):
        scene.tick(minutes=5)
    assert not [r for r in caplog.records if "skipped" in r.getMessage()]  # once, not every minute


@pytest.mark.parametrize("junk, says", [
    (NESTED, "nested too deep"),
    (b"NaN", "not JSON"),
    (json.dumps({"not": "a list"}).encode(), "not a list"),
])
def test_junk_in_place_of_the_items_fails_the_sync_saying_so(scene, junk, says):
    linked(scene)
    scene.zotero.junk_next = junk
    assert scene.tick()["zotero_failed"] == 1
    link = link_row(scene)
    assert link.lease_owner is None and says in link.last_error and "error of its own" not in link.last_error
    assert scene.tick(minutes=2)["zotero_written"] == 3


@pytest.mark.parametrize("junk", [NESTED, json.dumps({"key": KEY, "access": "everything"}).encode(),
                                  json.dumps({"key": KEY, "access": {"groups": ["4242"]}}).encode()])
def test_zotero_link_refuses_junk_clearly_and_stores_nothing(scene, junk):
    scene.zotero.junk_next = junk  # in place of GET /keys/current
    reply = scene.member("boss", manager=True).send("zotero link 4242 Reading group")
    assert not reply.ok and "Something went wrong" not in reply.text, reply.text
    assert "Zotero answered something paperclub cannot read" in reply.text and "Nothing was stored" in reply.text
    with scene.services.db.session() as session:
        assert session.scalars(select(ZoteroLink)).first() is None


def test_an_import_skips_a_bad_item_and_says_so(db, database_url, tmp_path, zotero, monkeypatch, capsys):
    environment(monkeypatch, zotero, env_key=KEY)
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    for number in range(3):
        zotero.add_item(GROUP, {"itemType": "journalArticle", "title": f"Fine {number}", "collections": [COLLECTION]})
    bad = zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Bad\x00title", "collections": [COLLECTION]})
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Odd", "creators": "Ann Ng",
                            "collections": [COLLECTION]})
    scene.services.db.dispose()
    assert main(["--database-url", database_url, "import", "zotero:4242/Reading group"]) == 0, capsys.readouterr()
    said = capsys.readouterr()
    assert scene.services.library.count() == before + 3
    text = said.out + said.err
    assert f"skipped item {bad}" in text and "NUL character" in text, text
    assert "creators is a string, not a list" in text

"""`zotero link`, `zotero key`, `zotero unlink`, `zotero`: a wrong key or group is refused
with a clear reply and stores nothing; a key given in chat is kept encrypted, answered
privately and never shown again; only managers change anything."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from bot.zotero.keys import KeyBox
from bot.zotero.models import ZoteroLink
from tests.zotero.scene import COLLECTION, GROUP, KEY, READ_ONLY_KEY, SECRET, build, environment


@pytest.fixture
def make_scene(db, database_url, tmp_path, zotero, monkeypatch):
    """A scene on each database, with the Zotero settings given (the key; the secret)."""
    made = []

    def make(**env):
        environment(monkeypatch, zotero, **env)
        made.append(build(database_url, tmp_path, zotero))
        return made[-1]

    yield make
    for scene in made:
        scene.services.db.dispose()


def links(scene) -> list[ZoteroLink]:
    with scene.services.db.session() as session:
        return list(session.scalars(select(ZoteroLink)))


def boss(scene):
    return scene.member("boss", manager=True)


@pytest.mark.parametrize("line, says", [
    ("zotero link 999", "Zotero has no group 999"),
    ("zotero link 4242 Nonexistent", "has no collection 'Nonexistent' (its collections: Other, Reading group)"),
    ("zotero link abc", "Usage: zotero"),
    ("zotero frobnicate", "Usage: zotero"),
])
def test_a_wrong_group_or_collection_is_refused_and_stores_nothing(make_scene, zotero, line, says):
    scene = make_scene(env_key=KEY)
    reply = boss(scene).send(line)
    assert not reply.ok and says in reply.text and reply.ephemeral
    assert links(scene) == [] and not zotero.writes()


def test_a_wrong_key_is_refused_and_stores_nothing(make_scene, zotero):
    scene = make_scene()
    wrong = boss(scene).send("zotero key WrongKey123456789")
    assert not wrong.ok and "Zotero does not accept that API key (HTTP 403)" in wrong.text
    assert "Nothing was stored" in wrong.text and links(scene) == []
    no_key = boss(scene).send(f"zotero link {GROUP}")
    assert not no_key.ok and "There is no Zotero API key yet" in no_key.text and links(scene) == []
    read_only = boss(scene).send(f"zotero key {READ_ONLY_KEY}")
    assert read_only.ok  # no group yet: the key is good
    assert "key: set" in scene.member("ann").send("zotero").text and READ_ONLY_KEY not in read_only.text
    refused = boss(scene).send(f"zotero link {GROUP}")
    assert not refused.ok and "may not write to group Lab Library" in refused.text
    assert [link.group_id for link in links(scene)] == [None]  # the key alone, no link


def test_a_key_given_in_chat_is_kept_encrypted_and_never_shown_again(make_scene, zotero):
    scene = make_scene()
    given = boss(scene).send(f"zotero key {KEY}")
    assert given.ok and given.ephemeral and "stored encrypted" in given.text and KEY not in given.text
    assert scene.services.core.commands["zotero"].private  # Discord defers it privately
    stored = links(scene)[0].api_key
    assert KEY not in stored and KeyBox(SECRET).open(stored) == KEY
    linked = boss(scene).send(f"zotero link {GROUP} {COLLECTION}")
    assert linked.ok and "collection Reading group" in linked.text
    status = scene.member("ann").send("zotero")
    assert status.ok and "key: set (given in chat)" in status.text and KEY not in status.text
    assert KEY not in scene.member("ann").send("settings").text
    assert all(KEY not in r[1] for r in zotero.requests)  # in a header, never in an address
    assert all(r[2]["zotero-api-key"] == KEY for r in zotero.requests)


def test_without_a_secret_key_a_key_is_refused(make_scene, zotero):
    scene = make_scene(secret=None)
    refused = boss(scene).send(f"zotero key {KEY}")
    assert not refused.ok and "PAPERCLUB_SECRET_KEY" in refused.text and "Nothing was stored" in refused.text
    assert links(scene) == [] and not zotero.requests  # not even sent to Zotero


def test_only_managers_link_give_keys_or_unlink_and_unlink_ends_the_sync(make_scene, zotero):
    scene = make_scene(env_key=KEY)
    for line in (f"zotero link {GROUP}", f"zotero key {KEY}", "zotero unlink"):
        refused = scene.member("ann").send(line)
        assert not refused.ok and refused.text.startswith("Only channel managers")
    assert links(scene) == []
    assert "not linked" in scene.member("ann").send("zotero").text
    assert boss(scene).send(f"zotero link {GROUP}").ok
    assert "group Lab Library (4242), top level" in scene.member("ann").send("zotero").text
    unlinked = boss(scene).send("zotero unlink")
    assert unlinked.ok and "What was written stays" in unlinked.text
    with scene.services.db.session() as session:
        assert session.scalar(select(func.count(ZoteroLink.id))) == 0
    assert not boss(scene).send("zotero unlink").ok

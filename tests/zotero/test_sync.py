"""Issue 30's Zotero "done when", against the fake Zotero Web API: a linked channel's posts,
queue, adds and notes appear once each with the right item types; a write whose answer
was lost and is sent again creates nothing twice; 412, 429 and Backoff are honoured; and
the sync is retried later, saying so. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from bot.zotero.links import ZoteroLinks
from bot.zotero.models import ZoteroItem, ZoteroLink
from tests.zotero.scene import COLLECTION, GROUP, KEY, touch


def linked(scene) -> None:
    zotero = scene.zotero
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Quokka Descent (as the group filed it)",
                            "DOI": "10.5555/QUOKKA", "collections": [COLLECTION],
                            "tags": [{"tag": "group's own"}]})
    touch(scene)
    reply = scene.member("boss", manager=True).send("zotero link 4242 Reading group")
    assert reply.ok and reply.ephemeral and "collection Reading group of group Lab Library" in reply.text


def by_title(scene) -> dict[str, dict]:
    return {o["data"]["title"]: o["data"] for o in scene.zotero.top_items(GROUP, COLLECTION)}


def test_a_linked_channels_papers_appear_once_each_with_their_types_tags_and_notes(scene):
    linked(scene)
    report = scene.tick()
    assert report["zotero_written"] == 3 and report["zotero_matched"] == 1 and report["zotero_notes"] == 1
    items = by_title(scene)
    assert sorted(items) == ["Marmot Transformers", "Pangolin Scales in Nature",
                             "Quokka Descent (as the group filed it)", "Sparse Coding of Zebrafish Retinas"]
    sparse = items["Sparse Coding of Zebrafish Retinas"]
    assert (sparse["itemType"], sparse["archiveID"], sparse["repository"]) == ("preprint", "arXiv:2101.00001", "arXiv")
    assert sparse["creators"] == [{"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"},
                                  {"creatorType": "author", "firstName": "Alan", "lastName": "Turing"}]
    assert (sparse["date"], sparse["url"]) == ("2021", "https://arxiv.org/abs/2101.00001")
    assert sparse["abstractNote"].startswith("Zebrafish retina")
    assert sorted(t["tag"] for t in sparse["tags"]) == ["paperclub:👍 2", "read"]
    marmot = items["Marmot Transformers"]
    assert (marmot["itemType"], marmot["proceedingsTitle"], marmot["DOI"]) == \
        ("conferencePaper", "ICLR 2022", "10.5555/marmot.2022")
    pangolin = items["Pangolin Scales in Nature"]
    assert (pangolin["itemType"], pangolin["publicationTitle"]) == ("journalArticle", "Journal of Pangolin Studies")
    notes = scene.zotero.notes(GROUP, sparse["key"])
    assert len(notes) == 1 and "the &lt;ablation&gt; &amp; section 4 matter" in notes[0]["data"]["note"]
    assert "Okapi" not in " ".join(items)  # never touched by the channel

    writes = len(scene.zotero.writes())
    again = scene.tick(minutes=5)
    assert not again["zotero_written"] and len(scene.zotero.writes()) == writes  # nothing written twice
    assert len(scene.zotero.top_items(GROUP, COLLECTION)) == 4
    status = scene.member("ann").send("zotero")
    assert status.ok and "4 papers in Zotero" in status.text and "key: the operator's" in status.text


def test_a_vote_changes_the_items_tags_and_keeps_everyone_elses(scene):
    linked(scene)
    scene.tick()
    quokka = scene.ids["Quokka"]
    assert scene.member("ann").send(f"vote {quokka} down").ok
    scene.zotero.change_before_patch = next(k for k, o in scene.zotero.groups[GROUP].items.items()
                                            if o["data"]["title"].startswith("Quokka"))
    report = scene.tick()
    assert report["zotero_tagged"] == 1
    tags = sorted(t["tag"] for t in by_title(scene)["Quokka Descent (as the group filed it)"]["tags"])
    # the PATCH met a 412 (someone tagged it meanwhile), read the item again and kept their tag
    assert tags == ["group's own", "paperclub:👎 1", "someone else's"]
    assert any(r[0] == "PATCH" and "if-unmodified-since-version" in r[2] for r in scene.zotero.requests)
    assert scene.member("ann").send(f"vote {quokka} none").ok
    scene.tick()
    tags = sorted(t["tag"] for t in by_title(scene)["Quokka Descent (as the group filed it)"]["tags"])
    assert tags == ["group's own", "someone else's"]


def test_a_write_whose_answer_was_lost_is_sent_again_and_creates_nothing_twice(scene):
    linked(scene)
    scene.zotero.lose_next_write = True
    first = scene.tick()
    assert first["zotero_failed"] == 1 and not first["zotero_written"]
    assert len(scene.zotero.top_items(GROUP, COLLECTION)) == 4  # Zotero did write them
    posts = [r for r in scene.zotero.writes() if r[0] == "POST"]
    retry = scene.tick(minutes=2)
    assert retry["zotero_written"] == 3 and retry["zotero_notes"] == 1
    posts = [r for r in scene.zotero.writes() if r[0] == "POST"]
    assert len(posts) == 2 and posts[0][2]["zotero-write-token"] == posts[1][2]["zotero-write-token"]
    assert len(scene.zotero.top_items(GROUP, COLLECTION)) == 4  # the 412 answer: no duplicate
    sparse = by_title(scene)["Sparse Coding of Zebrafish Retinas"]
    assert len(scene.zotero.notes(GROUP, sparse["key"])) == 1
    with scene.services.db.session() as session:
        assert {r.state for r in session.scalars(select(ZoteroItem).where(ZoteroItem.paper_id.is_not(None)))} == \
            {"synced"}
        assert session.scalar(select(ZoteroLink.failures)) == 0


def test_the_syncs_times_are_in_the_channels_zone(scene):
    """Issue 45: a member reads times in the channel's zone, not in UTC."""
    linked(scene)
    scene.zotero.refuse_next(429, {"Retry-After": "600"})
    scene.tick()
    assert scene.member("boss", manager=True).send("schedule 09:00 Europe/Berlin").ok
    said = scene.member("ann").send("zotero").text
    assert "Retrying at 2026-11-26 10:11 CET" in said and " UTC" not in said, said

def test_429_retry_after_postpones_the_sync_and_says_so(scene):
    linked(scene)
    scene.zotero.refuse_next(429, {"Retry-After": "600"})
    report = scene.tick()
    assert report["zotero_failed"] == 1 and not scene.zotero.top_items(GROUP, COLLECTION)[1:]
    said = scene.member("ann").send("zotero").text
    assert "The last sync failed" in said and "HTTP 429" in said and "asking to wait 600 s" in said
    assert "Retrying at 2026-11-26 09:11 UTC" in said
    assert any("Zotero: group Lab Library" in line and "Retrying at" in line
               for line in scene.member("ann").send("settings").text.splitlines())
    requests = len(scene.zotero.requests)
    scene.tick(minutes=5)  # still inside Retry-After: nothing is asked
    assert len(scene.zotero.requests) == requests
    recovered = scene.tick(minutes=6)
    assert recovered["zotero_written"] == 3
    assert "Last failure, since recovered" in scene.member("ann").send("zotero").text


def test_a_backoff_header_stops_the_sync_until_it_has_passed(scene):
    linked(scene)
    scene.zotero.backoff = 120  # on the first answer: the collection's read
    first = scene.tick()
    assert not first["zotero_written"] and not first["zotero_failed"]
    requests = len(scene.zotero.requests)
    assert not scene.tick()["zotero_written"] and len(scene.zotero.requests) == requests  # one minute later
    assert scene.tick(minutes=2)["zotero_written"] == 3


def test_two_replicas_ticking_together_sync_a_link_once(scene):
    linked(scene)
    links = ZoteroLinks(scene.services.db)
    link_id = links.due(scene.clock.now + timedelta(minutes=1), 5)[0]
    owner = links.claim(link_id, scene.clock.now + timedelta(minutes=1))
    assert owner is not None
    assert links.claim(link_id, scene.clock.now + timedelta(minutes=1)) is None  # the other replica
    assert not scene.tick()["zotero_written"]  # held by the first: this process skips it
    links.finish(link_id, owner, scene.clock.now)
    assert scene.tick()["zotero_written"] == 3


def test_a_large_collection_is_read_over_several_minutes_before_anything_is_written(scene):
    for number in range(600):
        scene.zotero.add_item(GROUP, {"itemType": "journalArticle", "title": f"Filed {number}",
                                      "collections": [COLLECTION]})
    linked(scene)  # the item holding Quokka's DOI comes last, on the seventh page
    first = scene.tick()
    pages = [r for r in scene.zotero.requests if "/items/top" in r[1]]
    assert len(pages) == 5 and not first["zotero_written"] and not scene.zotero.writes()
    second = scene.tick()
    assert second["zotero_written"] == 3 and second["zotero_matched"] == 1
    assert len(scene.zotero.top_items(GROUP, COLLECTION)) == 604


def test_a_key_zotero_refuses_waits_an_hour_and_says_what_to_do(scene):
    linked(scene)
    scene.zotero.keys.pop(KEY)  # revoked at zotero.org
    assert scene.tick()["zotero_failed"] == 1
    said = scene.member("ann").send("zotero").text
    assert "Zotero refused the API key for group 4242 (HTTP 403)" in said and "`zotero key KEY`" in said
    assert "Retrying at 2026-11-26 10:01 UTC" in said
    requests = len(scene.zotero.requests)
    scene.tick(minutes=30)
    assert len(scene.zotero.requests) == requests  # not asked again every minute

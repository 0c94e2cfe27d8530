"""Issue 45 item 5: Zotero paging is bounded whatever the server says. Against the fake
answering endless pages, a Total-Results that lies and pages of more rows than asked:
`zotero link` answers with one clear line and stores nothing, `import zotero:` stops at
its cap and says so, and the scheduled sync reads a bounded number of pages per run and
resumes where it stopped, every item remembered once. Deadlines are met with an injected
clock, never by waiting. On SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import socket
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select

from adapters.cli.main import main
from bot.zotero.api import COLLECTION_PAGES, ZoteroApi, ZoteroError
from bot.zotero.models import ZoteroItem, ZoteroLink
from bot.zotero.sync import READ_PAGES_PER_SYNC
from tests.zotero.scene import COLLECTION, GROUP, KEY, build, environment


class Ticking:
    """A monotonic clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float):
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def with_clock(config, clock):
    return dataclasses.replace(config, make_api=lambda url, key: ZoteroApi(url, key, clock=clock))


def reads(zotero, what: str) -> list[dict[str, str]]:
    """The query of each GET of `what` ("/collections", "/items/top"), in order."""
    return [{k: v[-1] for k, v in parse_qs(urlsplit(r[1]).query).items()} for r in zotero.requests
            if r[0] == "GET" and urlsplit(r[1]).path.endswith(what)]


def links(scene) -> list[ZoteroLink]:
    with scene.services.db.session() as session:
        return list(session.scalars(select(ZoteroLink)))


def boss(scene):
    return scene.member("boss", manager=True)


def add_items(zotero, count: int) -> None:
    for number in range(count):
        zotero.add_item(GROUP, {"itemType": "journalArticle", "title": f"Held Paper {number}",
                                "collections": [COLLECTION]})


# --- zotero link ---------------------------------------------------------------------------


def test_link_against_endless_collections_says_so_in_one_line_and_stores_nothing(scene):
    scene.zotero.endless = True
    scene.zotero.total_results = "999999999999"
    reply = boss(scene).send(f"zotero link {GROUP} Nope")
    assert not reply.ok and reply.ephemeral and "\n" not in reply.text
    assert "more collections than paperclub reads in one go" in reply.text and "by its key" in reply.text
    assert "Nothing was stored" in reply.text
    assert len(reads(scene.zotero, "/collections")) == COLLECTION_PAGES
    assert links(scene) == [] and not scene.zotero.writes()


def test_link_by_the_collections_key_works_however_many_collections_there_are(scene):
    scene.zotero.endless = True
    reply = boss(scene).send(f"zotero link {GROUP} {COLLECTION}")
    assert reply.ok and "collection Reading group of group Lab Library" in reply.text
    assert reads(scene.zotero, "/collections") == []  # asked for by its key, not looked for in the list
    assert [(link.group_id, link.collection_key) for link in links(scene)] == [(GROUP, COLLECTION)]


def test_link_cut_by_its_deadline_says_zotero_did_not_answer_in_time_and_stores_nothing(scene):
    feature = scene.services.feature("zotero")
    feature.config = with_clock(feature.config, Ticking(step=1.0))  # each request: a second gone
    scene.zotero.endless = True
    reply = boss(scene).send(f"zotero link {GROUP} Nope")
    assert not reply.ok and "Zotero did not answer within 8 s" in reply.text and "Nothing was stored" in reply.text
    assert "\n" not in reply.text
    assert len(reads(scene.zotero, "/collections")) < COLLECTION_PAGES  # the deadline came before the cap
    assert links(scene) == [] and not scene.zotero.writes()


def test_link_while_paperclub_stops_says_so_and_stores_nothing(scene):
    scene.services.feature("zotero").stop()
    reply = boss(scene).send(f"zotero link {GROUP} {COLLECTION}")
    assert not reply.ok and "paperclub is restarting" in reply.text and "Nothing was stored" in reply.text
    assert links(scene) == [] and not scene.zotero.requests


@pytest.mark.parametrize("total", ["1", "0", "999999999999", "-3", "lots"])
def test_link_believes_no_total_results(scene, total):
    scene.zotero.total_results = total
    reply = boss(scene).send(f"zotero link {GROUP} Other")
    assert reply.ok and "collection Other" in reply.text
    assert len(reads(scene.zotero, "/collections")) == 1  # two collections: one page, fewer than asked


def test_could_not_reach_says_why_in_words():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(ZoteroError) as raised:
        ZoteroApi(f"http://127.0.0.1:{port}", KEY).key_info()
    assert str(raised.value) == f"could not connect to the Zotero API at http://127.0.0.1:{port} (connection refused)"


# --- import zotero: ------------------------------------------------------------------------


def test_an_import_from_an_endless_library_stops_at_its_cap_and_says_so(db, database_url, tmp_path, zotero,
                                                                       monkeypatch, capsys):
    environment(monkeypatch, zotero, env_key=KEY)
    monkeypatch.setenv("PAPERCLUB_ZOTERO_IMPORT_MAX", "250")
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    scene.services.db.dispose()
    zotero.endless, zotero.total_results = True, "999999999999"
    assert main(["--database-url", database_url, "import", "zotero:4242"]) == 0
    out, err = capsys.readouterr()
    assert "250 added" in out
    assert "zotero:4242: stopped after 250 items, the most one run reads" in err
    assert "PAPERCLUB_ZOTERO_IMPORT_MAX" in err
    assert scene.services.library.count() == before + 250
    assert [r["start"] for r in reads(zotero, "/items/top")] == ["0", "100", "200"]


@pytest.mark.parametrize("total, rows", [("1", None), ("999999999999", None), ("5", 150)])
def test_an_import_reads_to_the_end_whatever_total_results_and_page_sizes_say(db, database_url, tmp_path, zotero,
                                                                              monkeypatch, capsys, total, rows):
    environment(monkeypatch, zotero, env_key=KEY)
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    scene.services.db.dispose()
    add_items(zotero, 320)
    zotero.total_results, zotero.page_rows = total, rows
    assert main(["--database-url", database_url, "import", f"zotero:4242/{COLLECTION}"]) == 0
    out, err = capsys.readouterr()
    assert "320 added" in out and "stopped after" not in err
    assert scene.services.library.count() == before + 320
    starts = [r["start"] for r in reads(zotero, "/items/top")]
    assert starts == (["0", "100", "200", "300"] if rows is None else ["0", "150", "300"])


def test_an_import_stops_at_a_page_that_brings_nothing_new(db, database_url, tmp_path, zotero, monkeypatch, capsys):
    environment(monkeypatch, zotero, env_key=KEY)
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    scene.services.db.dispose()
    add_items(zotero, 250)
    zotero.same_page = True  # the first 100 items, whatever `start` asks
    assert main(["--database-url", database_url, "import", f"zotero:4242/{COLLECTION}"]) == 0
    out, err = capsys.readouterr()
    assert "100 added" in out and "stopped after" not in err
    assert scene.services.library.count() == before + 100
    assert [r["start"] for r in reads(zotero, "/items/top")] == ["0", "100"]


def test_an_import_of_exactly_the_cap_says_nothing_of_more(db, database_url, tmp_path, zotero, monkeypatch, capsys):
    environment(monkeypatch, zotero, env_key=KEY)
    monkeypatch.setenv("PAPERCLUB_ZOTERO_IMPORT_MAX", "200")
    scene = build(database_url, tmp_path, zotero)
    scene.services.db.dispose()
    add_items(zotero, 200)
    assert main(["--database-url", database_url, "import", f"zotero:4242/{COLLECTION}"]) == 0
    out, err = capsys.readouterr()
    assert "200 added" in out and "stopped after" not in err


# --- the scheduled sync ----------------------------------------------------------------------


def remembered(scene) -> tuple[int, int]:
    """(rows, distinct item keys) the link remembers."""
    with scene.services.db.session() as session:
        return (session.scalar(select(func.count(ZoteroItem.id))),
                session.scalar(select(func.count(func.distinct(ZoteroItem.item_key)))))


def test_the_sync_reads_a_capped_number_of_pages_per_run_and_resumes_without_loss(scene):
    add_items(scene.zotero, 720)
    scene.zotero.total_results = "1"  # believed, it would end the read after the first page
    assert boss(scene).send(f"zotero link {GROUP} {COLLECTION}").ok
    scene.tick()
    assert len(reads(scene.zotero, "/items/top")) == READ_PAGES_PER_SYNC
    assert remembered(scene) == (500, 500) and links(scene)[0].read_start == 500
    scene.tick()
    assert remembered(scene) == (720, 720) and links(scene)[0].read_start == 0
    starts = [int(r["start"]) for r in reads(scene.zotero, "/items/top")]
    assert starts == list(range(0, 800, 100))  # each page once, none passed over


def test_the_sync_against_endless_pages_costs_a_bounded_number_of_requests_each_run(scene):
    assert boss(scene).send(f"zotero link {GROUP} {COLLECTION}").ok
    scene.zotero.endless, scene.zotero.total_results = True, "999999999999"
    for run in range(1, 4):
        scene.tick(minutes=5)
        assert len(reads(scene.zotero, "/items/top")) == run * READ_PAGES_PER_SYNC
    assert remembered(scene) == (1500, 1500) and links(scene)[0].lease_owner is None
    assert not scene.zotero.writes()  # the collection is not read to its end: nothing written yet


def test_a_sync_cut_by_its_deadline_keeps_its_place_and_the_next_goes_on(scene):
    add_items(scene.zotero, 450)
    assert boss(scene).send(f"zotero link {GROUP} {COLLECTION}").ok
    sync = scene.services.feature("zotero").sync
    sync.config = with_clock(sync.config, Ticking(step=10.0))  # READ_SECONDS is 30: two pages a run
    scene.tick()
    assert len(reads(scene.zotero, "/items/top")) == 2 and remembered(scene) == (200, 200)
    scene.tick()
    assert remembered(scene) == (400, 400) and links(scene)[0].read_start == 400
    scene.tick()
    assert remembered(scene) == (450, 450) and links(scene)[0].read_start == 0
    assert [int(r["start"]) for r in reads(scene.zotero, "/items/top")] == [0, 100, 200, 300, 400]
    assert all(link.failures == 0 and link.lease_owner is None for link in links(scene))

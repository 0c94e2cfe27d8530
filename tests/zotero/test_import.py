"""`paperclub import zotero:GROUP/COLLECTION`: a group's collection brought into the corpus,
page by page, merged with the papers it holds already by DOI and arXiv id."""

from __future__ import annotations

from sqlalchemy import func, select

from adapters.cli.main import main
from store.models import Paper
from tests.zotero.scene import COLLECTION, GROUP, KEY, build, environment


def test_an_import_from_a_group_collection_merges_with_existing_papers(db, database_url, tmp_path, zotero,
                                                                       monkeypatch, capsys):
    environment(monkeypatch, zotero, env_key=KEY)
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    zotero.add_item(GROUP, {"itemType": "preprint", "title": "Zebrafish retinas, the group's copy",
                            "archiveID": "arXiv:2101.00001", "collections": [COLLECTION],
                            "tags": [{"tag": "retina"}, {"tag": "paperclub:👍 2"}]})
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Pangolins", "DOI": "10.5555/PANGOLIN",
                            "collections": [COLLECTION]})
    for number in range(120):  # more than one page of 100
        zotero.add_item(GROUP, {"itemType": "journalArticle", "title": f"New Paper {number}",
                                "creators": [{"creatorType": "author", "firstName": "Ann", "lastName": "Ng"}],
                                "date": "2024-03-01", "publicationTitle": "Journal", "collections": [COLLECTION]})
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Elsewhere", "collections": ["OTHR2345"]})
    scene.services.db.dispose()

    code = main(["--database-url", database_url, "import", "zotero:4242/Reading group"])
    assert code == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    assert "collection zotero-4242-reading-group: 120 added, 2 updated" in said
    library = scene.services.library
    assert library.count() == before + 120  # the two known papers merged, "Elsewhere" not read
    sparse = library.find("2101.00001")
    assert "zotero" in sparse.ids() and "retina" in sparse.tags and "paperclub:👍 2" not in sparse.tags
    pangolin = library.find("10.5555/pangolin")  # the DOI in another case: the same paper, two sources
    assert pangolin.id == scene.ids["Pangolin"] and sorted(pangolin.collections) == \
        ["zotero-4242-reading-group", "zotest"]
    with scene.services.db.session() as session:
        new = session.scalars(select(Paper).where(Paper.title == "New Paper 7")).one()
        assert (new.authors, new.year, new.venue) == (["Ann Ng"], 2024, "Journal")
        assert session.scalar(select(func.count(Paper.id)).where(Paper.title == "Elsewhere")) == 0
    pages = [r[1] for r in zotero.requests if "/items/top" in r[1]]
    assert len(pages) == 2 and "start=100" in pages[1]

    again = main(["--database-url", database_url, "import", "zotero:4242/RDNG2345"])
    assert again == 0 and library.count() == before + 120  # the same items: nothing new


def test_an_import_from_a_wrong_group_says_so_and_imports_nothing(db, database_url, tmp_path, zotero, monkeypatch,
                                                                 capsys):
    environment(monkeypatch, zotero, env_key=KEY)
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    scene.services.db.dispose()
    assert main(["--database-url", database_url, "import", "zotero:999/Reading"]) == 1
    assert "Zotero has no group 999" in capsys.readouterr().err
    monkeypatch.delenv("PAPERCLUB_ZOTERO_API_KEY")
    assert main(["--database-url", database_url, "import", "zotero:4242"]) == 1
    assert "set PAPERCLUB_ZOTERO_API_KEY" in capsys.readouterr().err
    assert scene.services.library.count() == before


def test_a_group_collection_as_a_feed_is_imported_when_it_refreshes(db, database_url, tmp_path, zotero, monkeypatch,
                                                                    capsys):
    """`feed add COLLECTION zotero:GROUP/COLLECTION`: the scheduler (here `feed refresh`)
    imports the group's collection again, with the import's identity rules; a reference
    that is not zotero:GROUP[/COLLECTION] is refused and stores no feed."""
    environment(monkeypatch, zotero, env_key=KEY)
    scene = build(database_url, tmp_path, zotero)
    before = scene.services.library.count()
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Pangolins", "DOI": "10.5555/PANGOLIN",
                            "collections": [COLLECTION]})
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Okapis in the wild", "date": "2023",
                            "collections": [COLLECTION]})
    scene.services.db.dispose()
    cli = ["--database-url", database_url, "feed"]
    assert main([*cli, "add", "group-reads", "zotero:nope", "--cron", "0 6 * * *"]) == 2
    assert "give zotero:GROUP or zotero:GROUP/COLLECTION" in capsys.readouterr().err
    assert main([*cli, "add", "group-reads", "zotero:4242/Reading group", "--cron", "0 6 * * *"]) == 0
    assert main([*cli, "refresh", "group-reads"]) == 0, capsys.readouterr().err
    assert "2 entries: 1 added, 1 updated" in capsys.readouterr().out
    library = scene.services.library
    assert library.count() == before + 1  # Pangolins was known: merged
    assert "group-reads" in library.find("10.5555/pangolin").collections
    zotero.add_item(GROUP, {"itemType": "journalArticle", "title": "Quokkas", "collections": [COLLECTION]})
    assert main([*cli, "refresh", "group-reads"]) == 0
    assert library.count() == before + 2  # the next run brings what the group added since
    monkeypatch.delenv("PAPERCLUB_ZOTERO_API_KEY")
    assert main([*cli, "refresh", "group-reads"]) == 1
    assert "group-reads: failed: zotero:4242/Reading group: set PAPERCLUB_ZOTERO_API_KEY" in capsys.readouterr().out

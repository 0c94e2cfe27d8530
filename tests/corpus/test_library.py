"""Importing into the database: counts, idempotence, merging sources, atomic failure, export."""

from __future__ import annotations

import io
import json

import pytest

from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError
from tests.conftest import SEED_COUNTS, SEED_FILES, import_seeds


def test_each_seed_imports_its_count_and_reimport_changes_nothing(db):
    library = Library(db)
    for fmt, path in SEED_FILES.items():
        summary = library.import_file(path, collection=fmt)
        assert (summary.format, summary.added, summary.updated) == (fmt, SEED_COUNTS[fmt], 0)
    assert library.count() == sum(SEED_COUNTS.values())
    revision = library.revision()
    for fmt, path in SEED_FILES.items():
        summary = library.import_file(path, collection=fmt)
        assert (summary.added, summary.updated, summary.unchanged) == (0, 0, SEED_COUNTS[fmt])
    assert library.count() == sum(SEED_COUNTS.values())
    assert library.revision() == revision


def test_paper_from_two_sources_is_one_paper_listing_both(db, tmp_path):
    library = Library(db)
    library.import_file(SEED_FILES["blog-review"], collection="blog")
    feed = tmp_path / "extra.jsonl"
    feed.write_text(
        json.dumps(
            {
                "title": "How do vision transformers work",
                "authors": ["Namuk Park", "Songkuk Kim"],
                "abstract": "The success of multi-head self-attentions (MSAs) for computer vision ...",
                "external_ids": {"arxiv": "2202.06709"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    summary = library.import_file(feed, collection="zz-arxiv-picks")
    assert (summary.added, summary.updated) == (0, 1)
    paper = library.find("2202.06709")
    assert paper is not None
    # The title of the source first in (collection, file, line) order: the blog's.
    assert paper.title == "How Do Vision Transformers Work?"
    assert paper.collections == ["blog", "zz-arxiv-picks"]
    assert paper.authors == ["Namuk Park", "Songkuk Kim"]  # filled in from the second source
    assert paper.notes, "the reviewer's notes are kept"
    assert library.count() == SEED_COUNTS["blog-review"]


def test_same_title_with_different_ids_stays_two_papers(db, tmp_path):
    library = Library(db)
    corpus = tmp_path / "beir.jsonl"
    corpus.write_text(
        '{"_id": "1", "title": "Same title", "text": "first text"}\n'
        '{"_id": "2", "title": "Same title", "text": "second text"}\n',
        encoding="utf-8",
    )
    assert library.import_file(corpus).added == 2
    assert library.find("1").abstract == "first text"
    assert library.find("2").abstract == "second text"


def test_a_malformed_file_stores_nothing(db, tmp_path):
    library = Library(db)
    good = SEED_FILES["openreview"].read_text(encoding="utf-8")
    truncated = tmp_path / "cut.md"
    cut = good.index("## [", len(good) // 2)  # keep a heading but not its abstract
    truncated.write_text(good[: cut + 40], encoding="utf-8")
    with pytest.raises(CorpusFormatError) as raised:
        library.import_file(truncated)
    assert str(raised.value).startswith(f"{truncated}:")
    assert library.count() == 0
    assert library.revision() == 0


def test_export_lists_every_paper_as_the_sources_gave_it(db):
    library = Library(db)
    import_seeds(library)
    out = io.StringIO()
    assert library.export(out) == sum(SEED_COUNTS.values())
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    by_title = {r["title"]: r for r in rows}
    poster = by_title["Rethinking the Expressive Power of GNNs via Graph Biconnectivity"]
    assert poster["authors"] == ["Bohang Zhang", "Shengjie Luo", "Liwei Wang", "Di He"]
    assert poster["award"] == "Outstanding Paper"
    assert poster["collections"] == ["poster-session"]
    net_dnf = by_title["Net-DNF: Effective Deep Modeling of Tabular Data"]
    assert net_dnf["authors"] == ["Liran Katzir", "Gal Elidan", "Ran El-Yaniv"]
    assert net_dnf["track"] == "Poster"
    for row in rows:
        assert row["title"] and row["title"] == " ".join(row["title"].split())
        assert not row["title"].startswith(("Outstanding Paper", "Honorable Mention", "Get trending", "Subscribe"))
        assert set(row) >= {"id", "external_ids", "title", "authors", "abstract", "url", "sources", "collections",
                            "track", "award", "tags", "notes"}
    topic_tags = sorted({t for r in rows if "topic-abstracts" in r["collections"] for t in r["tags"]})
    assert topic_tags == [
        "Architectural Bias", "Continual Learning", "Domain Adaptation", "Emergent Communication",
        "Explaining Learning and Learning Phenomenon",
    ]


def test_an_export_imported_again_restores_its_sources_and_changes_nothing(db, tmp_path):
    library = Library(db)
    library.import_file(SEED_FILES["poster-session"], collection="posters")
    dump = tmp_path / "dump.jsonl"
    with dump.open("w", encoding="utf-8") as out:
        library.export(out)
    revision = library.revision()
    summary = library.import_file(dump, collection="posters-copy")
    # Each paper goes back to the source it names, not into a collection named after the dump.
    assert (summary.added, summary.updated, summary.unchanged) == (0, 0, SEED_COUNTS["poster-session"])
    assert summary.collection == "posters"
    assert library.count() == SEED_COUNTS["poster-session"]
    assert library.collections() == [("posters", SEED_COUNTS["poster-session"])]
    assert library.revision() == revision


def test_a_jsonl_file_without_sources_goes_into_the_named_collection(db, tmp_path):
    library = Library(db)
    plain = tmp_path / "picks.jsonl"
    plain.write_text(json.dumps({"title": "A plain pick", "abstract": "Text."}) + "\n", encoding="utf-8")
    assert library.import_file(plain).collection == "picks"
    assert library.import_file(plain, collection="reading").collection == "reading"
    paper = library.find("1")
    assert [(s.collection, s.source, s.line, s.format) for s in paper.sources] == [
        ("picks", "picks.jsonl", 1, "jsonl"), ("reading", "picks.jsonl", 1, "jsonl"),
    ]


def test_a_title_many_papers_share_matches_the_first_that_agrees_without_a_scan(db, tmp_path, monkeypatch):
    from bot.corpus import importing as library_module

    library = Library(db)

    def write(name: str, *records: dict) -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return str(path)

    editorials = [
        {"external_ids": {"bench": f"ed-{i}"}, "title": "Editorial", "abstract": f"issue {i}"} for i in range(300)
    ]
    assert library.import_file(write("journal.jsonl", *editorials)).added == 300
    checks = []
    real_conflicting = library_module._conflicting
    monkeypatch.setattr(
        library_module, "_conflicting", lambda a, b: checks.append(1) or real_conflicting(a, b)
    )
    # A DOI for "Editorial": the oldest editorial holds none yet, so it takes this one...
    doi_a = {"external_ids": {"doi": "10.1234/ed.a"}, "title": "Editorial"}
    assert library.import_file(write("a.jsonl", doi_a)).updated == 1
    assert library.find("10.1234/ed.a").abstract == "issue 0"
    # ...and another DOI goes to the next one, the oldest now holding a different DOI.
    doi_b = {"external_ids": {"doi": "10.1234/ed.b"}, "title": "Editorial"}
    assert library.import_file(write("b.jsonl", doi_b)).updated == 1
    assert library.find("10.1234/ed.b").abstract == "issue 1"
    # A bench id none of them holds: every editorial holds another, so it is a new paper.
    new = {"external_ids": {"bench": "ed-new"}, "title": "Editorial", "abstract": "new"}
    assert library.import_file(write("c.jsonl", new)).added == 1
    # A record without ids joins the oldest paper of that title.
    assert library.import_file(write("d.jsonl", {"title": "Editorial", "tags": ["x"]})).updated == 1
    assert library.find("10.1234/ed.a").tags == ["x"]
    assert library.count() == 301
    # None of these looked through the 300 papers that share the title.
    assert len(checks) < 10

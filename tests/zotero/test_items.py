"""A paper as a Zotero item and back: the item types, the ids that survive the round trip."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from adapters.fakes.zotero import FIELDS
from bot.zotero.items import creator, item_ids, item_type, paper_item, record_of


@pytest.mark.parametrize("ids, venue, track, kind", [
    ({"arxiv": "2101.00001"}, None, None, "preprint"),
    ({"arxiv": "2101.00001"}, "arXiv", None, "preprint"),
    ({"arxiv": "2101.00001", "doi": "10.1/x"}, "NeurIPS 2021", None, "conferencePaper"),
    ({}, "Proceedings of the Workshop on Okapis", None, "conferencePaper"),
    ({}, None, "Oral", "conferencePaper"),
    ({"doi": "10.1/x"}, None, None, "journalArticle"),
    ({}, "Nature Machine Intelligence", None, "journalArticle"),
    ({}, None, None, "preprint"),
])
def test_item_types(ids, venue, track, kind):
    assert item_type(ids, venue, track) == kind


def paper(**given):
    fields = {"title": "T", "authors": ["Ada Lovelace", "Plato"], "abstract": "A.", "year": 2020, "url": None,
              "venue": None, "track": None, "ids": lambda: given.pop("_ids", {})}
    return SimpleNamespace(**{**fields, **given})


@pytest.mark.parametrize("made", [
    paper(_ids={"arxiv": "2101.00001"}),
    paper(_ids={"arxiv": "2101.00001", "doi": "10.5555/a"}, venue="ICML 2021"),
    paper(_ids={"doi": "10.5555/b"}, venue="Journal of Okapis"),
])
def test_an_item_uses_only_its_types_fields_and_its_ids_read_back(made):
    ids = dict(made.ids())
    made.ids = lambda: ids
    data = paper_item(made, "ABCD2345", "RDNG2345", ["read"])
    assert set(data) <= FIELDS[data["itemType"]]
    assert item_ids(data) == ids
    record = record_of({"key": "ABCD2345", "data": data}, 4242, 1)
    assert record.external_ids == {**ids, "zotero": "4242/ABCD2345"}
    assert (record.authors, record.year, record.tags) == (["Ada Lovelace", "Plato"], 2020, ["read"])


def test_names_and_untitled_items():
    assert creator("Lovelace, Ada") == {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}
    assert creator("Plato") == {"creatorType": "author", "name": "Plato"}
    assert record_of({"key": "K", "data": {"itemType": "note", "note": "x"}}, 1, 1) is None
    assert record_of({"key": "K", "data": {"itemType": "book", "title": " "}}, 1, 1) is None
    extra = record_of({"key": "K", "data": {"itemType": "book", "title": "B", "extra": "arXiv: 2101.00001v2",
                                            "date": "March 2019"}}, 1, 1)
    assert extra.external_ids["arxiv"] == "2101.00001" and extra.year == 2019


def test_an_abstract_of_a_whole_paper_is_kept_to_its_first_words():
    """A group whose abstract fields hold whole papers (90 KB each) made the import's
    search index hold them too: 1.04 GB for 10,000 items. Kept to ABSTRACT_MOST, cut at a
    word; a real abstract is kept whole."""
    from bot.zotero.items import ABSTRACT_MOST

    real = "We study graphs. " * 100
    kept = record_of({"key": "K", "data": {"itemType": "journalArticle", "title": "T", "abstractNote": real}}, 1, 1)
    assert kept.abstract == real.strip()
    long = record_of({"key": "K", "data": {"itemType": "journalArticle", "title": "T",
                                           "abstractNote": "word " * 20_000}}, 1, 1)
    assert len(long.abstract) <= ABSTRACT_MOST + 2 and long.abstract.endswith("word …")

"""The year: written as a filter (`year:2021`, `year:2019-2021`) or as people ask
(`papers about graph networks from 2021`), both engines narrow to the same papers in the
same order; a year no paper has is named with the years there are (issue 46)."""

from __future__ import annotations

import json

import pytest

from bot.app import build_services
from bot.messages import ChannelRef, Incoming, UserRef
from bot.search.query import Query, QueryError
from tests.search.simple_engine import SimpleBackend

PAPERS = [
    ("Graph neural networks for molecules", 2019),
    ("Graph neural networks at scale", 2021),
    ("Expressive graph neural networks", 2021),
    ("Message passing graph networks revisited", 2022),
    ("Graph neural networks without a year", None),
    ("Diffusion models for graphs", 2021),
]


@pytest.mark.parametrize("typed, text, years", [
    ("papers about graph neural networks from 2021", "graph neural networks", ["2021"]),
    ("graph neural networks in 2019-2021", "graph neural networks", ["2019-2021"]),
    ("Find papers on diffusion published in 2020", "diffusion", ["2020"]),
    ("graph networks from 2019 to 2021", "graph networks", ["2019-2021"]),
    ("graph networks since 2021", "graph networks", ["2021-2099"]),
    ("graph networks year:2021", "graph networks", ["2021"]),
])
def test_a_year_written_as_people_ask_is_the_year_filter(typed, text, years):
    assert Query.parse(typed) == Query(text, {"year": years})


@pytest.mark.parametrize("typed", ["2021 surveys of graph networks", "papers about", "results from ablation",
                                   "in 2021"])
def test_words_that_are_not_a_year_phrase_stay_words(typed):
    assert "year" not in Query.parse(typed).filters


@pytest.mark.parametrize("typed", ["graphs year:20x", "graphs year:2022-2019", "graphs year:1850"])
def test_a_year_filter_that_is_not_one_is_refused_before_any_engine(typed):
    with pytest.raises(QueryError):
        Query.parse(typed)


@pytest.fixture
def library_with_years(database_url, db, tmp_path):
    path = tmp_path / "years.jsonl"
    path.write_text("".join(json.dumps({"id": f"p{n}", "title": title, "abstract": f"About {title.lower()}.",
                                        **({"year": year} if year else {})}) + "\n"
                            for n, (title, year) in enumerate(PAPERS)), encoding="utf-8")
    services = build_services(database_url)
    services.library.import_file(path, "years")
    yield services
    services.db.dispose()


def _titles(services, index, typed: str) -> list[str]:
    hits = index.search(Query.parse(typed), 10)
    return [services.library.get_many([h.paper_id])[h.paper_id].title for h in hits]


def test_both_engines_narrow_to_the_year_and_rank_the_sentence_as_the_filter(library_with_years):
    services = library_with_years
    for index in (services.search.current(), SimpleBackend(services.library).current()):
        asked = _titles(services, index, "papers about graph neural networks from 2021")
        assert asked == _titles(services, index, "graph neural networks year:2021")
        assert sorted(asked) == ["Diffusion models for graphs", "Expressive graph neural networks",
                                 "Graph neural networks at scale"]  # the 2021 papers, and only those
        assert set(_titles(services, index, "graph networks year:2019-2021")) == {
            "Graph neural networks for molecules", "Graph neural networks at scale", "Expressive graph neural networks",
            "Diffusion models for graphs"}  # not 2022's, nor the one without a year
        assert _titles(services, index, "graph since 2022") == ["Message passing graph networks revisited"]


def test_a_year_no_paper_has_is_named_with_the_years_there_are(library_with_years):
    reply = library_with_years.core.handle(Incoming(ChannelRef("console", "local", "t"), UserRef("console", "u"),
                                                    "search graph networks year:2030"))
    assert reply.text == "No paper from `2030`; the papers here are from 2019 to 2022."

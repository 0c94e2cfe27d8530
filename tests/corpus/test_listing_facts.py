"""A listing's venue and year: `paperclub import FILE --venue ... --year ...`, a listing's
own header, and what `paperclub demo` gives its bundled files."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from adapters.cli.commands import DEMO_COLLECTIONS, demo_listing
from bot.corpus.library import Library
from bot.corpus.listing import ListingFacts, ListingProblem, from_header
from bot.corpus.readers import read_path
from store import Database
from tests.processes import paperclub

LISTING = """## [A Paper Without a Venue](#)

- Ada Lovelace
- abstract@[open-review\\(Poster\\)](#): We study engines that compute, at length and with care.

## [Another Paper](#)

- Alan Turing
- abstract@[open-review\\(Oral\\)](#): Machines that think, and how to tell when they do so.
"""
ABSTRACT = "We study how networks learn, and find that they do so in ways we describe here at length. " * 3


def _papers(url: str) -> dict[str, tuple[str | None, int | None]]:
    db = Database(url)
    try:
        return {p.title: (p.venue, p.year) for p in Library(db).iter_papers()}
    finally:
        db.dispose()


def test_import_fills_venue_and_year_where_the_file_leaves_them_out(tmp_path):
    listing = tmp_path / "iclr.md"
    listing.write_text(LISTING, encoding="utf-8")
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"title": "Given Its Own", "abstract": ABSTRACT, "venue": "NeurIPS", "year": 2019})
                   + "\n" + json.dumps({"title": "Only a Year", "abstract": ABSTRACT, "year": 2018}) + "\n")
    url = f"sqlite:///{tmp_path / 'p.db'}"
    done = paperclub("--database-url", url, "import", str(listing), str(own), "--venue", " ICLR  2021 ",
                     "--year", "2021", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _papers(url) == {
        "A Paper Without a Venue": ("ICLR 2021", 2021),
        "Another Paper": ("ICLR 2021", 2021),
        "Given Its Own": ("NeurIPS", 2019),  # what the file says stays
        "Only a Year": ("ICLR 2021", 2018),
    }


@pytest.mark.parametrize("option, value, said", [
    ("--year", "20211", "--year '20211' is not a year"),
    ("--year", "21", "--year '21' is not a year"),
    ("--year", "0999", "--year '0999' is not a year"),
    ("--venue", "ICLR\t2021", "--venue must be one line of printable text"),
    ("--venue", "ICLR\x1b[31m", "--venue must be one line of printable text"),
    ("--venue", "   ", "--venue must be one line of printable text"),
    ("--venue", "x" * 1000, "--venue is 1,000 characters long"),
])
def test_a_bad_venue_or_year_is_refused_in_one_line_and_nothing_is_imported(tmp_path, option, value, said):
    listing = tmp_path / "iclr.md"
    listing.write_text(LISTING, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'p.db'}"
    done = paperclub("--database-url", url, "import", str(listing), option, value, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {said}") and done.stderr.count("\n") == 1
    assert done.stderr.rstrip().endswith("nothing imported")
    assert not (tmp_path / "p.db").exists()


def test_checked_keeps_good_values_as_typed():
    assert ListingFacts.checked("ICLR 2021", "2021") == ListingFacts("ICLR 2021", 2021)
    assert ListingFacts.checked(None, None) == ListingFacts() and not ListingFacts()
    with pytest.raises(ListingProblem):
        ListingFacts.checked(None, "2O21")


@pytest.mark.parametrize("title, facts", [
    ("ICLR 2022 Interesting Paper Review", ListingFacts("ICLR 2022", 2022)),
    ("NeurIPS-2023 highlights", ListingFacts("NeurIPS 2023", 2023)),
    ("Poster Session 3", ListingFacts()),
    ("Interesting papers of 2022", ListingFacts()),
    ("A 2022 review", ListingFacts()),
])
def test_only_a_header_that_names_venue_and_year_gives_them(title, facts):
    assert from_header(title) == facts


def test_a_topic_listing_whose_title_names_its_venue_gives_each_paper_both(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("ICLR 2022 Interesting Paper Review\n\n" + "\n\n".join([ABSTRACT] * 3) + "\n", encoding="utf-8")
    fmt, records = read_path(path)
    assert fmt == "topic-abstracts"
    assert {(r.venue, r.year) for r in records} == {("ICLR 2022", 2022)}
    path.write_text("Reading group notes\n\n" + "\n\n".join([ABSTRACT] * 3) + "\n", encoding="utf-8")
    assert {(r.venue, r.year) for r in read_path(path)[1]} == {(None, None)}


def test_the_demo_gives_its_iclr_listings_their_venue_and_year(sqlite_db):
    library = Library(sqlite_db)
    for name, collection in DEMO_COLLECTIONS.items():
        with resources.as_file(resources.files("bot") / "demo_corpus" / name) as path:
            library.import_file(path, collection, listing=demo_listing(name))
    by_collection: dict[str, set] = {}
    for paper in library.iter_papers():
        for source in paper.sources:
            by_collection.setdefault(source.collection, set()).add((paper.venue, paper.year))
    assert by_collection["iclr2021"] == {("ICLR 2021", 2021)}
    assert by_collection["iclr2023-posters"] == {("ICLR 2023", 2023)}
    assert by_collection["iclr2022-topics"] == {("ICLR 2022", 2022)}
    assert ("ICLR 2022", 2022) in by_collection["iclr2022-blog"]

"""Which work is a paper (bot.enrich.matching), and how a work is read (bot.enrich.openalex):
the same title in any case and punctuation, the same people, a year close; decoys, far
years and ambiguous titles left unmatched; junk fields skipped with why."""

from __future__ import annotations

import pytest

from adapters.fakes.openalex import FakeAuthor, FakeWork
from bot.corpus.answer_fields import Junk
from bot.corpus.fetch import Fetcher
from bot.corpus.records import title_key
from bot.enrich.matching import Wanted, match, same_people, surnames
from bot.enrich.openalex import (
    TITLES_MOST,
    URL_MOST,
    AnswerError,
    TitleSearch,
    read_page,
    read_work,
)


def found(n, title, people, year=2021, **more):
    authors = [FakeAuthor(f"A{n}{i}", name) for i, name in enumerate(people)]
    return read_work(FakeWork(f"W{n}", title, published=f"{year}-01-01", authors=authors, **more).json())


def wanted(title, people=(), year=2021):
    return Wanted(1, title, False, title_key(title), tuple(people), year)


def test_surnames_read_both_orders_and_ignore_case_and_accents():
    assert surnames(["Ada Lovelace", "Turing, Alan", "Kurt GÖDEL", ""]) == {"lovelace", "turing", "godel"}
    assert same_people(surnames(["A Wang", "B Li", "C Zhang"]), surnames(["Q Wang", "R Li"]))
    # Half of the shorter list at least: one common name of four is not the same people.
    assert not same_people(surnames(["A Wang", "B Li", "C Zhang", "D Chen"]), surnames(["Q Wang", "X Ng", "Y Ho",
                                                                                          "Z Yu"]))
    assert not same_people(surnames(["A Wang"]), surnames([]))


def test_the_paper_is_the_work_of_its_title_and_people_not_the_decoy():
    paper = wanted("How Do Vision Transformers Work?", ["Namuk Park", "Songkuk Kim"])
    decoy = found(1, "How do vision transformers work", ["Alex Decoy"], cited_by=10**6)
    real = found(2, "HOW DO VISION TRANSFORMERS WORK", ["Park, Namuk", "Kim, Songkuk"])
    assert match(paper, [decoy, real]) == real
    assert match(paper, [decoy]) is None
    assert match(wanted("How Do Vision Transformers Work", ["Namuk Park"], year=2015), [real]) is None  # years apart
    assert match(wanted("How Vision Transformers Work", ["Namuk Park"]), [real]) is None  # another title


def test_of_matching_works_the_published_one_is_taken_before_the_preprint():
    paper = wanted("Same Title", ["Ann Smith"])
    preprint = found(1, "Same Title", ["Ann Smith"], year=2020, arxiv="2001.01234", cited_by=500)
    published = found(2, "Same Title", ["Ann Smith"], venue="ICLR", landing="https://x.org/p", cited_by=3)
    assert preprint.venue == "arXiv" and preprint.arxiv == "2001.01234" and published.venue == "ICLR"
    assert match(paper, [preprint, published]) == published


def test_without_authors_only_an_unambiguous_title_matches():
    lonely = found(1, "Lonely", ["Ann Smith"])
    versions = [found(2, "Twice", ["Ann Smith", "Bo Jones"]), found(3, "Twice", ["Jones, Bo"], venue="ICLR")]
    assert match(wanted("Lonely"), [lonely]) == lonely
    assert match(wanted("Twice"), versions) == versions[1]  # versions of one paper: the published one
    assert match(wanted("Twice"), [*versions, found(4, "Twice", ["Cy Other"])]) is None


def test_a_work_is_read_with_its_pdf_landing_page_doi_and_venue():
    work = found(7, "T", ["Ann Smith"], doi="10.1000/ABC", venue="Journal of X", venue_type="journal",
                 landing="https://x.org/7", pdf="https://x.org/7.pdf", cited_by=12)
    assert (work.id, work.doi, work.link, work.pdf, work.venue, work.cited_by, work.year) == (
        "W7", "10.1000/abc", "https://x.org/7", "https://x.org/7.pdf", "Journal of X", 12, 2021)
    bare = found(8, "T", [], doi="10.1000/xyz")
    assert (bare.link, bare.pdf, bare.venue) == ("https://doi.org/10.1000/xyz", None, None)


@pytest.mark.parametrize(("changes", "why"), [
    ({"display_name": 5}, "display_name is a number, not a string"),
    ({"display_name": ""}, "display_name (the title) is empty"),
    ({"publication_year": 30000}, "publication_year 30000 is not a year"),
    ({"authorships": {"a": 1}}, "authorships is an object, not a list"),
    ({"primary_location": "here"}, "primary_location is a string, not an object"),
    ({"id": "https://openalex.org/A1"}, "id is not an OpenAlex work id"),
    ({"cited_by_count": -1}, "cited_by_count is a number, not a whole number"),
])
def test_a_work_of_the_wrong_shape_is_junk_saying_why(changes, why):
    with pytest.raises(Junk, match="^" + why.replace("(", r"\(").replace(")", r"\)") + "$"):
        read_work(FakeWork("W1", "T", changes=changes).json())


def test_a_page_that_is_no_page_is_refused_and_a_cut_page_is_told():
    with pytest.raises(AnswerError, match="without a list of results"):
        read_page({"results": "none"})
    page = read_page({"meta": {"count": 3}, "results": [FakeWork("W1", "A").json(), "junk"]})
    assert page.cut and [w.id for w in page.works] == ["W1"]
    assert page.skipped == [("work 2", "the work is a string, not an object")]


def test_titles_are_batched_within_the_url_and_the_count():
    client = TitleSearch("https://api.openalex.org", Fetcher(), "club@example.org")
    keys = [f"a title of some length number {n}" for n in range(60)]
    batches = client.batches(keys)
    assert [len(b) for b in batches] == [TITLES_MOST, TITLES_MOST, 10]
    long = ["word " * 100 + str(n) for n in range(10)]
    assert all(len(client.url(b)) <= URL_MOST for b in client.batches(long))
    assert client.url(["a b"]).endswith('filter=title.search:%22a+b%22&select=id,doi,display_name,publication_year,'
                                        'authorships,primary_location,best_oa_location,locations,cited_by_count'
                                        '&per-page=200&mailto=club%40example.org')

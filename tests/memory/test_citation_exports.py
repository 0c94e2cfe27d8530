"""RIS and CSL-JSON exports that reference managers accept, checked with real parsers:
rispy reads the RIS back, citeproc-py renders a reference list from the CSL-JSON, and
bibtexparser reads the BibTeX. Each paper keeps its type, year, venue, DOI and link; a
title written in LaTeX reads as text. The demo corpus goes through all three; the
command line exports the library, a collection or a channel in any of the formats."""

from __future__ import annotations

import json
from importlib import resources

import bibtexparser
import pytest
import rispy
from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON

from adapters.cli.commands import DEMO_COLLECTIONS, DEMO_EXTRAS, demo_listing
from bot.cards.cards import paper_link
from bot.corpus.library import Library
from bot.memory import cli as export_cli
from bot.memory import export
from bot.memory.citations import csl_json, ris
from bot.memory.record import entry_of
from bot.messages import ChannelRef
from store import Database
from tests.memory.test_bibtex_entries import PAPERS
from tests.processes import paperclub

STYLE = "harvard-cite-them-right"  # the style citeproc-py ships
LATEX = {"title": r"$\epsilon$-Greedy Exploration with $O(\sqrt{T})$ Regret", "authors": ["Ludwig van Beethoven"],
         "venue": "Journal of Machine Learning Research", "year": 2019, "external_ids": {"doi": "10.1/eps"}}
CHANNEL = ChannelRef("console", "local", "reading")


def _library(tmp_path, name: str, records: list[dict]) -> Library:
    db = Database(f"sqlite:///{tmp_path / name}.db")
    db.upgrade()
    library = Library(db)
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    library.import_file(path, name)
    return library


def _entries(library: Library):
    return [entry_of(p) for p in library.iter_papers()]


def rendered(csl: str) -> list[str]:
    """The reference list citeproc-py renders from the CSL-JSON, one string a paper."""
    items = json.loads(csl)
    bibliography = CitationStylesBibliography(CitationStylesStyle(STYLE, validate=False), CiteProcJSON(items),
                                              formatter.plain)
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    return [str(reference) for reference in bibliography.bibliography()]


@pytest.fixture
def papers(tmp_path):
    return _library(tmp_path, "reading", [*PAPERS, LATEX])


def test_ris_read_back_by_rispy_keeps_type_year_venue_doi_and_link(papers):
    records = {r["title"]: r for r in rispy.loads(ris(_entries(papers), CHANNEL))}
    iclr = records["Graph Neural Networks at 50% Less Memory"]
    assert (iclr["type_of_reference"], iclr["secondary_title"], iclr["year"], iclr["doi"], iclr["urls"]) == (
        "CPAPER", "ICLR 2021", "2021", "10.5555/iclr.2021.17", ["https://openreview.net/forum?id=abc123"])
    assert iclr["authors"] == ["Ada Lovelace", "Alan M. Turing"] and iclr["abstract"] == "We cut memory by half & more."
    survey = records["A Survey of Sparse Coding"]
    assert (survey["type_of_reference"], survey["secondary_title"]) == (
        "JOUR", "Transactions on Machine Learning Research")
    preprint = records["Decision Transformers for Weather"]
    assert (preprint["type_of_reference"], preprint["number"], preprint["publisher"], preprint["urls"]) == (
        "UNPB", "2401.01234", "arXiv", ["https://arxiv.org/abs/2401.01234"])
    assert "secondary_title" not in preprint and "arXiv:2401.01234" in preprint["notes"]
    assert "ε-Greedy Exploration with O(√(T)) Regret" in records
    assert "year" not in records["Notes Without a Venue"]


def test_csl_json_renders_through_citeproc_with_types_names_dates_and_venues(papers):
    written = csl_json(_entries(papers), CHANNEL)
    items = {item["title"]: item for item in json.loads(written)}
    iclr = items["Graph Neural Networks at 50% Less Memory"]
    assert (iclr["type"], iclr["container-title"], iclr["issued"], iclr["DOI"], iclr["URL"]) == (
        "paper-conference", "ICLR 2021", {"date-parts": [[2021]]}, "10.5555/iclr.2021.17",
        "https://openreview.net/forum?id=abc123")
    assert iclr["author"] == [{"family": "Lovelace", "given": "Ada"}, {"family": "Turing", "given": "Alan M."}]
    assert items["A Survey of Sparse Coding"]["type"] == "article-journal"
    preprint = items["Decision Transformers for Weather"]
    assert (preprint["type"], preprint["number"], preprint["publisher"]) == ("article", "2401.01234", "arXiv")
    latex = items["ε-Greedy Exploration with O(√(T)) Regret"]
    assert latex["author"] == [{"family": "van Beethoven", "given": "Ludwig"}]
    assert items["Notes Without a Venue"]["author"] == [{"literal": "Anonymous"}]
    assert "Posted in" not in written and "Read in console:local:reading" in written  # where it was read
    references = rendered(written)
    assert len(references) == len(items)
    survey = next(r for r in references if "Sparse Coding" in r)
    assert "Liskov, B. and Dijkstra, E.W. (2023)" in survey and "Transactions on Machine Learning Research" in survey
    assert any("van Beethoven, L. (2019) “ε-Greedy Exploration" in r for r in references)
    assert any(r.endswith("ICLR 2021. Available at: https://doi.org/10.5555/iclr.2021.17.") for r in references)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The bundled demo corpus (ICLR listings, trending papers, a reading list), imported once."""
    folder = tmp_path_factory.mktemp("demo")
    db = Database(f"sqlite:///{folder / 'demo.db'}")
    db.upgrade()
    library = Library(db)
    for where, files in (("demo_corpus", DEMO_COLLECTIONS), ("demo_extras", DEMO_EXTRAS)):
        for name, collection in files.items():
            with resources.as_file(resources.files("bot") / where / name) as path:
                library.import_file(path, collection, listing=demo_listing(name))
    yield library
    db.dispose()


def test_the_demo_corpus_parses_in_every_format_and_keeps_what_is_known(demo):
    papers = list(demo.iter_papers())
    entries = [entry_of(p) for p in papers]
    bib = bibtexparser.parse_string(export.bibtex(entries, None))
    assert not bib.failed_blocks and len(bib.entries) == len(papers) > 1000
    records = rispy.loads(ris(entries, None))
    items = json.loads(csl_json(entries, None))
    assert len(records) == len(items) == len(papers)
    assert len(rendered(json.dumps(items))) == len(papers)
    known = 0
    for paper, record, item in zip(papers, records, items, strict=True):
        ids = paper.ids()
        assert record.get("year") == (str(paper.year) if paper.year else None)
        assert item.get("issued") == ({"date-parts": [[paper.year]]} if paper.year else None)
        assert record.get("doi") == ids.get("doi") and item.get("DOI") == ids.get("doi")
        link = paper_link(paper)
        assert record.get("urls") == ([link] if link else None) and item.get("URL") == link
        if paper.venue and not paper.venue.lower().startswith(("arxiv", "corr")):
            assert record["secondary_title"] == item["container-title"] == paper.venue
            known += 1
    assert known >= 3  # the reading list's conference papers
    assert {"CPAPER", "UNPB"} <= {r["type_of_reference"] for r in records}


def test_export_a_collection_in_each_format_from_the_command_line(papers, tmp_path):
    url = f"sqlite:///{tmp_path / 'reading.db'}"
    papers.db.dispose()
    extra = tmp_path / "other.jsonl"
    extra.write_text(json.dumps({"title": "Elsewhere Only", "authors": ["Nobody Here"]}) + "\n")
    assert paperclub("--database-url", url, "import", str(extra), cwd=tmp_path).returncode == 0
    out = tmp_path / "reading.ris"
    done = paperclub("--database-url", url, "export", "--collection", "reading", "--format", "ris", "-o", str(out),
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exported 6 papers in collection reading (ris)" in done.stderr
    titles = {r["title"] for r in rispy.loads(out.read_text(encoding="utf-8"))}
    assert len(titles) == 6 and "Elsewhere Only" not in titles
    csl = paperclub("--database-url", url, "export", "--format", "csljson", cwd=tmp_path)
    assert csl.returncode == 0 and len(rendered(csl.stdout)) == 7
    lines = paperclub("--database-url", url, "export", "--collection", "other", cwd=tmp_path)
    assert [json.loads(line)["title"] for line in lines.stdout.splitlines()] == ["Elsewhere Only"]


def test_an_unknown_collection_or_nothing_to_export_is_said_plainly(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    empty = paperclub("--database-url", url, "export", "--format", "ris", cwd=tmp_path)
    assert empty.returncode == 0 and empty.stdout == "" and "exported 0 papers (ris)" in empty.stderr
    unknown = paperclub("--database-url", url, "export", "--collection", "nope", "--format", "bibtex", cwd=tmp_path)
    assert unknown.returncode == 1 and "no such collection" in unknown.stderr
    assert "Traceback" not in unknown.stderr + empty.stderr
    wrong = paperclub("--database-url", url, "export", "--format", "endnote", cwd=tmp_path)
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr


def test_the_command_lines_formats_are_the_exporters():
    assert export_cli.FORMATS == export.FORMATS


KINDS = [  # (record, BibTeX type, RIS type, CSL type)
    ({"title": "A Poster Without a Venue", "authors": ["Ada Lovelace"], "track": "Poster", "year": 2021},
     "inproceedings", "CPAPER", "paper-conference"),
    ({"title": "A Journal Paper", "authors": ["Alan Turing"], "venue": "Journal of Machine Learning Research",
      "year": 2019}, "article", "JOUR", "article-journal"),
    ({"title": "A Preprint", "authors": ["Grace Hopper"], "year": 2023, "external_ids": {"arxiv": "2301.00001"}},
     "misc", "UNPB", "article"),
]


def test_each_kind_of_paper_exports_as_its_type_with_its_year_in_every_format(tmp_path):
    library = _library(tmp_path, "kinds", [record for record, *_ in KINDS])
    entries = sorted(_entries(library), key=lambda e: e.title)
    by_title = {record["title"]: kinds for record, *kinds in KINDS}
    bib = {e["title"]: e for e in bibtexparser.parse_string(export.bibtex(entries, None)).entries}
    ris_records = {r["title"]: r for r in rispy.loads(ris(entries, None))}
    items = {i["title"]: i for i in json.loads(csl_json(entries, None))}
    for record, *_ in KINDS:
        title, year = record["title"], record["year"]
        bib_type, ris_type, csl_type = by_title[title]
        assert (bib[title].entry_type, bib[title]["year"]) == (bib_type, str(year))
        assert (ris_records[title]["type_of_reference"], ris_records[title]["year"]) == (ris_type, str(year))
        assert (items[title]["type"], items[title]["issued"]) == (csl_type, {"date-parts": [[year]]})
    assert bib["A Journal Paper"]["journal"] == "Journal of Machine Learning Research"
    assert (bib["A Preprint"]["eprint"], bib["A Preprint"]["archiveprefix"]) == ("2301.00001", "arXiv")


def test_the_demos_iclr_papers_export_as_conference_papers_with_their_year(demo):
    iclr = [p for p in demo.iter_papers() if any(s.collection == "iclr2021" for s in p.sources)]
    assert len(iclr) > 500
    entries = [entry_of(p) for p in iclr]
    bib = bibtexparser.parse_string(export.bibtex(entries, None)).entries
    assert {(e.entry_type, e["booktitle"], e["year"]) for e in bib} == {("inproceedings", "ICLR 2021", "2021")}
    assert {(r["type_of_reference"], r["year"]) for r in rispy.loads(ris(entries, None))} == {("CPAPER", "2021")}
    items = json.loads(csl_json(entries, None))
    assert {(i["type"], i["container-title"], i["issued"]["date-parts"][0][0]) for i in items} == {
        ("paper-conference", "ICLR 2021", 2021)}

"""Imports at the edges, on SQLite and PostgreSQL alike: values a column cannot hold,
truncated files, runaway lines and oversized files.

PostgreSQL refuses what SQLite stores (a string past its column's width, a NUL, a year
past 32 bits), so each case runs on both: the same verdict, the same `FILE:LINE: message`,
and nothing stored from a refused file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from adapters.cli.main import main
from bot.corpus import readers
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord
from store.models import Paper, PaperExternalId, PaperSource
from tests.conftest import DATA, SEED_FILES

GOOD = {"title": "A paper already in the library", "abstract": "It is stored before.", "year": 2021}


def stored(library: Library) -> tuple[int, int, int, int]:
    """(papers, sources, external ids, revision): what a refused import must not change."""
    with library.db.session() as session:
        counts = [
            session.scalar(select(func.count()).select_from(t))
            for t in (Paper, PaperSource, PaperExternalId)
        ]
    return (*counts, library.revision())


@pytest.fixture
def library(db) -> Library:
    """A library holding one paper, so that a refused import has rows it could have touched."""
    library = Library(db)
    library.import_records(
        [PaperRecord(**GOOD)], collection="before", source="before.jsonl", fmt="jsonl"
    )
    return library


def jsonl(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def refused(library: Library, path: Path, line: int, message: str, **options: Any) -> None:
    """The import raises `path:line: ...message...` and stores nothing."""
    before = stored(library)
    with pytest.raises(CorpusFormatError) as raised:
        library.import_file(path, **options)
    assert str(raised.value).startswith(f"{path}:{line}: "), str(raised.value)
    assert message in raised.value.message
    assert stored(library) == before


# --- values the columns cannot hold ---------------------------------------------------------

LONG_VALUES = {
    # field: (the longest value the column holds, one character more, what the message says)
    "track": (
        "t" * 100,
        "t" * 101,
        "the track is 101 characters long, at most 100 fit: shorten it",
    ),
    "presentation": (
        "p" * 200,
        "p" * 201,
        "the presentation is 201 characters long, at most 200 fit",
    ),
    "award": ("a" * 200, "a" * 201, "the award is 201 characters long, at most 200 fit"),
    "venue": ("v" * 300, "v" * 301, "the venue is 301 characters long, at most 300 fit"),
}


@pytest.mark.parametrize("field", list(LONG_VALUES))
def test_a_value_wider_than_its_column_is_refused_on_both_databases(library, tmp_path, field):
    longest, too_long, message = LONG_VALUES[field]
    fits = jsonl(tmp_path / "fits.jsonl", GOOD, {"title": "Fits", "abstract": "x.", field: longest})
    assert library.import_file(fits).added == 1
    wide = jsonl(
        tmp_path / "wide.jsonl", GOOD, {"title": "Too wide", "abstract": "x.", field: too_long}
    )
    refused(library, wide, 2, f"paper 'Too wide': {message}")


def test_a_title_past_the_title_key_column_is_refused(library, tmp_path):
    longest = "Word " * 102 + "ab"  # its key ("word word ... ab") is exactly 512 characters
    fits = jsonl(tmp_path / "fits.jsonl", {"title": longest, "abstract": "x."})
    assert library.import_file(fits).added == 1
    long = jsonl(tmp_path / "long.jsonl", GOOD, {"title": "word " * 200, "abstract": "x."})
    refused(library, long, 2, "the title is 999 characters long, at most 512 fit: shorten it")
    # Folding can lengthen a title: 300 ligatures "ﬁ" make a key of 600 characters.
    folded = jsonl(tmp_path / "folded.jsonl", GOOD, {"title": "\ufb01" * 300, "abstract": "x."})
    refused(library, folded, 2, "the title is 600 characters long, at most 512 fit: shorten it")


def test_an_external_id_past_its_column_is_refused(library, tmp_path):
    fits = jsonl(tmp_path / "fits.jsonl", {"title": "Fits", "external_ids": {"s" * 32: "1" * 255}})
    assert library.import_file(fits).added == 1
    value = jsonl(
        tmp_path / "value.jsonl", GOOD, {"title": "Long id", "external_ids": {"doi": "1" * 256}}
    )
    refused(
        library,
        value,
        2,
        "the doi id is 256 characters long, at most 255 fit: is it an identifier?",
    )
    scheme = jsonl(
        tmp_path / "scheme.jsonl", {"title": "Long scheme", "external_ids": {"s" * 33: "1"}}
    )
    refused(library, scheme, 1, "the id scheme is 33 characters long, at most 32 fit")


@pytest.mark.parametrize(
    "field, value, what",
    [
        ("title", "Nul\u0000title", "the title"),
        ("abstract", "An abstract\u0000.", "the abstract"),
        ("authors", ["Ada\u0000 Lovelace"], "an author"),
        ("tags", ["t\u0000"], "a tag"),
        ("notes", ["a note\u0000"], "a note"),
        ("external_ids", {"doi": "10.1/\u0000"}, "the doi id"),
        ("url", "https://example.org/\u0000", "the url"),
    ],
)
def test_a_nul_character_anywhere_is_refused(library, tmp_path, field, value, what):
    record = {"title": "Has a NUL", "abstract": "x.", field: value}
    path = jsonl(tmp_path / "nul.jsonl", GOOD, record)  # json.dumps writes the NUL as \u0000
    refused(
        library,
        path,
        2,
        f"{what} contains a NUL character (\\u0000), which cannot be stored: remove it",
    )


def test_an_unpaired_surrogate_is_refused(library, tmp_path):
    path = tmp_path / "surrogate.jsonl"
    path.write_text('{"title": "Broken \\ud800 pair", "abstract": "x."}\n', encoding="utf-8")
    refused(library, path, 1, "the title contains an unpaired surrogate (\\ud800)")


@pytest.mark.parametrize("year", [3000000000, 20211, 999, 2201, 0])
def test_an_implausible_year_is_refused(library, tmp_path, year):
    fits = jsonl(
        tmp_path / "fits.jsonl", {"title": "Old", "year": 1000}, {"title": "Far", "year": 2200}
    )
    assert library.import_file(fits).added == 2
    path = jsonl(tmp_path / "year.jsonl", GOOD, {"title": "When", "abstract": "x.", "year": year})
    refused(library, path, 2, f"the year {year} is outside 1000-2200: correct it or leave it out")


def test_other_readers_pass_the_same_checks(library, tmp_path):
    bib = tmp_path / "venue.bib"
    bib.write_text(
        "@article{ok, title={Fine}, journal={J}}\n\n"
        f"@inproceedings{{wide,\n  title = {{Wide venue}},\n  booktitle = {{{'B' * 301}}},\n}}\n",
        encoding="utf-8",
    )
    refused(
        library, bib, 3, "paper 'Wide venue': the venue is 301 characters long, at most 300 fit"
    )
    listing = tmp_path / "track.md"
    listing.write_text(
        f"## [A paper](#)\n- A. Author\n- abstract@[open-review\\({'x' * 101}\\)](#): Text.\n",
        encoding="utf-8",
    )
    refused(library, listing, 1, "the track is 101 characters long, at most 100 fit")


def test_a_collection_name_past_its_column_is_refused(library, tmp_path):
    path = jsonl(tmp_path / "papers.jsonl", {"title": "Named", "abstract": "x."})
    assert library.import_file(path, collection="c" * 200).added == 1
    message = (
        "the collection name is 201 characters long, at most 200 fit: pass a shorter --collection"
    )
    refused(library, path, 1, message, collection="c" * 201)
    # The default collection is the file's name, which may be longer than the column.
    long_name = jsonl(
        tmp_path / ("n" * 201 + ".jsonl"), {"title": "Long file name", "abstract": "x."}
    )
    refused(library, long_name, 1, "the collection name is 201 characters long")
    # A file name that was not UTF-8 arrives as surrogate escapes, which no database stores.
    refused(
        library,
        path,
        1,
        "the collection name contains an unpaired surrogate",
        collection="caf\udce9",
    )


def test_a_source_name_past_its_column_is_refused(library):
    before = stored(library)
    with pytest.raises(CorpusFormatError) as raised:
        library.import_records(
            [PaperRecord(title="T")], collection="c", source="s" * 501, fmt="jsonl"
        )
    assert (
        str(raised.value)
        == f"{'s' * 501}:1: the file name is 501 characters long, at most 500 fit: rename the file"
    )
    assert stored(library) == before


def test_the_command_line_prints_file_line_and_no_traceback(db, database_url, tmp_path, capsys):
    path = jsonl(
        tmp_path / "wide.jsonl", GOOD, {"title": "Too wide", "abstract": "x.", "track": "t" * 101}
    )
    assert main(["--database-url", database_url, "import", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: paper 'Too wide': the track is 101 characters long" in err
    assert "DataError" not in err and "t" * 101 not in err  # no corpus text in the logs
    assert Library(db).count() == 0


# --- truncated files ------------------------------------------------------------------------

BIB = (DATA / "sample.bib").read_text(encoding="utf-8")
ATOM = (DATA / "arxiv_sample.atom").read_text(encoding="utf-8")


def cut(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_bibtex_file_cut_inside_an_entry_is_refused_whole(library, tmp_path):
    path = cut(tmp_path, "cut.bib", BIB[: BIB.index("improves the GLUE score")])
    refused(library, path, 14, "this entry is still open at the end of the file: is it truncated")


def test_a_bibtex_file_cut_after_an_entry_type_is_refused_whole(library, tmp_path):
    path = cut(tmp_path, "cut.bib", BIB[: BIB.index("{scholkopf2021causal")])
    refused(library, path, 23, "the file ends on '@misc', without its entry: is it truncated?")


def test_a_json_lines_file_cut_in_its_last_line_is_refused_whole(library, tmp_path):
    text = (DATA / "beir_sample.jsonl").read_text(encoding="utf-8")
    path = cut(tmp_path, "cut.jsonl", text[: text.rindex('"text"') + 10])
    refused(
        library, path, text.count("\n"), "not valid JSON (Unterminated string starting at, column"
    )
    refused(library, path, text.count("\n"), "; the file ends here: is it truncated?")


def test_a_json_array_cut_short_is_refused_whole(library, tmp_path):
    path = cut(tmp_path, "cut.json", '[\n{"title": "First"},\n{"title": "Sec')
    refused(library, path, 3, "the file ends here: is it truncated?")


def test_an_atom_feed_cut_inside_an_entry_is_refused_whole(library, tmp_path):
    path = cut(tmp_path, "cut.atom", ATOM[: ATOM.rindex("<summary>") + 40])
    last = ATOM[: ATOM.rindex("<entry>")].count("\n") + 1
    refused(
        library,
        path,
        path.read_text().count("\n") + 1,
        f"the file ends inside the entry at line {last}",
    )


# format: (a file cut inside its last abstract, the line and title of that paper)
PROSE_CUT = {
    "openreview": (
        (
            "## [First Paper](#)\n- A. Author, B. Author\n"
            "- abstract@[open-review\\(Poster\\)](#): We study things. It works.\n\n"
            "## [Second Paper](#)\n- C. Author\n"
            "- abstract@[open-review\\(Oral\\)](#): We propose a method that improves the\n"
        ),
        5,
        "Second Paper",
    ),
    "poster-session": (
        (
            "Poster Session 1\n\nIn-Person Poster presentation / poster accept\nFirst Title\nA · B\n"
            "We study things. It works.\n\nVirtual presentation / top 5% paper\nSecond Title\nC · D\n"
            "We propose a method that improves the\n"
        ),
        8,
        "Second Title",
    ),
    "trending": (
        (
            "Get trending papers in your email inbox!\n\nFirst Title\n"
            "We study things and it works well on every benchmark.\n\nSecond Title\n"
            "We propose a method that improves the"
        ),
        6,
        "Second Title",
    ),
}


@pytest.mark.parametrize("fmt", list(PROSE_CUT))
def test_a_prose_file_cut_inside_its_last_abstract_imports_with_a_warning(library, tmp_path, fmt):
    text, line, title = PROSE_CUT[fmt]
    path = cut(tmp_path, "cut.txt", text)
    summary = library.import_file(path)
    assert (summary.format, summary.added) == (fmt, 2)
    expected = (
        f"{path}:{line}: warning: the abstract of {title!r} stops mid-sentence at the end "
        "of the file; if the file was cut, import the whole file again"
    )
    assert summary.warnings == [expected]
    whole = cut(tmp_path, "cut.txt", text.rstrip("\n") + " results.\n")
    summary = library.import_file(whole)  # the same source: the cut abstract is replaced
    assert (summary.added, summary.updated, summary.warnings) == (0, 1, [])


@pytest.mark.parametrize("fmt", list(SEED_FILES))
def test_complete_seed_files_give_no_warning(fmt):
    # Their last abstracts end on a full stop or on a link (trending's ends on a URL).
    path = SEED_FILES[fmt]
    assert readers.truncation_warnings(fmt, readers.read_path(path)[1], str(path)) == []


# --- runaway lines and oversized files ------------------------------------------------------


def test_a_line_longer_than_the_cap_is_refused_at_its_line(library, tmp_path):
    longest = {"title": "Longest line", "abstract": ""}
    longest["abstract"] = "a" * (readers.LINE_MAX - len(json.dumps(longest)))
    fits = jsonl(tmp_path / "fits.jsonl", GOOD, longest)
    assert len(fits.read_text().split("\n")[1]) == readers.LINE_MAX
    assert library.import_file(fits).added == 1
    too_long = {**longest, "title": "Too long", "abstract": longest["abstract"] + "aaaaa"}
    path = jsonl(tmp_path / "long.jsonl", GOOD, GOOD, too_long, GOOD)
    refused(library, path, 3, "line longer than 1 MiB, the most one line may hold")


def test_a_bibtex_line_longer_than_the_cap_is_refused_at_its_line(library, tmp_path):
    path = cut(tmp_path, "long.bib", BIB.replace("It\n", "It " + "x" * readers.LINE_MAX + "\n"))
    refused(library, path, BIB[: BIB.index("It\n")].count("\n") + 1, "line longer than 1 MiB")


def test_a_file_past_the_size_cap_is_refused_before_it_is_read(library, tmp_path, monkeypatch):
    path = jsonl(tmp_path / "big.jsonl", GOOD, {"title": "Second", "abstract": "x" * 2000})
    monkeypatch.setattr(readers, "FILE_MAX", 1000)
    size = path.stat().st_size
    refused(
        library, path, 1, f"the file is {size:,} bytes, at most 1,000 are read at once: split it"
    )


def test_json_nested_past_reason_is_refused_with_its_line_not_a_crash(library, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    path = cut(tmp_path, "deep.jsonl", '{"title": "First"}\n' + deep + "\n")
    refused(library, path, 2, "JSON nested too deep to read")
    path = cut(tmp_path, "deep.json", deep)
    refused(library, path, 1, "JSON nested too deep to read", fmt="jsonl")

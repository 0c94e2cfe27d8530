"""`paperclub export --channel CHANNEL --format bibtex|jsonl`: what one channel read, with
its notes; the JSON Lines import back; the whole-library export is unchanged."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import bibtexparser
import pytest
import rispy

from tests.memory.scene import (
    MALLORY_TITLE,
    READING_NOTE,
    THEORY_NOTE,
    XSS_TITLE,
    build_scene,
    note_mallory,
)
from tests.processes import paperclub

NOW = datetime(2026, 10, 1, 9, tzinfo=timezone.utc)


@pytest.fixture
def url(db, database_url, tmp_path):
    scene = build_scene(database_url, tmp_path, NOW)
    scene.services.db.dispose()
    return database_url


def test_bibtex_holds_the_channels_papers_and_notes_only(url, tmp_path):
    done = paperclub("--database-url", url, "export", "--channel", "console:local:reading", "--format", "bibtex",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exported 2 papers read in console:local:reading (bibtex)" in done.stderr
    library = bibtexparser.parse_string(done.stdout)
    assert not library.failed_blocks
    titles = sorted(e.fields_dict["title"].value for e in library.entries)
    assert titles == sorted(["Zebrafish Retina Regeneration as Sparse Coding", XSS_TITLE])
    assert READING_NOTE in done.stdout and "Quokka" not in done.stdout and THEORY_NOTE not in done.stdout


def test_jsonl_is_what_paperclub_import_reads_with_the_channels_notes(url, tmp_path):
    out = tmp_path / "theory.jsonl"
    done = paperclub("--database-url", url, "export", "--channel", "console:local:theory", "-o", str(out),
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["title"] for r in records] == ["Quokka Gradient Descent Never Converges"]
    assert records[0]["channel"]["notes"][0]["text"] == THEORY_NOTE
    assert records[0]["channel"]["channel"] == "console:local:theory"
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    back = paperclub("--database-url", fresh, "import", str(out), cwd=tmp_path)
    assert back.returncode == 0 and "1 added" in back.stdout, back.stderr


def test_a_channel_paperclub_never_saw_or_a_malformed_name_is_a_clear_error(url, tmp_path):
    done = paperclub("--database-url", url, "export", "--channel", "slack:T0:C0", cwd=tmp_path)
    assert done.returncode == 1 and "no such channel" in done.stderr and "Traceback" not in done.stderr
    bad = paperclub("--database-url", url, "export", "--channel", "slack::C0", cwd=tmp_path)
    assert bad.returncode == 2 and "PLATFORM:WORKSPACE:CHANNEL" in bad.stderr
    both = paperclub("--database-url", url, "export", "--channel", "reading", "--collection", "memtest",
                     cwd=tmp_path)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_the_whole_library_export_is_unchanged(url, tmp_path):
    done = paperclub("--database-url", url, "export", cwd=tmp_path)
    assert done.returncode == 0 and "exported 5 papers (jsonl)" in done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 5 and all("channel" not in r for r in records)


def test_an_author_name_no_bibtex_parser_splits_exports_in_every_format(db, database_url, tmp_path):
    """Issue 45: `export --format csljson` of a channel that noted a paper by "Mallory }"
    exited 1 with a traceback, its JSON cut off partway."""
    scene = build_scene(database_url, tmp_path, NOW)
    note_mallory(scene)
    scene.services.db.dispose()
    written = {}
    for fmt in ("csljson", "bibtex", "ris"):
        done = paperclub("--database-url", database_url, "export", "--channel", "reading", "--format", fmt,
                         cwd=tmp_path)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert f"exported 3 papers read in console:local:reading ({fmt})" in done.stderr
        written[fmt] = done.stdout
    items = {i["title"]: i for i in json.loads(written["csljson"])}
    assert items[MALLORY_TITLE]["author"][0] == {"literal": "Mallory }"}
    library = bibtexparser.parse_string(written["bibtex"])
    assert not library.failed_blocks and MALLORY_TITLE in {e.fields_dict["title"].value for e in library.entries}
    assert MALLORY_TITLE in {r["title"] for r in rispy.loads(written["ris"])}

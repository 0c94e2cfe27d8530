"""`paperclub bench` on the realistic corpus: its options, the corpus as JSON Lines, and
the dictionary size each run reports."""

from __future__ import annotations

import json

from tests.processes import paperclub


def test_the_realistic_corpus_is_the_default_and_can_be_written_for_import(tmp_path):
    result = paperclub(
        "bench",
        "--sizes",
        "1k",
        "--engines",
        "paperclub",
        "--queries",
        "10",
        "--repeat-titles",
        "0.1",
        "--jsonl",
        str(tmp_path / "corpora"),
        "--out",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert data["corpus"]["kind"] == "realistic" and data["corpus"]["repeated_titles"] == 0.1
    assert data["results"][0]["terms"] > 10_000  # a growing vocabulary, not the seeds' 8,000
    lines = (tmp_path / "corpora" / "realistic-1k.jsonl").read_text().splitlines()
    assert len(lines) == 1_000 and json.loads(lines[0])["external_ids"] == {"bench": "p1"}
    assert "distinct terms" in result.stderr and "| terms" in result.stdout


def test_a_share_of_repeated_titles_outside_0_to_1_is_refused(tmp_path):
    result = paperclub(
        "bench", "--repeat-titles", "2", "--out", str(tmp_path / "out"), cwd=tmp_path
    )
    assert result.returncode == 2 and "--repeat-titles" in result.stderr
    assert not (tmp_path / "out").exists()

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


def test_bench_relevance_times_words_and_meaning_side_by_side(tmp_path):
    """`paperclub bench-relevance` at a tiny size: every figure it reports is there, and the
    second serving pass really ranked by meaning."""
    from tests.conftest import MINILM

    out = tmp_path / "relevance.json"
    result = paperclub("bench-relevance", "--size", "300", "--dense-sizes", "1k", "--queries", "3",
                       "--embed-sample", "16", "--work-dir", str(tmp_path), "--json", str(out), cwd=tmp_path,
                       env={"PAPERCLUB_MODEL_DIR": str(MINILM)})
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["dense"]["1k"]["p50_ms"] > 0 and figures["store"]["papers"] == 300
    assert figures["words"]["hybrid"] is False and figures["both"]["hybrid"] is True
    assert figures["both"]["search"]["p99_ms"] >= figures["both"]["search"]["p50_ms"] > 0
    assert figures["papers_per_s"] > 0 and "a day's 1,000 new papers" in result.stdout

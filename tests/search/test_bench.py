"""`paperclub bench` at a tiny size: the corpora, the measurements and the outputs."""

from __future__ import annotations

import json
from itertools import islice

import pytest

from adapters.bench.search import runner
from adapters.bench.search.runner import run_bench, table
from adapters.bench.search.synthetic import (
    SeedPools,
    bench_queries,
    parse_size,
    seed_records,
    size_label,
    synthetic_papers,
)
from tests.processes import paperclub


@pytest.fixture(scope="module")
def pools() -> SeedPools:
    return SeedPools.from_records(seed_records())


def test_synthetic_corpora_are_deterministic_and_nested(pools):
    small = list(synthetic_papers(50, pools))
    assert small == list(islice(synthetic_papers(2_000, pools), 50))
    assert small != list(synthetic_papers(50, pools, seed=1))
    paper = small[0]
    assert paper.text.startswith(paper.title + "\n") and paper.title in pools.titles
    assert 1 <= len(paper.authors) <= 6 and set(paper.authors) <= set(pools.authors)


def test_queries_are_titles_and_topic_phrases(pools):
    queries = bench_queries(pools, 300)
    assert len(queries) == 300 and queries == bench_queries(pools, 300)
    assert "continual learning" in pools.topics and any(
        q in {t.lower() for t in pools.topics} for q in queries
    )
    assert sum(len(q.split()) >= 4 for q in queries) >= 150  # most are titles


@pytest.mark.parametrize(
    "text,size",
    [("10k", 10_000), ("1M", 1_000_000), ("2.6M", 2_600_000), ("2500", 2_500), ("0.5k", 500)],
)
def test_sizes(text, size):
    assert parse_size(text) == size
    assert parse_size(size_label(size)) == size


def test_a_tiny_run_measures_each_engine_in_its_own_process(tmp_path):
    results = run_bench(
        [2_000],
        ["paperclub", "rank-bm25"],
        tmp_path,
        query_count=30,
        rank_bm25_max=1_000,
        log=lambda _: None,
    )
    ours, reference = results
    assert ours.engine == "paperclub" and ours.queries == 30
    assert ours.build_s > 0 and ours.load_s > 0 and 0 < ours.p50_ms <= ours.p99_ms
    assert ours.index_mb > 0 and ours.build_peak_mb > 20 and ours.serve_peak_mb > 20
    # A day of papers was added and a search found the last of them (or the step raises).
    assert ours.add_s is not None and ours.add_s > 0 and not ours.note
    assert reference.note == "skipped above 1k" and reference.p50_ms is None
    assert "paperclub" in table(results) and "skipped above 1k" in table(results)
    assert list(tmp_path.iterdir()) == []  # the indexes are removed after measuring


def test_the_command_writes_json_and_a_picture(tmp_path):
    result = paperclub(
        "bench",
        "--sizes",
        "1k",
        "--engines",
        "paperclub,rank-bm25",
        "--rank-bm25-max",
        "500",
        "--queries",
        "20",
        "--out",
        str(tmp_path / "out"),
        "--work-dir",
        str(tmp_path / "not" / "yet"),  # created on demand
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert data["machine"]["nproc"] >= 1 and data["queries"] == 20
    assert [(r["engine"], r["size"]) for r in data["results"]] == [
        ("paperclub", 1000),
        ("rank-bm25", 1000),
    ]
    assert data["results"][0]["p50_ms"] > 0 and data["results"][1]["note"] == "skipped above 500"
    assert (tmp_path / "out" / "bench.png").read_bytes().startswith(b"\x89PNG")
    assert "| engine" in result.stdout


def test_whole_times_paperclub_import_and_the_bots_search_command(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "COLD_RUNS", 1)  # each is a process of its own
    (ours,) = run_bench(
        [1_500], ["paperclub"], tmp_path, query_count=10, log=lambda _: None, whole=True
    )
    assert not ours.note, ours.note
    assert ours.import_s > 0 and ours.import_peak_mb > 20
    assert 0 < ours.command_p50_ms <= ours.command_p99_ms
    assert ours.command_peak_mb > 20  # the serving process's own peak
    # A new process for each: start-up counts, and the day's papers are found afterwards.
    assert ours.cold_search_s > 0.05 and ours.import_day_s > 0.05
    assert "command p50 ms" in table([ours]) and "import 1k s" in table([ours])
    assert size_label(2_600_000) == "2.6M"

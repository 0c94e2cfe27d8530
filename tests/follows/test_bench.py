"""`paperclub bench-ingest` at a small size: every paper of the day arrives once and is searchable."""

from __future__ import annotations

from adapters.bench.ingest import run_ingest_bench
from adapters.cli.main import main


def test_the_ingest_bench_brings_every_paper_and_makes_it_searchable(tmp_path):
    result = run_ingest_bench(f"sqlite:///{tmp_path / 'bench.db'}", papers=60, follows=6)
    assert result.arrived == 60 and result.searchable
    assert result.follows == 6 and result.requests == 6  # one page per follow
    assert "60 papers from 6 follows" in result.line()


def test_the_command_line_runs_it(capsys):
    assert main(["bench-ingest", "--papers", "30", "--follows", "3"]) == 0
    assert "30 papers from 3 follows" in capsys.readouterr().out

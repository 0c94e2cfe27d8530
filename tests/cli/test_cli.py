"""The `paperclub` command as a user runs it: import, search, batch, export, demo."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.conftest import SEED_COUNTS, SEED_FILES
from tests.processes import ours, paperclub


def test_import_prints_a_summary_per_file_and_is_idempotent(tmp_path):
    paths = [str(SEED_FILES["trending"]), str(SEED_FILES["topic-abstracts"])]
    first = paperclub("import", *paths, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "collection trending-papers: 58 added, 0 updated, 0 unchanged" in first.stdout
    assert "17 added, 0 updated, 0 unchanged" in first.stdout
    assert (tmp_path / "paperclub.db").exists()  # default database in the working directory
    again = paperclub("import", *paths, cwd=tmp_path)
    assert "0 added, 0 updated, 58 unchanged" in again.stdout


def test_malformed_file_exits_1_names_file_and_line_and_imports_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "fine", "abstract": "ok"}\n{"title": "broken", \n', encoding="utf-8")
    result = paperclub("import", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert f"{bad}:2:" in result.stderr
    exported = paperclub("export", cwd=tmp_path)
    assert exported.stdout == ""


def test_missing_file_is_a_clear_error(tmp_path):
    result = paperclub("import", "nope.md", cwd=tmp_path)
    assert result.returncode == 1 and "nope.md" in result.stderr


def test_search_batch_and_json(tmp_path):
    db = {"PAPERCLUB_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    assert paperclub("import", str(SEED_FILES["poster-session"]), cwd=tmp_path, env=db).returncode == 0
    single = paperclub("search", "graph", "biconnectivity", "--json", "-k", "3", cwd=tmp_path, env=db)
    hits = json.loads(single.stdout)["hits"]
    assert hits[0]["title"] == "Rethinking the Expressive Power of GNNs via Graph Biconnectivity"
    assert len(hits) == 3
    batch = paperclub("search", "--batch", "-", cwd=tmp_path, env=db, stdin="graph biconnectivity\n\ndiffusion\n")
    lines = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [line["query"] for line in lines] == ["graph biconnectivity", "diffusion"]
    assert set(lines[0]["hits"][0]) == {"id", "title", "score"}
    assert "search time" in batch.stderr


def test_search_sources_prints_where_each_hit_came_from_for_the_operator(tmp_path):
    db = {"PAPERCLUB_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    path = SEED_FILES["poster-session"]
    assert paperclub("import", str(path), "--collection", "posters", cwd=tmp_path, env=db).returncode == 0
    plain = paperclub("search", "graph", "biconnectivity", "-k", "1", cwd=tmp_path, env=db)
    assert plain.returncode == 0 and "source:" not in plain.stdout
    assert re.search(r"^    .*score \d+\.\d\d", plain.stdout, re.M)  # the operator's tool shows BM25's score
    shown = paperclub("search", "graph", "biconnectivity", "-k", "1", "--sources", cwd=tmp_path, env=db)
    assert re.search(rf"^    source: posters: {re.escape(path.name)}:\d+ \(poster-session\)$", shown.stdout, re.M)


def test_a_paper_a_later_file_of_the_same_import_changes_is_searched_as_changed(tmp_path):
    """The index takes the papers an import told it as told, except those a later file
    changed: `p.jsonl` imported again from another folder replaces its first version."""
    db = {"PAPERCLUB_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    first, second = tmp_path / "one" / "p.jsonl", tmp_path / "two" / "p.jsonl"

    def write(path, abstract):
        path.parent.mkdir()
        lines = [
            {"title": "Songbird models", "doi": "10.1/bird", "abstract": abstract},
            {"title": "Marsupials", "doi": "10.1/mars", "abstract": "The quokka smiles."},
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    write(first, "Recordings of the lyrebird.")
    write(second, "Recordings of the zebrafinch.")
    result = paperclub("import", "--collection", "c", str(first), str(second), cwd=tmp_path, env=db)
    assert result.returncode == 0, result.stderr
    assert "1 updated, 1 unchanged" in result.stdout

    def titles(query):
        found = paperclub("search", query, "--json", cwd=tmp_path, env=db)
        return [hit["title"] for hit in json.loads(found.stdout)["hits"]]

    assert titles("zebrafinch") == ["Songbird models"]
    assert titles("lyrebird") == [] and titles("quokka") == ["Marsupials"]


def test_demo_runs_on_a_fresh_directory(tmp_path):
    result = paperclub("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{SEED_COUNTS['openreview']} added" in result.stdout
    assert "/paper search" in result.stdout and "/paper similar" in result.stdout
    assert "matched:" in result.stdout
    assert "why: Matches this channel's topics: reinforcement, learning" in result.stdout  # a pick
    again = paperclub("demo", cwd=tmp_path)  # a second run changes nothing it imported
    assert again.returncode == 0 and f"0 added, 0 updated, {SEED_COUNTS['openreview']} unchanged" in again.stdout


@pytest.mark.parametrize("argv", [["search"], ["import"], ["frobnicate"]])
def test_bad_command_lines_print_usage(tmp_path, argv):
    result = paperclub(*argv, cwd=tmp_path)
    assert result.returncode == 2 and "usage" in result.stderr.lower()


def test_serve_checks_its_platforms(tmp_path):
    result = paperclub("serve", "bogus", cwd=tmp_path)
    assert result.returncode == 2 and "'bogus' is not a platform" in result.stderr


def _own_settings_removed() -> dict:
    return {k: "" for k in os.environ if ours(k)}


def test_config_check_names_each_bad_value_and_never_prints_a_secret(tmp_path):
    env = {**_own_settings_removed(),
           "PAPERCLUB_DATABASE_URL": "mysql://bot:hunter2-password@db/paperclub",
           "SLACK_SIGNING_SECRET": "signing-secret-value-1234",
           "PAPERCLUB_TICK_SECONDS": "0"}
    result = paperclub("config", "check", cwd=tmp_path, env=env)
    assert result.returncode == 1
    problems = result.stdout.split("Problems (3):")[1]
    assert "PAPERCLUB_DATABASE_URL: 'mysql://bot:***@db/paperclub' is not a SQLite or PostgreSQL URL" in problems
    assert "set SLACK_BOT_TOKEN" in problems and "PAPERCLUB_TICK_SECONDS" in problems
    assert "hunter2" not in result.stdout and "signing-secret-value" not in result.stdout
    assert "SLACK_SIGNING_SECRET          set (25 chars)" in result.stdout


def test_config_check_passes_with_nothing_set(tmp_path):
    result = paperclub("config", "check", cwd=tmp_path, env=_own_settings_removed())
    assert result.returncode == 0 and result.stdout.rstrip().endswith("No problems found.")
    assert "sqlite:///paperclub.db (the default)" in result.stdout
    assert "paperclub.db does not exist yet" in result.stdout and not (tmp_path / "paperclub.db").exists()


def test_serve_refuses_a_bad_setting_before_starting_anything(tmp_path):
    env = {**_own_settings_removed(), "PAPERCLUB_DATABASE_URL": "mysql://bot:hunter2-password@db/paperclub"}
    result = paperclub("serve", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: PAPERCLUB_DATABASE_URL: 'mysql://bot:***@db/paperclub' is not a SQLite or PostgreSQL URL "
        "(postgresql://USER:PASSWORD@HOST:5432/NAME or sqlite:///paperclub.db)")


def test_an_adding_setting_that_is_not_a_number_stops_serve(tmp_path):
    """Finding 8: PAPERCLUB_ADD_PER_HOUR=abc used to become 20 without a word."""
    env = {**_own_settings_removed(), "PAPERCLUB_ADD_PER_HOUR": "abc", "PAPERCLUB_ADD_TIMEOUT": "soon"}
    said = ("error: PAPERCLUB_ADD_PER_HOUR: 'abc' is not a whole number of papers\n"
            "error: PAPERCLUB_ADD_TIMEOUT: 'soon' is not a number of seconds")
    served = paperclub("serve", cwd=tmp_path, env=env)
    assert (served.returncode, served.stderr.strip()) == (1, said)
    assert not (tmp_path / "paperclub.db").exists()  # refused before opening anything
    # config check names them too: tests/ops/test_settings_listed.py


def test_serve_with_nothing_to_run_says_so(tmp_path):
    result = paperclub("serve", "--no-scheduler", cwd=tmp_path, env=_own_settings_removed())
    assert result.returncode == 1
    assert "error: nothing to run: no chat app is configured" in result.stderr


def test_version_is_the_package_version(tmp_path):
    from importlib.metadata import version

    result = paperclub("--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == f"paperclub {version('paperclub')}"


def test_import_of_a_listing_cut_inside_its_last_abstract_warns_on_stderr(tmp_path):
    listing = tmp_path / "cut.md"
    listing.write_text(
        "## [First Paper](#)\n- A. Author, B. Author\n"
        "- abstract@[open-review\\(Poster\\)](#): We study things. It works.\n\n"
        "## [Second Paper](#)\n- C. Author\n"
        "- abstract@[open-review\\(Oral\\)](#): We propose a method that improves the\n",
        encoding="utf-8",
    )
    result = paperclub("import", str(listing), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "2 added" in result.stdout
    assert f"{listing}:5: warning: the abstract of 'Second Paper' stops mid-sentence" in result.stderr

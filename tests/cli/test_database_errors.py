"""Every `paperclub` command against a database it cannot use: one line on stderr naming
where the URL came from (the variable or --database-url), the password hidden, exit 1.

The subcommands are read from the argparse parser, so a new one is covered without
being listed here: it gets placeholder arguments and must fail on the broken database
in one line, unless it is listed below as never opening the database.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adapters.cli.main import build_parser
from tests.conftest import SEED_FILES
from tests.processes import paperclub

PASSWORD = "pw-never-shown-42"
# A closed port on this machine: refused at once.
UNREACHABLE = f"postgresql+psycopg://paperclub:{PASSWORD}@127.0.0.1:1/papers"
UNREACHABLE_SHOWN = "postgresql+psycopg://paperclub:***@127.0.0.1:1/papers"
BAD_URL = f"nosuchdb://paperclub:{PASSWORD}@db.example.org/papers"
BAD_URL_SHOWN = "'nosuchdb://paperclub:***@db.example.org/papers' is not a SQLite or PostgreSQL URL"

# Placeholders for required arguments, by argparse `dest`; anything else gets "x".
VALUES = {"url": "https://paperclub.example.org", "cron": "0 6 * * *", "paths": str(SEED_FILES["trending"])}
# `config check` opens the database but reports on stdout, with every other setting.
REPORTS = {("config", "check")}


def no_database_commands(tmp: Path) -> dict[tuple[str, ...], tuple[list[str], int]]:
    """The commands that never open the configured database: their arguments (small
    enough to run in seconds) and the exit code that says they did their work."""
    return {
        ("slack", "manifest"): (["--url", VALUES["url"]], 0),
        ("slack", "bench"): (["--requests", "1", "--concurrency", "1"], 0),  # a scratch database
        ("discord", "sync"): ([], 2),  # its own refusal: DISCORD_TOKEN is not set
        ("bench",): (["--sizes", "200", "--engines", "paperclub", "--queries", "5",
                      "--out", str(tmp / "bench"), "--work-dir", str(tmp / "work")], 0),
        ("eval",): ([str(_beir_folder(tmp))], 0),
        # A temporary SQLite file unless `--database-url` names a scratch database.
        ("bench-ingest",): (["--papers", "20", "--follows", "2"], 0),
        ("bench-relevance",): (["--size", "200"], 1),  # its own refusal: no model (PAPERCLUB_MODEL_DIR)
        # Its own database (./paperclub-sandbox/ unless --database-url), never the configured one.
        ("sandbox",): (["--dir", str(tmp / "sandbox")], 0),
    }


def _beir_folder(tmp: Path) -> Path:
    folder = tmp / "beir"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    docs = [{"_id": "d1", "title": "graph networks", "text": "graph neural networks"},
            {"_id": "d2", "title": "diffusion", "text": "diffusion models for images"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "graph networks"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


# --- the commands, from the parser ---------------------------------------------------------------


def leaf_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, its parser) for every runnable subcommand, nested ones included."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield path, parser
        return
    for name, sub in subparsers[0].choices.items():
        yield from leaf_commands(sub, (*path, name))


def minimal_argvs(path: tuple[str, ...], parser: argparse.ArgumentParser) -> list[list[str]]:
    """The shortest valid command lines: required arguments filled in, one line per
    choice of a positional with choices (`db upgrade`, `db current`)."""
    argvs = [list(path)]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.nargs in ("?", "*"):
            continue
        if action.option_strings and not action.required:
            continue
        if action.choices and not action.option_strings:
            argvs = [argv + [choice] for argv in argvs for choice in action.choices]
            continue
        value = VALUES.get(action.dest, "x")
        argvs = [argv + [*action.option_strings[:1], value] for argv in argvs]
    return argvs


def database_argvs(tmp: Path) -> list[list[str]]:
    skip = set(no_database_commands(tmp)) | REPORTS
    return [argv for path, sub in leaf_commands(build_parser()) if path not in skip
            for argv in minimal_argvs(path, sub)]


def run_all(argvs: list[list[str]], cwd: Path, env: dict) -> list[tuple[list[str], object]]:
    """Each command line as its own process, a few at a time (each mostly waits on imports)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(lambda argv: paperclub(*argv, cwd=cwd, env=env, timeout=120), argvs)
        return list(zip(argvs, results, strict=True))


def one_line_problems(results, line_start: str, shown: str) -> list[str]:
    """What is wrong with each result that is not exactly one error line and exit 1."""
    problems = []
    for argv, result in results:
        lines = result.stderr.strip().splitlines()
        output = result.stdout + result.stderr
        if result.returncode != 1 or len(lines) != 1 or result.stdout.strip():
            problems.append(f"{argv}: exit {result.returncode}, stderr:\n{result.stderr}stdout:\n{result.stdout}")
        elif not (lines[0].startswith(line_start) and shown in lines[0]):
            problems.append(f"{argv}: {lines[0]!r} does not start with {line_start!r} or show {shown!r}")
        if PASSWORD in output or "Traceback" in output:
            problems.append(f"{argv}: password or traceback in the output:\n{output}")
    return problems


# --- the tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variable, url, line_start, shown",
    [
        ("PAPERCLUB_DATABASE_URL", UNREACHABLE, "error: PAPERCLUB_DATABASE_URL: cannot connect to ",
         UNREACHABLE_SHOWN),
        ("DATABASE_URL", BAD_URL, "error: DATABASE_URL: ", BAD_URL_SHOWN),
    ],
    ids=["unreachable", "bad-url"],
)
def test_every_command_on_a_broken_database_prints_one_line_naming_the_variable(
    tmp_path, variable, url, line_start, shown
):
    argvs = database_argvs(tmp_path)
    assert ["db", "upgrade"] in argvs and ["feed", "add", "x", VALUES["url"], "--cron", VALUES["cron"]] in argvs
    assert set(no_database_commands(tmp_path)) <= {path for path, _ in leaf_commands(build_parser())}
    results = run_all(argvs, tmp_path, {variable: url})
    problems = one_line_problems(results, line_start, shown)
    assert not problems, "\n\n".join(problems)
    assert not (tmp_path / "paperclub.db").exists()  # the default database was not used instead


def test_config_check_lists_a_bad_database_url_with_the_other_problems(tmp_path):
    env = {"PAPERCLUB_DATABASE_URL": BAD_URL, "PAPERCLUB_TICK_SECONDS": "0"}
    result = paperclub("config", "check", cwd=tmp_path, env=env)
    assert result.returncode == 1 and result.stderr == ""
    problems = result.stdout.split("Problems (2):")[1].splitlines()
    assert f"  PAPERCLUB_DATABASE_URL: {BAD_URL_SHOWN} (" in "\n".join(problems)
    assert any(line.startswith("  PAPERCLUB_TICK_SECONDS") for line in problems)
    assert PASSWORD not in result.stdout


def test_commands_that_never_open_the_database_still_work_with_a_broken_one(tmp_path):
    commands = no_database_commands(tmp_path)
    argvs = [[*path, *args] for path, (args, _) in commands.items()]
    argvs += [["--version"], ["config", "check", "--offline"]]
    expected = [code for _, code in commands.values()] + [0, 0]
    results = run_all(argvs, tmp_path, {"PAPERCLUB_DATABASE_URL": UNREACHABLE})
    wrong = [f"{argv}: exit {result.returncode} (expected {code}):\n{result.stderr}"
             for (argv, result), code in zip(results, expected, strict=True)
             if result.returncode != code or "Traceback" in result.stderr or "cannot connect" in result.stderr]
    assert not wrong, "\n\n".join(wrong)


@pytest.mark.parametrize(
    "argv, env, says",
    [
        (["--database-url", UNREACHABLE, "db", "current"], {"DATABASE_URL": "sqlite:///elsewhere.db"},
         f"error: --database-url: cannot connect to {UNREACHABLE_SHOWN}: "),
        (["export"], {"PAPERCLUB_DATABASE_URL": UNREACHABLE, "DATABASE_URL": "sqlite:///elsewhere.db"},
         "error: PAPERCLUB_DATABASE_URL: cannot connect to "),  # the variable that wins is named
        (["export"], {"DATABASE_URL": f"postgres://paperclub@127.0.0.1:1/papers?password={PASSWORD}"},
         "error: DATABASE_URL: cannot connect to postgres://paperclub@127.0.0.1:1/papers?password=***: "),
        (["export"], {"DATABASE_URL": f"postgres://paperclub:{PASSWORD}@db:port/papers"},
         "error: DATABASE_URL: 'postgres://paperclub:***@db:port/papers' is not a database URL"),
        (["export"], {"PAPERCLUB_DATABASE_URL": "::::"}, "error: PAPERCLUB_DATABASE_URL: '::::' is not a database URL"),
        (["export"], {"PAPERCLUB_DATABASE_URL": "sqlite:///no/such/dir/papers.db"},
         ("error: PAPERCLUB_DATABASE_URL: cannot connect to sqlite:///no/such/dir/papers.db: unable to open "
          "database file (the directory {tmp}/no/such/dir does not exist)")),
    ],
    ids=["flag", "both-variables", "query-password", "bad-port", "garbage", "sqlite-missing-directory"],
)
def test_the_line_names_where_the_url_came_from_and_why(tmp_path, argv, env, says):
    result = paperclub(*argv, cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(says.format(tmp=tmp_path.resolve())), line
    assert PASSWORD not in line

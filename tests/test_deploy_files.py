"""The Procfile and the Dockerfile name commands that exist, and split the work right:
Slack's web processes scale out without a scheduler, exactly one process schedules."""

from __future__ import annotations

import json
import re
import shlex
import tomllib

import pytest

from adapters.cli.main import build_parser
from adapters.wsgi import HEALTH_PATH
from tests.conftest import REPO

ROOT = REPO


def _procfile() -> dict[str, list[str]]:
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    return {name: shlex.split(command) for name, _, command in (line.partition(":") for line in lines if line.strip())}


def _runs_scheduler(argv: list[str]) -> bool:
    args = build_parser().parse_args(argv[1:])
    return args.func.__name__ == "cmd_serve" and not args.no_scheduler


def test_procfile_release_upgrades_web_serves_slack_worker_schedules():
    processes = _procfile()
    assert set(processes) == {"release", "web", "worker"}
    for argv in processes.values():
        assert argv[0] == "paperclub"
        build_parser().parse_args(argv[1:])  # exits 2 on a command that does not exist
    assert processes["release"] == ["paperclub", "db", "upgrade"]
    web = build_parser().parse_args(processes["web"][1:])
    assert web.platforms == ["slack"] and web.no_scheduler
    assert [name for name, argv in processes.items() if _runs_scheduler(argv)] == ["worker"]


def _dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_the_image_serves_with_a_healthcheck_on_healthz():
    text = _dockerfile()
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))
    assert cmd == ["paperclub", "serve"] and _runs_scheduler(cmd)
    health = text[text.index("HEALTHCHECK"):]
    assert "/healthz'" in health and HEALTH_PATH == "/healthz"
    assert re.search(r"^USER paperclub$", text, re.M)  # never root


@pytest.mark.parametrize(
    "line", [x for x in _dockerfile().splitlines() if "docker run" in x and "paperclub paperclub" in x]
)
def test_the_dockerfile_examples_are_real_commands(line):
    argv = shlex.split(line.split("paperclub paperclub", 1)[1])
    build_parser().parse_args(argv)


def test_the_image_copies_every_package_the_project_ships():
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    copied = set(re.findall(r"^COPY (\w+) \1$", _dockerfile(), re.M))
    assert copied == {p.rstrip("*") for p in packages}
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert not copied & set(ignored) and "README.md" not in ignored  # pyproject's readme

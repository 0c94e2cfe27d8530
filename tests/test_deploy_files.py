"""The Procfile and the Dockerfile name commands that exist, and split the work right:
Slack's web processes scale out without a scheduler, exactly one process schedules."""

from __future__ import annotations

import configparser
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


# --- compose.yaml, the Caddyfile, the systemd unit (docs/deploying.md) ------------------------------
# No `docker compose` or Caddy on the test machine: each file is read as its program reads it and
# held to what paperclub needs (commands that exist, variables it reads, the port it serves, the
# time it takes to stop).


def _known_variables() -> set[str]:
    from adapters import platforms
    from bot.app import settings_models
    from bot.ops.defaults import DATABASE_VARIABLES

    return {v for model in settings_models() for v in model.variables()} | set(platforms.variables()) | set(
        DATABASE_VARIABLES)


def _stop_budget() -> float:
    from adapters.runtime import ANSWERS_STOP_SECONDS, SCHEDULER_STOP_SECONDS

    return SCHEDULER_STOP_SECONDS + ANSWERS_STOP_SECONDS


def _compose() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))


def _seconds(text: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(s|m)?", str(text)).groups()
    return int(number) * (60 if unit == "m" else 1)


def test_compose_runs_serve_after_the_migration_on_its_postgresql():
    services = _compose()["services"]
    assert set(services) == {"db", "migrate", "paperclub", "caddy"}
    paperclub, migrate = services["paperclub"], services["migrate"]
    assert _runs_scheduler(paperclub["command"])  # one process: the apps and the scheduler
    assert migrate["command"] == ["paperclub", "db", "upgrade"]
    assert paperclub["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert migrate["depends_on"]["db"] == {"condition": "service_healthy"}
    for service in (paperclub, migrate):
        assert set(service["environment"]) <= _known_variables(), service["environment"]
        url = service["environment"]["PAPERCLUB_DATABASE_URL"]  # wins over the image's SQLite default
        assert url.startswith("postgresql://paperclub:") and url.endswith("@db:5432/paperclub")
    assert _seconds(paperclub["stop_grace_period"]) > _stop_budget()
    assert "ports" not in paperclub  # reached through Caddy only


def test_caddy_proxies_to_the_port_serve_listens_on():
    from adapters.slack.config import DEFAULT_PORT

    caddy = _compose()["services"]["caddy"]
    port = int(_compose()["services"]["paperclub"]["environment"]["PORT"])
    assert port == DEFAULT_PORT and re.search(rf"^\s+PORT={port} ", _dockerfile(), re.M)  # the image's
    caddyfile_mount = next(v for v in caddy["volumes"] if v.endswith(":/etc/caddy/Caddyfile:ro"))
    caddyfile = (ROOT / caddyfile_mount.split(":")[0]).read_text(encoding="utf-8")
    sites = [line for line in caddyfile.splitlines() if line and not line.startswith("#")]
    assert sites == ["{$PAPERCLUB_DOMAIN} {", f"\treverse_proxy paperclub:{port}", "}"]
    assert set(caddy["environment"]) == {"PAPERCLUB_DOMAIN"} and {"80:80", "443:443"} <= set(caddy["ports"])


def test_the_example_environment_names_only_variables_paperclub_reads():
    lines = (ROOT / "deploy" / "paperclub.env.example").read_text(encoding="utf-8").splitlines()
    names = {line.lstrip("# ").split("=", 1)[0] for line in lines if re.match(r"#? ?[A-Z_]+=", line)}
    assert names and names <= _known_variables(), names - _known_variables()
    assert {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DISCORD_TOKEN"} <= names


def _unit() -> configparser.ConfigParser:
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str  # systemd's keys are case-sensitive
    unit.read_string((ROOT / "deploy" / "paperclub.service").read_text(encoding="utf-8"))
    return unit


def test_the_systemd_unit_serves_as_a_user_and_stops_in_time():
    service = _unit()["Service"]
    start, before = shlex.split(service["ExecStart"]), shlex.split(service["ExecStartPre"])
    assert start[0] == before[0] and start[0].endswith("/bin/paperclub")
    assert _runs_scheduler(start) and before[1:] == ["db", "upgrade"]
    assert service["User"] not in ("", "root") and service["EnvironmentFile"].startswith("/etc/")
    assert service["Restart"] == "on-failure" and service["KillSignal"] == "SIGTERM"
    assert _seconds(service["TimeoutStopSec"]) > _stop_budget()
    # A refused token exits 1 at once: bounded restarts, never a loop (Discord resets such a token).
    assert int(_unit()["Unit"]["StartLimitBurst"]) <= 5 and service["RestartPreventExitStatus"] == "2"
    assert _unit()["Install"]["WantedBy"] == "multi-user.target"


# --- compose.yaml against the Compose Specification (what `docker compose config` checks) --------
# The official JSON schema is vendored in tests/data/compose-spec (README.md there says from where),
# and the file is interpolated first as compose does, with the variables of the documented .env.

COMPOSE_ENV_EXAMPLE = ROOT / "deploy" / "compose.env.example"
FILLED = {"POSTGRES_PASSWORD": "a-long-random-password"}  # what a user writes in the blank
_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
_BRACED = re.compile(r"([_A-Za-z][_A-Za-z0-9]*)(?:(:?[-?+])(.*))?", re.S)


class InterpolationError(ValueError):
    """compose refuses the file: a required variable is unset or empty, or a ${...} is malformed."""


def interpolate(text: str, env: dict[str, str]) -> str:
    """`text` as compose interpolates a value (the Compose Specification's "Interpolation"):
    `$$` is a `$`; `$VAR` and `${VAR}` the variable or ""; `${VAR:-default}` / `${VAR-default}`
    the default when unset or empty / unset; `${VAR:?err}` / `${VAR?err}` an error naming `err`;
    `${VAR:+other}` / `${VAR+other}` `other` when set; defaults and errors interpolated in turn."""
    out, at = [], 0
    while at < len(text):
        if text[at] != "$":
            out.append(text[at])
            at += 1
        elif text.startswith("$$", at):
            out.append("$")
            at += 2
        elif text.startswith("${", at):
            depth, end = 0, at + 1
            for end in range(at + 1, len(text)):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                if depth == 0:
                    break
            if depth:
                raise InterpolationError(f"invalid interpolation format: {text[at:]!r} has no closing brace")
            out.append(_braced(text[at + 2:end], env))
            at = end + 1
        elif name := _NAME.match(text, at + 1):
            out.append(env.get(name.group(), ""))
            at = name.end()
        else:
            out.append("$")
            at += 1
    return "".join(out)


def _braced(inner: str, env: dict[str, str]) -> str:
    found = _BRACED.fullmatch(inner)
    if found is None:
        raise InterpolationError(f"invalid interpolation format: ${{{inner}}}")
    name, operator, rest = found.groups()
    value = env.get(name)
    missing = (value is None or value == "") if operator and operator.startswith(":") else value is None
    if operator in (":-", "-"):
        return interpolate(rest, env) if missing else value
    if operator in (":?", "?"):
        if missing:
            raise InterpolationError(f"required variable {name} is missing a value: {interpolate(rest, env)}")
        return value
    if operator in (":+", "+"):
        return "" if missing else interpolate(rest, env)
    return value or ""


def interpolated(value, env: dict[str, str]):
    """Every string value of a parsed compose file interpolated; keys are left as they are."""
    if isinstance(value, dict):
        return {key: interpolated(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolated(item, env) for item in value]
    return interpolate(value, env) if isinstance(value, str) else value


def dotenv(path) -> dict[str, str]:
    """A .env as compose reads it: NAME=VALUE lines; blank lines and # comments skipped."""
    pairs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value.strip().strip("'\"")
    return pairs


def schema_problems(document: dict) -> list[str]:
    import jsonschema

    schema = json.loads((ROOT / "tests" / "data" / "compose-spec" / "compose-spec.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(document)]


def test_interpolation_follows_the_compose_specification():
    env = {"SET": "v", "EMPTY": ""}
    cases = {"$SET ${SET} $$SET $ 5$": "v v $SET $ 5$", "${UNSET}|$UNSET": "|", "${EMPTY:-d}|${EMPTY-d}": "d|",
             "${UNSET:-${SET}}": "v", "${UNSET:-${UNSET2:-deep}}": "deep", "${SET:+alt}|${EMPTY+alt}": "alt|alt",
             "${EMPTY?fine}": ""}
    for text, expected in cases.items():
        assert interpolate(text, env) == expected, text
    for text in ("${EMPTY:?say $SET}", "${UNSET?needed}"):
        with pytest.raises(InterpolationError, match="missing a value"):
            interpolate(text, env)
    assert str(_raised("${EMPTY:?say $SET}", env)) == "required variable EMPTY is missing a value: say v"
    with pytest.raises(InterpolationError, match="invalid"):
        interpolate("${SET", env)


def _raised(text: str, env: dict[str, str]) -> InterpolationError:
    with pytest.raises(InterpolationError) as raised:
        interpolate(text, env)
    return raised.value


def test_compose_with_the_documented_env_is_a_valid_compose_file():
    env = {**dotenv(COMPOSE_ENV_EXAMPLE), **FILLED}
    document = interpolated(_compose(), env)
    assert schema_problems(document) == []
    services = document["services"]
    url = services["paperclub"]["environment"]["PAPERCLUB_DATABASE_URL"]
    assert url == f"postgresql://paperclub:{FILLED['POSTGRES_PASSWORD']}@db:5432/paperclub"
    assert services["migrate"]["environment"]["PAPERCLUB_DATABASE_URL"] == url
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == FILLED["POSTGRES_PASSWORD"]
    assert services["caddy"]["environment"]["PAPERCLUB_DOMAIN"] == "paperclub.example.org"
    # Without a domain: localhost, as compose.yaml's comment says.
    unset = interpolated(_compose(), FILLED)
    assert unset["services"]["caddy"]["environment"]["PAPERCLUB_DOMAIN"] == "localhost"


def test_compose_refuses_to_start_without_the_database_password():
    """The example as shipped leaves the password blank: compose stops and says what to set."""
    assert dotenv(COMPOSE_ENV_EXAMPLE)["POSTGRES_PASSWORD"] == ""
    refusal = r"POSTGRES_PASSWORD is missing a value: set POSTGRES_PASSWORD in \.env"
    with pytest.raises(InterpolationError, match=refusal):
        interpolated(_compose(), dotenv(COMPOSE_ENV_EXAMPLE))


def test_the_documented_env_names_exactly_the_variables_compose_yaml_uses():
    text = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    used = set(re.findall(r"\$\{([_A-Za-z][_A-Za-z0-9]*)", text))
    assert used and used == set(dotenv(COMPOSE_ENV_EXAMPLE))
    # Every env_file has its example beside the other deploy files, to copy.
    env_files = {service["env_file"] for service in _compose()["services"].values() if "env_file" in service}
    assert env_files == {"paperclub.env"} and (ROOT / "deploy" / "paperclub.env.example").is_file()
    deploying = (ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    assert "deploy/compose.env.example" in deploying and "deploy/paperclub.env.example" in deploying


def test_the_schema_check_catches_what_compose_would_refuse():
    document = interpolated(_compose(), {**dotenv(COMPOSE_ENV_EXAMPLE), **FILLED})
    document["services"]["paperclub"]["depends_on"]["db"]["condition"] = "service_up"
    document["services"]["caddy"]["ports"] = "80:80"
    document["services"]["paperclub"]["stop_grace"] = "35s"
    problems = schema_problems(document)
    assert len(problems) == 3, problems
    assert any(p.startswith("services/paperclub/depends_on: ") for p in problems)
    assert "services/caddy/ports: '80:80' is not of type 'array'" in problems
    assert any(p.startswith("services/paperclub: 'stop_grace' does not match") for p in problems)

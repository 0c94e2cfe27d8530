"""Every `paperclub` subcommand and argument says what it is for in --help (finding 13)."""

from __future__ import annotations

import argparse

import pytest

from adapters.cli.main import build_parser


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser, help in the parent's listing) for the command line and every subcommand under it."""
    yield path, parser, "the command line"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                for found in commands(sub, (*path, name)):
                    yield found if found[0] != (*path, name) else (found[0], found[1], listed.get(name))


def undocumented(parser: argparse.ArgumentParser) -> list[str]:
    missing = []
    for path, sub, listed in commands(parser):
        name = " ".join(("paperclub", *path))
        if not listed:
            missing.append(f"{name}: no help in its parent's list of commands")
        if not sub.description:
            missing.append(f"{name}: no description in its own --help")
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                argument = "/".join(action.option_strings) or action.metavar or action.dest
                missing.append(f"{name}: {argument} has no help")
    return missing


def test_every_subcommand_and_argument_has_help():
    assert undocumented(build_parser()) == []


def test_a_subcommand_or_argument_without_help_is_caught():
    parser = argparse.ArgumentParser(prog="paperclub", description="d")
    sub = parser.add_subparsers(dest="command")
    quiet = sub.add_parser("quiet")
    quiet.add_argument("thing")
    assert undocumented(parser) == ["paperclub quiet: no help in its parent's list of commands",
                                    "paperclub quiet: no description in its own --help",
                                    "paperclub quiet: thing has no help"]


def _help_of(*argv: str, capsys) -> str:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return capsys.readouterr().out


def test_serve_help_names_the_port_the_host_and_the_routes(capsys):
    text = _help_of("serve", capsys=capsys)
    for needed in ("$PORT", "--host", "PAPERCLUB_HOST", "0.0.0.0", "/healthz", "/archive/", "/calendar/"):
        assert needed in text, needed


@pytest.mark.parametrize("argv, says", [
    (["db"], "upgrade"),
    (["demo"], "bundled corpus"),
    (["import"], "PATH|LINK|ID"),
])
def test_the_commands_found_bare_now_say_what_they_do(capsys, argv, says):
    text = _help_of(*argv, capsys=capsys)
    description = text.split("\n\n")[1]  # after the usage, before the arguments
    assert says in description or says in text.split("positional arguments:")[-1]


def _sections(text: str) -> dict[str, list[str]]:
    """A --help's sections: title -> the names its lines start with."""
    found: dict[str, list[str]] = {}
    for block in text.split("\n\n")[2:]:
        title, *lines = block.splitlines()
        found[title.rstrip(":")] = [line.split()[0] for line in lines if line.startswith("  ") and line[2] != " "]
    return found


def test_the_top_level_help_groups_the_operators_commands_apart_from_the_benchmarks(capsys):
    """Issue 46: `paperclub --help` no longer mixes the benchmarks into the operator's commands."""
    from adapters.cli.main import COMMAND_GROUPS, OTHERS

    sections = _sections(_help_of(capsys=capsys))
    assert list(sections) == [title for title, _names in COMMAND_GROUPS] + ["options"]
    assert OTHERS not in sections  # every subcommand is placed in a group
    listed = [name for title, names in sections.items() if title != "options" for name in names]
    subcommands = [name for path, _parser, _help in commands(build_parser()) if len(path) == 1
                   for name in path]
    assert sorted(listed) == sorted(subcommands)  # each once
    assert sections["run the bot"][:2] == ["serve", "tick"] and "config" in sections["run the bot"]
    assert {"backup", "restore", "db"} == set(sections["the database"])
    assert set(sections["benchmarks and developer tools"]) == {n for n in subcommands if "bench" in n or n == "eval"}


def test_a_subcommand_in_no_group_is_listed_under_other_commands():
    from adapters.cli.main import OTHERS, GroupedHelp

    parser = GroupedHelp(prog="paperclub", description="d")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("serve", help="serve it")
    sub.add_parser("newcomer", help="not placed yet")
    sections = _sections(parser.format_help())
    assert sections == {"run the bot": ["serve"], OTHERS: ["newcomer"], "options": ["-h,"]}

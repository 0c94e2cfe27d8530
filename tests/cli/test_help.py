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

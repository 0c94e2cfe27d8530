"""Records tests/data/discord_tree.json, the /paper command tree as Discord receives it and
the line each subcommand writes for sample option values (tests/discord/test_discord_tree.py
holds the tree to it).

    python -m tests.discord.record_tree

Run it only when a command is meant to change on Discord (a feature added, a param
changed), and read the fixture's diff before committing it.

The samples derive from the grammar (`samples`): for every command, its required options
alone, each optional one added alone (each choice of a choice), every option at once, and
a double quote inside each text option. The cases already in the fixture are kept (the
hand-picked ones of the first recording among them: empty values, flags unset, quotes
inside filter values), minus any naming a command or option that no longer exists.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import discord
from discord import app_commands

from adapters.discord.commands import paper_commands
from bot.app import command_grammar
from bot.grammar import Command, Param
from tests.conftest import DATA
from tests.fake_discord import FakeMember

FIXTURE = DATA / "discord_tree.json"
MEMBER = "@member"  # in a sample, {"@member": ID}: a discord.Member option
SOME_MEMBER = 123456789012345678
QUOTED = 'say "hi" there'  # the grammar cannot escape a quote: a quoted template drops it


def paper_tree() -> tuple[app_commands.CommandTree, app_commands.Group]:
    tree = app_commands.CommandTree(discord.Client(intents=discord.Intents.default()))
    tree.add_command(paper_commands(command_grammar()))
    return tree, tree.get_command("paper")


def leaves(group: app_commands.Group) -> dict[str, app_commands.Command]:
    found: dict[str, app_commands.Command] = {}
    for command in group.commands:
        found.update(leaves(command) if isinstance(command, app_commands.Group) else {command.name: command})
    return found


# --- samples from the grammar ----------------------------------------------------------------------


def sample_value(param: Param) -> Any:
    """A value a member could give for `param` in Discord's form."""
    if param.choices:
        return param.choices[0]
    if param.kind == "flag":
        return True
    if param.kind == "member":
        return {MEMBER: SOME_MEMBER}
    if param.kind == "number":
        return param.low if param.low is not None else 1
    return param.suggest[0] if param.suggest else "two words"


def command_samples(command: Command) -> list[dict[str, Any]]:
    """Option values for one command: see the module's docstring."""
    required = {p.name: sample_value(p) for p in command.params if p.required}
    optional = [p for p in command.params if not p.required]
    cases = [required]
    for param in optional:
        values = param.choices or [sample_value(param)]
        if param.kind == "number" and param.high is not None:
            values = [*values, param.high]
        cases += [{**required, param.name: value} for value in values]
    if len(optional) > 1:
        cases.append({**required, **{p.name: sample_value(p) for p in optional}})
    for param in command.params:
        if param.kind == "text" and not param.choices:
            cases.append({**required, param.name: QUOTED})
    return cases


def key(command: str, options: dict[str, Any]) -> str:
    return json.dumps([command, options], sort_keys=True, ensure_ascii=False)


def samples(commands: Iterable[Command], recorded: Iterable[dict[str, Any]] = ()) -> list[tuple[str, dict]]:
    """The recorded cases that still fit the grammar, then the grammar's own not among them."""
    params = {c.name: {p.name for p in c.params} for c in commands}
    kept = [(case["command"], case["options"]) for case in recorded
            if case["command"] in params and set(case["options"]) <= params[case["command"]]]
    cases = {key(name, options): (name, options) for name, options in kept}
    for command in commands:
        for options in command_samples(command):
            cases.setdefault(key(command.name, options), (command.name, options))
    return list(cases.values())


# --- recording -----------------------------------------------------------------------------------------


class Recorder:
    """The client's `answers`: keeps the line a callback hands over."""

    def __init__(self):
        self.lines: list[str] = []

    async def command(self, _interaction, text: str) -> None:
        self.lines.append(text)


def option_values(options: dict[str, Any]) -> dict[str, Any]:
    return {name: FakeMember(value[MEMBER], "member") if isinstance(value, dict) else value
            for name, value in options.items()}


async def written_line(command: app_commands.Command, options: dict[str, Any]) -> str:
    """The line the subcommand writes for these options, called as discord.py's
    Command._do_call calls it: with the binding first when there is one."""
    recorder = Recorder()
    interaction = SimpleNamespace(client=SimpleNamespace(answers=recorder))
    bound = (command.binding,) if command.binding is not None else ()
    await command.callback(*bound, interaction, **option_values(options))
    (line,) = recorder.lines
    return line


def by_name(options: list[dict]) -> list[dict]:
    """Subcommands and groups in name order (Discord lists them so); options in theirs."""
    def normal(option: dict) -> dict:
        if option.get("type") in (1, 2) and "options" in option:
            nested = option["options"]
            option = {**option, "options": by_name(nested) if option["type"] == 2 else nested}
        return option
    return sorted((normal(o) for o in options), key=lambda o: (o["type"] != 2, o["name"]))


def tree_payload(tree: app_commands.CommandTree, group: app_commands.Group) -> dict:
    payload = group.to_dict(tree)
    return {**payload, "options": by_name(payload["options"])}


def recorded_cases() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["lines"] if FIXTURE.exists() else []


async def record() -> dict:
    tree, group = paper_tree()
    commands = leaves(group)
    lines = [{"command": name, "options": options, "line": await written_line(commands[name], options)}
             for name, options in samples(command_grammar(), recorded_cases())]
    return {"payload": tree_payload(tree, group), "lines": lines}


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(asyncio.run(record()), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}", file=sys.stderr)

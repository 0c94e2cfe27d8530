"""The /paper app command group, built from the core's grammar: one typed subcommand per
command, so a feature added to bot/app.py appears on Discord with no edit here.

Each subcommand's options are the command's `Param`s (bot/grammar.py): their kinds,
limits, choices and suggestions become Discord's option types, ranges, choices and
autocomplete, so Discord's own form catches what it can before anything is sent. The
callback only writes the values back into the line a member would type after /paper on
any platform (`Command.write`: "schedule 09:00 Europe/Berlin weekdays") and hands it to
the client's `Answers`; the core parses and validates that line, so a wrong value gets
the same usage message as on Slack or the console.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any, Literal, Protocol

import discord
from discord import app_commands

from bot.grammar import GROUPS, Command, Param

CHOICES_MAX = 25  # Discord shows at most 25 autocomplete choices
SUBCOMMANDS_MAX = 25  # and takes at most 25 subcommands (or sub-groups) in a group
DESCRIPTION_CHARS = 100  # a command's or an option's description
GUILDS_ONLY = app_commands.AppCommandContext(guild=True, dm_channel=False, private_channel=False)


class CommandHandler(Protocol):
    async def command(self, interaction: discord.Interaction, text: str) -> None: ...

    async def add_from_message(self, interaction: discord.Interaction, text: str) -> None: ...


class TooManyCommands(ValueError):
    """The grammar has more commands than a Discord group takes."""


def paper_commands(commands: Iterable[Command]) -> app_commands.Group:
    """/paper SUBCOMMAND for every command, and /paper channel SUBCOMMAND for those of the
    channel's settings. It needs no service, only the grammar, so `paperclub discord sync`
    builds it as the client does; the client answers through `interaction.client.answers`.
    Raises TooManyCommands, naming them, past Discord's 25 a group."""
    paper = app_commands.Group(name="paper", description="paperclub: papers, the paper of the day, votes",
                               guild_only=True, allowed_contexts=GUILDS_ONLY)
    # Each level's children in the grammar's order; a sub-group where its first command is.
    children: dict[str, list[app_commands.Command | app_commands.Group]] = {"": []}
    for command in commands:
        if command.group and command.group not in children:
            children[command.group] = []
            children[""].append(app_commands.Group(name=command.group, description=GROUPS[command.group]))
        children[command.group].append(subcommand(command))
    for name, members in children.items():
        if len(members) > SUBCOMMANDS_MAX:
            where = f"/paper {name}".strip()
            raise TooManyCommands(
                f"{where} would have {len(members)} subcommands and Discord takes {SUBCOMMANDS_MAX}: "
                f"{', '.join(m.name for m in members)}. Put some in a group (Command.group in bot/grammar.py)."
            )
    groups = {g.name: g for g in children[""] if isinstance(g, app_commands.Group)}
    for name, members in children.items():
        for member in members:
            (groups[name] if name else paper).add_command(member)
    return paper


def subcommand(command: Command) -> app_commands.Command:
    """One command as a Discord subcommand: a callback whose signature says the options
    (discord.py reads it with inspect.signature), their descriptions and autocomplete."""
    for text, what in [(command.description, "its description")] + [(p.description, f"option {p.name!r}")
                                                                      for p in command.params]:
        if not 1 <= len(text) <= DESCRIPTION_CHARS:
            raise ValueError(f"/paper {command.name}: {what} must be 1 to {DESCRIPTION_CHARS} characters "
                             f"on Discord (Command.brief, Param.description): {text!r}")

    members = {p.name for p in command.params if p.kind == "member"}

    async def callback(interaction: discord.Interaction, **values: Any) -> None:
        # A member as the core reads members: the mention, <@id>.
        line = command.write({name: value.mention if name in members and value is not None else value
                              for name, value in values.items()})
        handler: CommandHandler = interaction.client.answers  # type: ignore[attr-defined]
        await handler.command(interaction, line)

    callback.__name__ = callback.__qualname__ = command.name
    callback.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [option(param) for param in command.params]
    )
    suggest = {p.name: suggester(p.suggest) for p in command.params if p.suggest}
    if command.params:
        app_commands.describe(**{p.name: p.description for p in command.params})(callback)
    if suggest:
        app_commands.autocomplete(**suggest)(callback)
    # extras: the autocomplete callbacks by option, which discord.py keeps to itself (tests call them).
    return app_commands.Command(name=command.name, description=command.description, callback=callback,
                                extras={"suggest": suggest})


def option(param: Param) -> inspect.Parameter:
    """The callback's parameter for one option: its annotation is its Discord type."""
    if param.kind == "flag":
        return _keyword(param.name, bool, inspect.Parameter.empty if param.required else False)
    annotation: Any = {"text": str, "number": int, "member": discord.Member}[param.kind]
    if param.choices:
        annotation = Literal[param.choices]
    elif param.low is not None or param.high is not None:
        annotation = app_commands.Range[annotation, param.low, param.high]
    if param.required:
        return _keyword(param.name, annotation, inspect.Parameter.empty)
    return _keyword(param.name, annotation | None, None)


def _keyword(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    # Keyword-only: a required option may follow an optional one in the form's order.
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def suggester(words: tuple[str, ...]):
    async def suggest(_interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return suggestions(words, current)

    return suggest


def suggestions(words: Iterable[str], current: str) -> list[app_commands.Choice[str]]:
    """The words containing what was typed, those starting with it first, at most 25."""
    typed = current.strip().lower()
    found = [w for w in words if typed in w.lower()]
    found.sort(key=lambda w: not w.lower().startswith(typed))
    return [app_commands.Choice(name=w, value=w) for w in found[:CHOICES_MAX]]


# --- the message menu ---------------------------------------------------------------------


def message_text(message: discord.Message) -> str:
    """The links a message holds: its content, and the URLs of its embeds (link previews).
    A message command hands the bot the message, content included, without the
    privileged message-content intent."""
    urls = [url for embed in message.embeds for url in (embed.url,) if url]
    return "\n".join(dict.fromkeys([message.content or "", *urls]))


@app_commands.guild_only()
@app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)
async def add_to_paperclub(interaction: discord.Interaction, message: discord.Message) -> None:
    handler: CommandHandler = interaction.client.answers  # type: ignore[attr-defined]
    await handler.add_from_message(interaction, message_text(message))


def add_to_paperclub_menu() -> app_commands.ContextMenu:
    """Right-click a message > Apps > "Add to paperclub": the papers it links are added,
    and the member alone sees their cards with the buttons."""
    return app_commands.ContextMenu(name="Add to paperclub", callback=add_to_paperclub)

"""The /paper command tree as Discord receives it, and the command line each subcommand
writes: the contract between the core's grammar and what members see on Discord.

tests/data/discord_tree.json holds both, first recorded from the hand-written tree that
came before the generated one: the payload `CommandTree.sync` sends for /paper (names,
descriptions, option types, required, choices, ranges, lengths, autocomplete) and, for
sample option values of every subcommand (derived from the grammar: tests/discord/
record_tree.py), the line its callback hands to the client's `answers.command`.
Callbacks are called as discord.py calls them (with the command's binding when it has
one), with a fake interaction whose client records the line; no database, no gateway.
Re-record the fixture (`python -m tests.discord.record_tree`) only when a command is
meant to change on Discord.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from discord import app_commands
from sqlalchemy import Engine, create_engine, event

from adapters.discord.app import PaperClubClient
from adapters.discord.commands import TooManyCommands, paper_commands
from bot.app import build_services, command_grammar
from bot.core import PaperClub
from bot.feature import Feature
from bot.grammar import Command, Param
from bot.messages import Incoming, Reply
from tests.discord.record_tree import (
    FIXTURE,
    Recorder,
    key,
    leaves,
    paper_tree,
    samples,
    tree_payload,
    written_line,
)
from tests.fake_discord import CHANNEL_ID, FakeDiscord, FakeInteraction, FakeMember

RECORD = "python -m tests.discord.record_tree"


# --- the contract --------------------------------------------------------------------------------


def test_the_paper_group_sends_discord_the_recorded_payload():
    tree, group = paper_tree()
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))["payload"]
    assert tree_payload(tree, group) == expected


def test_every_subcommand_writes_the_recorded_line_for_each_sample():
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["lines"]
    _tree, group = paper_tree()
    commands = leaves(group)

    async def lines() -> list[str]:
        return [await written_line(commands[case["command"]], case["options"]) for case in recorded]

    assert asyncio.run(lines()) == [case["line"] for case in recorded]


def test_the_fixture_holds_the_samples_the_grammar_makes():
    """A param added to a command has samples of its own to record, so the fixture
    follows the grammar without a list of cases kept by hand here."""
    recorded = {key(case["command"], case["options"]) for case in json.loads(FIXTURE.read_text("utf-8"))["lines"]}
    missing = [key(name, options) for name, options in samples(command_grammar()) if key(name, options) not in recorded]
    assert missing == [], f"not recorded (re-record with `{RECORD}`): {missing}"


def test_the_samples_reach_every_subcommand_and_every_option():
    _tree, group = paper_tree()
    samples = json.loads(FIXTURE.read_text(encoding="utf-8"))["lines"]
    for name, command in leaves(group).items():
        given = {option for case in samples if case["command"] == name for option in case["options"]}
        assert any(case["command"] == name for case in samples), name
        assert given == {p.name for p in command.parameters}, name


# --- the tree follows the grammar -----------------------------------------------------------------


class Shout(Feature):
    """A toy feature with a form: `shout [loud] [times N] WORDS [@member]`, and a channel
    setting `volume` in the channel's group."""

    name = "shout"

    def commands(self) -> list[Command]:
        return [
            Command("shout", "shout [loud] [times N] WORDS [@member]", "Say the words back, maybe louder.",
                    "shout loud times 2 hello", self.shout,
                    params=(Param("words", "what to say back", required=True, low=1, high=200),
                            Param("times", "how often", kind="number", low=1, high=3),
                            Param("loud", "in capitals", kind="flag"),
                            Param("to", "who hears it", kind="member"),
                            Param("tone", "how it sounds", suggest=("warm", "cold", "lukewarm"))),
                    written="{loud} [times {times}] {words} {to} [in a {tone} voice]"),
            Command("volume", "volume [low|high]", "How loud this channel shouts.", "volume high", self.volume,
                    params=(Param("level", "low or high", choices=("low", "high")),), group="channel"),
        ]

    def shout(self, _incoming: Incoming, args: str) -> Reply:
        words = args.split()
        loud = words[:1] == ["loud"]
        words = words[loud:]
        times = int(words[1]) if words[:1] == ["times"] else 1
        text = " ".join(words[2:] if words[:1] == ["times"] else words)
        return Reply(text=" / ".join([text.upper() if loud else text] * times))

    def volume(self, _incoming: Incoming, args: str) -> Reply:
        return Reply(text=f"volume: {args or 'low'}")


def option_payload(command: app_commands.Command, name: str) -> dict:
    return next(o for o in command.to_dict(None)["options"] if o["name"] == name)


def test_a_new_features_commands_appear_on_discord_and_the_core_answers_them(tmp_path):
    services = build_services(f"sqlite:///{tmp_path / 'shout.db'}")
    services.features.append(Shout())  # the one line a new feature adds to bot/app.py
    core = PaperClub(services.features, services.channels, services.core.clock)
    world = FakeDiscord()
    channel = world.add_channel(CHANNEL_ID)
    client = PaperClubClient(core, channels=world)
    group = client.tree.get_command("paper")
    shout, volume = leaves(group)["shout"], leaves(group)["volume"]
    assert volume.parent.name == "channel" and shout.parent is group
    assert shout.description == "Say the words back, maybe louder."
    # Discord's option types: string 3, integer 4, boolean 5, user 6; required first.
    assert [(o["name"], o["type"], o["required"]) for o in shout.to_dict(None)["options"]] == [
        ("words", 3, True), ("times", 4, False), ("loud", 5, False), ("to", 6, False), ("tone", 3, False)]
    assert (option_payload(shout, "words")["min_length"], option_payload(shout, "words")["max_length"]) == (1, 200)
    assert (option_payload(shout, "times")["min_value"], option_payload(shout, "times")["max_value"]) == (1, 3)
    assert option_payload(shout, "tone")["autocomplete"] is True
    assert option_payload(volume, "level")["choices"] == [{"name": "low", "value": "low"},
                                                          {"name": "high", "value": "high"}]

    async def scenario():
        interaction = FakeInteraction(client, world, channel)
        tones = await shout.extras["suggest"]["tone"](interaction, "warm")
        assert [c.value for c in tones] == ["warm", "lukewarm"]  # starting with it, then containing it
        shouted = FakeInteraction(client, world, channel)
        await shout.callback(shouted, words="hello there", times=2, loud=True, to=FakeMember(42, "ana"),
                             tone=None)
        recorder = Recorder()
        await shout.callback(SimpleNamespace(client=SimpleNamespace(answers=recorder)), words="hi", times=None,
                             loud=False, to=None, tone="warm")
        assert recorder.lines == ["shout hi in a warm voice"]
        set_volume = FakeInteraction(client, world, channel)
        await volume.callback(set_volume, level="high")
        return shouted, set_volume

    shouted, set_volume = asyncio.run(scenario())
    # The line written was "shout loud times 2 hello there <@42>": the core answered it.
    assert shouted.public()[0].content == "HELLO THERE <@42> / HELLO THERE <@42>"
    assert set_volume.public()[0].content == "volume: high"
    services.db.dispose()


def filler(name: str, group: str = "") -> Command:
    return Command(name, name, f"The {name} command.", name, lambda incoming, args: Reply(text=""), group=group)


def test_past_25_subcommands_a_group_fails_when_it_is_built_naming_them():
    grammar = command_grammar()
    top = len({c.group or c.name for c in grammar})  # the channel group takes one place
    room = [filler(f"extra{i}") for i in range(25 - top)]
    assert len(paper_commands(grammar + room).commands) == 25
    with pytest.raises(TooManyCommands, match=r"^/paper would have 26 subcommands and Discord takes 25: .*onemore"):
        paper_commands(grammar + room + [filler("onemore")])
    in_channel = len([c for c in grammar if c.group == "channel"])
    crowded = [filler(f"setting{i}", group="channel") for i in range(26 - in_channel)]
    with pytest.raises(TooManyCommands, match=r"^/paper channel would have 26 subcommands"):
        paper_commands(grammar + crowded)


def test_a_description_discord_would_refuse_fails_when_the_tree_is_built():
    long = Command("wordy", "wordy", "x" * 101, "wordy", lambda incoming, args: Reply(text=""))
    with pytest.raises(ValueError, match="/paper wordy: its description must be 1 to 100 characters"):
        paper_commands([long])
    assert paper_commands([replace(long, brief="Short enough.")]).get_command("wordy").description == "Short enough."


def test_the_grammar_for_sync_is_the_served_one_and_opens_no_database(tmp_path):
    opened = []

    def connected(*_args):
        opened.append(True)

    event.listen(Engine, "connect", connected)
    try:
        grammar = command_grammar()
        assert not opened, "building the grammar opened a database"
        create_engine("sqlite://").connect().close()  # the listener does hear a connection
        assert opened
    finally:
        event.remove(Engine, "connect", connected)
    served = build_services(f"sqlite:///{tmp_path / 'served.db'}").core.commands.values()
    assert [(c.name, c.params, c.written, c.brief, c.group) for c in grammar] == [
        (c.name, c.params, c.written, c.brief, c.group) for c in served]

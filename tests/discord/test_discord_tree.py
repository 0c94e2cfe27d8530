"""The /paper command tree as Discord receives it, and the command line each subcommand
writes: the contract between the core's grammar and what members see on Discord.

tests/data/discord_tree.json holds both, recorded from the hand-written tree that came
before the generated one: the payload `CommandTree.sync` sends for /paper (names,
descriptions, option types, required, choices, ranges, lengths, autocomplete) and, for
sample option values of every subcommand, the line its callback hands to the client's
`answers.command`. Callbacks are called as discord.py calls them (with the command's
binding when it has one), with a fake interaction whose client records the line; no
database, no gateway. Rewrite the fixture (`python -m tests.discord.test_discord_tree`)
only when a command is meant to change on Discord.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import discord
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
from tests.conftest import DATA
from tests.fake_discord import CHANNEL_ID, FakeDiscord, FakeInteraction, FakeMember

FIXTURE = DATA / "discord_tree.json"
MEMBER = "@member"  # in a sample, {"@member": ID}: a discord.Member option


def paper_tree() -> tuple[app_commands.CommandTree, app_commands.Group]:
    tree = app_commands.CommandTree(discord.Client(intents=discord.Intents.default()))
    tree.add_command(paper_commands(command_grammar()))
    return tree, tree.get_command("paper")


def leaves(group: app_commands.Group) -> dict[str, app_commands.Command]:
    found: dict[str, app_commands.Command] = {}
    for command in group.commands:
        found.update(leaves(command) if isinstance(command, app_commands.Group) else {command.name: command})
    return found


# Option values per subcommand: every option at least once, empty and absent values,
# quotes inside filter values, flags set and unset, several options at once.
SAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("help", {}),
    ("help", {"command": "search"}),
    ("search", {"query": "graph biconnectivity"}),
    ("search", {"query": "diffusion  models", "author": "Yann LeCun", "track": "oral", "collection": "poster-session",
                "tag": "gnn"}),
    ("search", {"query": "x", "author": 'a "quoted" name', "tag": ""}),
    ("search", {"query": "q", "collection": '"'}),
    ("show", {"paper": "12"}),
    ("show", {"paper": "arXiv:1706.03762"}),
    ("similar", {"paper": "42"}),
    ("schedule", {}),
    ("schedule", {"time": "09:00", "zone": "Europe/Berlin", "days": "weekdays"}),
    ("schedule", {"switch": "off"}),
    ("schedule", {"switch": "resume"}),
    ("schedule", {"pause_until": "2026-12-24"}),
    ("schedule", {"switch": "on", "pause_until": "2027-01-01", "time": "10:00"}),
    ("schedule", {"zone": "UTC"}),
    ("schedule", {"days": "mon,wed,fri", "time": "08:30", "pause_until": ""}),
    ("topics", {}),
    ("topics", {"action": "add", "words": "reinforcement learning, world models"}),
    ("topics", {"action": "clear"}),
    ("topics", {"words": "orphan words"}),
    ("collections", {}),
    ("use", {"collections": "iclr2021 trending"}),
    ("use", {"collections": "all"}),
    ("settings", {}),
    ("today", {}),
    ("next", {}),
    ("history", {}),
    ("history", {"count": 5}),
    ("history", {"count": 50}),
    ("vote", {"target": 12}),
    ("vote", {"target": 12, "choice": "up"}),
    ("vote", {"target": 3, "choice": "2"}),
    ("vote", {"target": 3, "choice": ""}),
    ("nominate", {"paper": "graph biconnectivity"}),
    ("poll", {}),
    ("poll", {"options": 4, "duration": "48h"}),
    ("poll", {"close": True}),
    ("poll", {"close": True, "options": 3}),
    ("poll", {"duration": "1w"}),
    ("poll", {"close": False, "options": 2}),
    ("queue", {}),
    ("queue", {"action": "done", "paper": 42}),
    ("queue", {"action": "remove"}),
    ("queue", {"paper": 7}),
    ("top", {}),
    ("top", {"days": 7}),
    ("stats", {}),
    ("stats", {"days": 3650}),
    ("session", {}),
    ("session", {"day": "tue", "time": "17:00", "zone": "Europe/Berlin"}),
    ("session", {"off": True}),
    ("session", {"skip": "2026-12-01"}),
    ("session", {"time": "18:00"}),
    ("session", {"off": True, "skip": "2026-12-01", "zone": "UTC"}),
    ("session", {"zone": "Asia/Tokyo", "off": False}),
    ("session", {"day": "thu", "time": "17:00", "length": "90m", "at": "https://meet.example/abc"}),
    ("session", {"at": "Room 4.12"}),
    ("session", {"length": "2h"}),
    ("presenters", {}),
    ("presenters", {"action": "add", "member": {MEMBER: 123456789012345678}, "more": "<@2> <@3>"}),
    ("presenters", {"action": "remove", "member": {MEMBER: 5}}),
    ("presenters", {"more": "<@4>"}),
    ("presenters", {"member": {MEMBER: 6}}),
    ("volunteer", {}),
    ("swap", {"member": {MEMBER: 223456789012345678}}),
    ("notes", {"paper": "42", "text": "the ablation in section 4 is the key result"}),
    ("archive", {}),
    ("archive", {"reset": True}),
    ("archive", {"reset": False}),
    ("follow", {"what": "arxiv", "target": "cs.CL", "words": "retrieval augmented"}),
    ("follow", {"what": "citations"}),
    ("unfollow", {"number": 2}),
    ("following", {}),
    ("fresh", {"window": "7d"}),
    ("fresh", {"window": "off"}),
    ("zotero", {}),
    ("zotero", {"action": "link", "value": "4242 Reading group"}),
    ("zotero", {"action": "unlink"}),
    ("digest", {}),
    ("digest", {"day": "mon", "time": "09:00"}),
    ("digest", {"time": "17:30"}),
    ("digest", {"switch": "off"}),
    ("digest", {"switch": "preview", "day": ""}),
    ("discuss", {"paper": "42"}),
    ("add", {"paper": "https://arxiv.org/abs/2106.01345"}),
    ("add", {"paper": "10.1000/xyz 2106.01345"}),
    ("reactions", {}),
    ("reactions", {"emoji": "🔥 🙈 📖"}),
    ("reactions", {"emoji": "reset"}),
    ("sessions", {}),
    ("sessions", {"count": 10}),
]


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


async def record() -> dict:
    tree, group = paper_tree()
    commands = leaves(group)
    lines = [{"command": name, "options": options, "line": await written_line(commands[name], options)}
             for name, options in SAMPLES]
    return {"payload": tree_payload(tree, group), "lines": lines}


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
    with pytest.raises(TooManyCommands, match=r"^/paper would have 26 subcommands and Discord takes 25: .*extra0"):
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


if __name__ == "__main__":  # rewrite the fixture from the tree as it is now
    FIXTURE.write_text(json.dumps(asyncio.run(record()), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}", file=sys.stderr)

"""The core routes a line once (`PaperClub.route`): the command, its arguments, and what an
adapter decides before the answer exists (private, answered later, manager rights). The
answer follows the same route, so what an adapter guessed and what the core did agree."""

from __future__ import annotations

import pytest

from bot.core import PaperClub
from bot.feature import Feature, Features
from bot.grammar import LINE_CHARS, Command, always, first_word_in
from bot.messages import ChannelRef, Incoming, Reply, UserRef


class Toy(Feature):
    """Three commands, one of each kind an adapter cares about."""

    name = "toy"

    def commands(self) -> list[Command]:
        return [
            Command("peek", "peek", "Private.", "peek", self.said, private=True),
            Command("fetch", "fetch URL", "Slow.", "fetch x", self.said, answered_later=True),
            Command("tune", "tune [off]", "Rights for off.", "tune off", self.said, first_word_in("off")),
            Command("boss", "boss", "Rights always.", "boss", self.said, always),
        ]

    def said(self, incoming: Incoming, args: str) -> Reply:
        return Reply(text=f"args=[{args}]")


class NoNotices:
    def take_notice(self, channel: ChannelRef) -> None:
        return None


@pytest.fixture
def core() -> PaperClub:
    return PaperClub(Features([Toy()]), NoNotices())


@pytest.mark.parametrize("line, word, name, args, private, later, rights", [
    ("peek", "peek", "peek", "", True, False, False),
    ("/paper FETCH  https://x.org/a ", "fetch", "fetch", "https://x.org/a", False, True, False),
    ("tune", "tune", "tune", "", False, False, False),
    ("tune OFF now", "tune", "tune", "OFF now", False, False, True),
    ("boss", "boss", "boss", "", False, False, True),
    ("help tune", "help", "help", "tune", True, False, False),
    # Tabs and control characters are cleaned before the split, as for the answer.
    ("fetch\thttps://x.org/a\x00", "fetch", "fetch", "https://x.org/a", False, True, False),
    ("", "", "unknown", "", True, False, False),  # the command list: for the asker
    ("frobnicate now", "frobnicate", "unknown", "now", True, False, False),  # an error: for the asker
])
def test_a_line_is_routed_once_with_what_an_adapter_needs(core, line, word, name, args, private, later, rights):
    route = core.route(line)
    assert (route.word, route.name, route.args) == (word, name, args)
    assert (route.private, route.later, route.needs_rights, route.too_long) == (private, later, rights, False)
    assert (route.command is None) == (name == "unknown")


def test_the_answer_takes_the_same_route(core):
    member = UserRef("console", "ann")
    channel = ChannelRef("console", "local", "general")
    assert core.handle(Incoming(channel, member, "fetch\thttps://x.org/a")).text == "args=[https://x.org/a]"
    unknown = core.handle(Incoming(channel, member, "frobnicate"))
    assert unknown.text.startswith("Unknown command `frobnicate`.\n") and unknown.ephemeral
    # A typo of a command names it (two edits at most; a swap of two letters is one).
    typo = core.handle(Incoming(channel, member, "helpp")).text
    assert typo.startswith("Unknown command `helpp`. Did you mean `help`?")
    assert "Did you mean `fetch`?" in core.handle(Incoming(channel, member, "ftech x")).text


def test_a_line_too_long_is_refused_at_once_and_privately_whatever_it_names(core):
    route = core.route("fetch " + "x" * LINE_CHARS)
    assert route.too_long and route.private and not route.later and not route.needs_rights
    assert route.name == "fetch"  # the log still says what was asked
    reply = core.handle(Incoming(ChannelRef("console", "local", "g"), UserRef("console", "a"),
                                 "boss " + "x" * LINE_CHARS))
    assert not reply.ok and reply.ephemeral and f"a command is at most {LINE_CHARS:,}" in reply.text

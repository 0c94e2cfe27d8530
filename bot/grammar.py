"""The command grammar shared by every platform: names, usage lines, argument errors.

What a member types after `/paper` on Slack or Discord, or on a console line, is split
into a command word and its arguments here; each command's handler gets the rest.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from bot.messages import Incoming, Reply

# Ids are database integers: PostgreSQL's `integer` stops at 2**31 - 1, and SQLite's at
# 2**63 - 1. A number past the smaller bound names nothing on either, so it is refused
# before any query (one verdict on both databases).
ID_MAX = 2**31 - 1
# What a member may type in one line. Slack's slash command text stops near 4,000
# characters and Discord's option at 6,000; past that a line is a paste, not a command.
LINE_CHARS = 6000
# ASCII digits only: str.isdigit() also accepts ², ① and other scripts' digits, which
# int() then refuses (or reads as a different number than the member sees).
_NUMBER = re.compile(r"#?([0-9]+)")


class UsageError(ValueError):
    """Bad arguments for a known command; the reply shows that command's usage."""


class NotAllowed(Exception):
    """The member may not do this here (e.g. only managers change settings)."""


def never(_args: str) -> bool:
    return False


def always(_args: str) -> bool:
    return True


def with_arguments(args: str) -> bool:
    """Showing is for everyone, changing (any arguments) for managers."""
    return bool(args.split())


def first_word_in(*words: str) -> Callable[[str], bool]:
    return lambda args: args.lower().split()[:1] in ([w] for w in words)


@dataclass(frozen=True)
class Param:
    """One argument of a command as a form asks for it (Discord's typed app-command
    options), and how its value is written back into the line the core parses: the
    core stays the only parser, a form is only a way of typing the line."""

    name: str
    description: str
    kind: str = "text"  # text | number | flag | member (a platform mention)
    required: bool = False
    choices: tuple[str, ...] = ()  # the only values a form offers
    suggest: str = ""  # what a form suggests while typing: zones | days | commands | votes
    low: int | None = None  # number: smallest; text: shortest
    high: int | None = None  # number: largest; text: longest
    # The value as it reads in the line: "{}" the value itself, 'author:"{}"', "pause
    # until {}"; a flag writes this text when it is set (its name when empty).
    written: str = "{}"


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # e.g. "search QUERY [author:NAME] [track:oral] [in:COLLECTION] [tag:WORD]"
    summary: str  # one line for `help`
    example: str
    handler: Callable[[Incoming, str], Reply]
    # Whether the answer to these arguments may depend on the member being a manager
    # (the handler then calls require_manager). An adapter whose platform makes asking
    # costly (Slack's users.info inside the 3-second ack) asks only when this says so.
    manager_rights: Callable[[str], bool] = never
    # For platforms with forms: the typed options, in the order a form shows them, and
    # the order their values are written into the line (param names; default: as shown).
    params: tuple[Param, ...] = ()
    written_order: tuple[str, ...] = ()
    brief: str = ""  # a form's one-line description (Discord: 100 characters); default: summary
    group: str = ""  # a form's sub-group (Discord: "channel" for the channel's settings)

    def usage_text(self) -> str:
        return f"Usage: {self.usage}\n{self.summary}\nExample: {self.example}"


def split_command(text: str) -> tuple[str, str]:
    """("search", "diffusion robustness") from "search diffusion robustness"."""
    stripped = text.strip()
    if stripped.startswith("/paper"):
        stripped = stripped[len("/paper") :].strip()
    word, _, rest = stripped.partition(" ")
    return word.lower(), rest.strip()


def number(word: str, low: int = 1, high: int = ID_MAX) -> int | None:
    """The whole number `word` spells in ASCII digits (an id may be written #12), if it
    lies in low..high; None for anything else."""
    match = _NUMBER.fullmatch(word)
    digits = match.group(1).lstrip("0") or "0" if match else ""
    if not digits or len(digits) > len(str(high)):  # 10**30 is never parsed at all
        return None
    value = int(digits)
    return value if low <= value <= high else None


def looks_like_number(word: str) -> bool:
    """Digits of any script (²,①, ٣): a member meant a number, whether or not we read it."""
    return bool(word.lstrip("#")) and all(unicodedata.category(c) in ("Nd", "No") for c in word.lstrip("#"))


def clean_line(text: str) -> str:
    """What a member typed, without the characters no command means and no database
    stores alike (NUL, other control characters: PostgreSQL refuses NUL in text, SQLite
    keeps it). Tabs and line breaks become spaces."""
    return "".join(
        " " if c in "\t\n\r" else c
        for c in text
        if c in "\t\n\r" or unicodedata.category(c) != "Cc"
    )


def usage_reply(command: Command, problem: str = "") -> Reply:
    text = f"{problem}\n{command.usage_text()}" if problem else command.usage_text()
    return Reply(text=text, ephemeral=True, ok=False)


def require_manager(incoming: Incoming, what: str) -> None:
    """Settings and moderation are for channel managers (the adapter decides who is one)."""
    if not incoming.user.is_manager:
        raise NotAllowed(f"Only channel managers can {what}.")

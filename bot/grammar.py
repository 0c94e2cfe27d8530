"""The command grammar shared by every platform: names, usage lines, argument errors.

What a member types after `/paper` on Slack or Discord, or on a console line, is split
into a command word and its arguments here; each command's handler gets the rest.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
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


# The sub-groups a form may put commands in, with their descriptions (Discord: one level
# under /paper, 25 commands each). A command names one in `Command.group`.
GROUPS = {"channel": "This channel's settings: schedule, topics, follows, digest, reactions, archive"}
# A form's values go into the line through `Command.written`: "{name}" is a param's value,
# a "[...]" part is written only when one of its params is given.
_WRITTEN_PART = re.compile(r"\[([^\]]*)\]|(\S+)")
_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Param:
    """One argument of a command as a form asks for it (Discord's typed app-command
    options). A form is only a way of typing the line: its values are written back into
    it (`Command.write`) and the core stays the only parser, with the same usage errors
    on every platform. The limits here mirror the handler's, so a form refuses early what
    the core would refuse anyway."""

    name: str
    description: str
    kind: str = "text"  # text | number | flag (written as its name when set) | member (a mention)
    required: bool = False
    choices: tuple[str, ...] = ()  # the only values a form offers
    # Words a form suggests while a member types (those starting with what was typed
    # first, then those containing it); anything else may still be typed.
    suggest: tuple[str, ...] = ()
    low: int | None = None  # number: smallest; text: shortest
    high: int | None = None  # number: largest; text: longest

    def __post_init__(self) -> None:
        if self.kind not in ("text", "number", "flag", "member"):
            raise ValueError(f"param {self.name!r}: kind {self.kind!r} is not text, number, flag or member")


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
    # For platforms with forms (Discord): the typed options in the order a form shows
    # them, and how their values make the line after the command's name: "{param}" for a
    # value (its double quotes dropped where the template quotes it: the grammar cannot
    # escape one), a word or "[...]" part holding params written only when one of them is
    # given, other words always. Default: every param, in the order shown. E.g.
    # '{switch} [pause until {pause_until}] {time} {zone} {days}', '{query} author:"{author}"'.
    params: tuple[Param, ...] = ()
    written: str = ""
    brief: str = ""  # a form's one-line description (Discord: 100 characters); default: summary
    group: str = ""  # a form's sub-group, one of GROUPS ("channel": the channel's settings)
    # Every answer is for the asking member alone: a platform that must choose before the
    # answer exists (Discord's defer) asks privately. tests/discord checks the core agrees.
    private: bool = False
    # The answer may take seconds (fetching, picking over the corpus) or becomes a post
    # the adapter makes itself: a platform with a short acknowledgement (Slack's 3 s)
    # acknowledges at once and answers after.
    answered_later: bool = False
    # Lines of a command answered later though the command mostly answers at once
    # (`notes 12 summary` waits on a language model; `notes 12 TEXT` does not).
    later_when: Callable[[str], bool] = never

    def __post_init__(self) -> None:
        """A template naming an unknown param, or a param it leaves out, is a mistake in
        the feature: it fails when the feature is built, not when a member uses it."""
        names = [p.name for p in self.params]
        fields = _FIELD.findall(self.written_template())
        if sorted(fields) != sorted(names) or len(set(names)) != len(names):
            raise ValueError(f"command {self.name!r}: `written` must name each param once: "
                             f"params {names}, written {fields}")
        if self.group and self.group not in GROUPS:
            raise ValueError(f"command {self.name!r}: group {self.group!r} is not one of {sorted(GROUPS)}")

    @property
    def description(self) -> str:
        """What a form shows beside the command's name."""
        return self.brief or self.summary

    def written_template(self) -> str:
        return self.written or " ".join(f"{{{p.name}}}" for p in self.params)

    def write(self, values: Mapping[str, str | int | bool | None]) -> str:
        """The line a form's values stand for: "schedule pause until 2026-12-24" from
        {"pause_until": "2026-12-24"}. A value that is None, False or "" is not given; a
        flag that is set writes its name."""
        given = {p.name: _text(p, values.get(p.name)) for p in self.params}
        words = [self.name]
        for part, word in _WRITTEN_PART.findall(self.written_template()):
            inner = [_fill(w, given) for w in part.split()] if part else [_fill(word, given)]
            if part and not any(given.get(f) for f in _FIELD.findall(part)):
                continue
            words += [w for w in inner if w]
        return " ".join(words)

    def usage_text(self) -> str:
        return f"Usage: {self.usage}\n{self.summary}\nExample: {self.example}"


def _text(param: Param, value: str | int | bool | None) -> str:
    if value is None or value is False or value == "":
        return ""
    return param.name if param.kind == "flag" else str(value)


def _fill(word: str, given: Mapping[str, str]) -> str:
    """One word of the template with its params' values; "" when it holds params and
    none of them is given."""
    fields = _FIELD.findall(word)
    if fields and not any(given[f] for f in fields):
        return ""

    def value(match: re.Match[str]) -> str:
        text = given[match.group(1)]
        quoted = word[match.start() - 1 : match.start()] == '"' and word[match.end() : match.end() + 1] == '"'
        return text.replace('"', "") if quoted else text

    return _FIELD.sub(value, word)


@dataclass(frozen=True)
class Route:
    """How the core takes one command line, known before it answers: what an adapter asks
    (`PaperClub.route`) instead of splitting the line itself, so the line is split once,
    in one way, for the answer and for every decision taken ahead of it."""

    word: str  # the command word as typed, lowercased; "" for an empty line
    args: str  # the rest of the line
    command: Command | None  # None: an empty line (the core lists the commands) or an unknown word
    # Every answer is for the asking member alone: a platform that must choose before the
    # answer exists (Discord's defer) asks privately. Help and unknown words are private.
    private: bool
    # Acknowledge now, answer after (Slack's 3-second ack): the command's `answered_later`.
    later: bool
    # The answer may depend on the member being a manager: look the member's rights up
    # (Slack's users.info) only then. The command's `manager_rights` for these arguments.
    needs_rights: bool
    chars: int = 0  # the line's length: past LINE_CHARS it is refused whole, whatever it names

    @property
    def too_long(self) -> bool:
        return self.chars > LINE_CHARS

    def refusal(self) -> Reply | None:
        """The answer to a line the core refuses whole, before any command sees it."""
        if not self.too_long:
            return None
        return Reply(text=f"That line is {self.chars:,} characters long; a command is at most {LINE_CHARS:,}.",
                     ephemeral=True, ok=False)

    @property
    def name(self) -> str:
        """The command's name as logs show it: "unknown" for an empty line or another word."""
        return self.command.name if self.command is not None else "unknown"


def route_line(commands: Mapping[str, Command], text: str) -> Route:
    """The route of `text` through `commands` (PaperClub.route, which every adapter asks).
    A line too long is refused at once and privately, so it asks for nothing."""
    line = clean_line(text)
    word, args = split_command(line)
    command = commands.get(word) if word else None
    if len(line) > LINE_CHARS:
        return Route(word, args, command, private=True, later=False, needs_rights=False, chars=len(line))
    return Route(word, args, command, private=command is None or command.private,
                 later=command is not None and (command.answered_later or command.later_when(args)),
                 needs_rights=command is not None and command.manager_rights(args), chars=len(line))


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


def unknown_command(word: str, names: Iterable[str]) -> str:
    """"Unknown command `helpp`. Did you mean `help`?": the nearest command within two
    edits (a swap of two letters is one), when there is one."""
    from rapidfuzz import process  # here: only a mistyped command needs it
    from rapidfuzz.distance import OSA

    nearest = process.extractOne(word.lower()[:40], list(names), scorer=OSA.distance, score_cutoff=2)
    return f"Unknown command `{word[:40]}`." + (f" Did you mean `{nearest[0]}`?" if nearest else "")


def usage_reply(command: Command, problem: str = "") -> Reply:
    text = f"{problem}\n{command.usage_text()}" if problem else command.usage_text()
    return Reply(text=text, ephemeral=True, ok=False)


def require_manager(incoming: Incoming, what: str) -> None:
    """Settings and moderation are for channel managers (the adapter decides who is one)."""
    if not incoming.user.is_manager:
        raise NotAllowed(f"Only channel managers can {what}.")

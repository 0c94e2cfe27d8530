"""The command grammar shared by every platform: names, usage lines, argument errors.

What a member types after `/paper` on Slack or Discord, or on a console line, is split
into a command word and its arguments here; each command's handler gets the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.messages import Incoming, Reply


class UsageError(ValueError):
    """Bad arguments for a known command; the reply shows that command's usage."""


class NotAllowed(Exception):
    """The member may not do this here (e.g. only managers change settings)."""


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # e.g. "search QUERY [author:NAME] [track:oral] [in:COLLECTION] [tag:WORD]"
    summary: str  # one line for `help`
    example: str
    handler: Callable[[Incoming, str], Reply]
    manager_only: bool = False

    def usage_text(self) -> str:
        return f"Usage: {self.usage}\n{self.summary}\nExample: {self.example}"


def split_command(text: str) -> tuple[str, str]:
    """("search", "diffusion robustness") from "search diffusion robustness"."""
    stripped = text.strip()
    if stripped.startswith("/paper"):
        stripped = stripped[len("/paper") :].strip()
    word, _, rest = stripped.partition(" ")
    return word.lower(), rest.strip()


def usage_reply(command: Command, problem: str = "") -> Reply:
    text = f"{problem}\n{command.usage_text()}" if problem else command.usage_text()
    return Reply(text=text, ephemeral=True, ok=False)


def require_manager(incoming: Incoming, what: str) -> None:
    """Settings and moderation are for channel managers (the adapter decides who is one)."""
    if not incoming.user.is_manager:
        raise NotAllowed(f"Only channel managers can {what}.")

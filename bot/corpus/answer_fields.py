"""The fields of a provider's JSON answer, checked by shape before anything uses them: the
checks OpenAlex's and Zotero's readers share (bot.follows.answers, bot.zotero.answers).
A field of the wrong type or size is `Junk` naming it and saying what it was; a missing or
null one reads as nothing, as providers send them."""

from __future__ import annotations

import math
from typing import Any

LONGEST = 2**63  # past a signed 64-bit column: not a count or a version a provider means


class Junk(ValueError):
    """A field of the wrong type or size; str() names the field and says what it was."""


def kind(value: object) -> str:
    """What a JSON value is, as a refusal says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "not a finite number" if isinstance(value, float) and not math.isfinite(value) else "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def text(row: dict[str, Any], name: str, limit: int, where: str = "") -> str | None:
    """The string `name` of `row` (`where`: the path to it, for the message), at most
    `limit` characters."""
    value = row.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Junk(f"{where}{name} is {kind(value)}, not a string")
    if len(value) > limit:
        what = f"the {name}" if not where else f"{where}{name}"
        raise Junk(f"{what} is {len(value):,} characters long, at most {limit:,} are read")
    return value


def is_whole(value: object, least: int = -LONGEST) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value < LONGEST


def whole(row: dict[str, Any], name: str, least: int = -LONGEST) -> int | None:
    """The whole number `name` of `row`, at least `least`."""
    value = row.get(name)
    if value is None:
        return None
    if not is_whole(value, least):
        raise Junk(f"{name} is {kind(value)}, not a whole number")
    return int(value)


def listed(row: dict[str, Any], name: str) -> list[Any]:
    """The list `name` of `row` (null or missing: empty)."""
    value = row.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Junk(f"{name} is {kind(value)}, not a list")
    return value

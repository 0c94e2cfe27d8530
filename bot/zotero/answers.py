"""Zotero's answers, checked by shape before anything uses them: the one place that reads
the Web API's JSON (bot.zotero.api only carries it).

An item is checked field by field: its key (an object key Zotero makes), its version (a
whole number), and the data fields paperclub reads (strings of bounded size; tags and
creators as lists of objects). One that fails is skipped with why, and the rest of the
page is used: one odd item in a group's collection costs that item, not the channel's
sync. An answer wrong as a whole (not a list of items, a key whose access is not an
object) is a `ZoteroJunk` saying what was wrong.
"""

from __future__ import annotations

import re
from typing import Any

from bot.corpus import answer_fields as fields
from bot.corpus.answer_fields import Junk
from bot.zotero.api import ZoteroJunk

TEXT_MAX = 10_000  # characters of a field paperclub reads (a title, a DOI, `extra`, a URL)
ABSTRACT_MAX = 100_000
# The item fields paperclub reads (bot/zotero/items.py), each a string when given.
TEXT_FIELDS = ("itemType", "title", "DOI", "archiveID", "extra", "url", "date", "publicationTitle",
               "proceedingsTitle", "conferenceName", "repository", "parentItem")
_KEY = re.compile(r"[0-9A-Z]{8}")  # Zotero makes keys of 8 of these (bot.zotero.items.KEY_ALPHABET)

Item = dict[str, Any]  # an item as Zotero answers it, once checked: {key, version, data, ...}



# --- items ----------------------------------------------------------------------------------


def items(data: object, request: str) -> tuple[list[Item], list[tuple[str, str]]]:
    """The answer's items that can be used, and those skipped as (which, why)."""
    if not isinstance(data, list):
        raise ZoteroJunk(f"{request}: the answer is {fields.kind(data)}, not a list of items")
    found: list[Item] = []
    skipped: list[tuple[str, str]] = []
    for place, obj in enumerate(data, 1):
        try:
            found.append(item(obj))
        except Junk as problem:
            skipped.append((_which(obj, place), str(problem)))
    return found, skipped


def item(obj: object) -> Item:
    """One item, checked; Junk saying which field is wrong otherwise."""
    if not isinstance(obj, dict):
        raise Junk(f"the item is {fields.kind(obj)}, not an object")
    key = obj.get("key")
    if not isinstance(key, str):
        raise Junk(f"key is {fields.kind(key)}, not a string")
    if not _KEY.fullmatch(key):
        raise Junk(f"key {key[:20]!r} is not a Zotero object key")
    fields.whole(obj, "version", least=0)
    data = obj.get("data")
    if not isinstance(data, dict):
        raise Junk(f"data is {fields.kind(data)}, not an object")
    for name in TEXT_FIELDS:
        fields.text(data, name, TEXT_MAX)
    fields.text(data, "abstractNote", ABSTRACT_MAX)
    for tag in fields.listed(data, "tags"):
        if not isinstance(tag, dict):
            raise Junk(f"tags holds {fields.kind(tag)}, not an object")
        if fields.text(tag, "tag", TEXT_MAX, "tags.") is None:
            raise Junk("tags holds a tag without its text")
    for person in fields.listed(data, "creators"):
        if not isinstance(person, dict):
            raise Junk(f"creators holds {fields.kind(person)}, not an object")
        for name in ("name", "firstName", "lastName"):
            fields.text(person, name, TEXT_MAX, "creators.")
    for collection in fields.listed(data, "collections"):
        if not isinstance(collection, str):
            raise Junk(f"collections holds {fields.kind(collection)}, not a string")
    return obj


def one_item(obj: object, request: str) -> Item:
    """An item read by its key, with its version (a change sends it back): ZoteroJunk if
    it cannot be used."""
    try:
        found = item(obj)
    except Junk as problem:
        raise ZoteroJunk(f"{request}: {problem}") from None
    if found.get("version") is None:
        raise ZoteroJunk(f"{request}: the item has no version")
    return found


def written(data: object, keys: list[str]) -> dict[str, tuple[int | None, str | None]]:
    """What a write's answer says of each object sent (`keys`, in the order sent): its
    new version, or why Zotero refused it. Objects it says nothing readable of are left
    out (the caller records them as unanswered)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ZoteroJunk(f"the answer to a write is {fields.kind(data)}, not an object")
    outcome: dict[str, tuple[int | None, str | None]] = {}
    successful = data.get("successful")
    for made in successful.values() if isinstance(successful, dict) else ():
        if isinstance(made, dict) and isinstance(made.get("key"), str) and made["key"] in keys:
            version = made.get("version")
            outcome[made["key"]] = (version if fields.is_whole(version, least=0) else None, None)
    failed = data.get("failed")
    for index, refused in failed.items() if isinstance(failed, dict) else ():
        if index.isascii() and index.isdigit() and int(index) < len(keys) and isinstance(refused, dict):
            code, message = refused.get("code"), refused.get("message")
            outcome[keys[int(index)]] = (None, f"{str(code)[:20]} {str(message)[:500]}")
    return outcome


# --- keys, groups, collections --------------------------------------------------------------


def write_access(info: object) -> dict[str, bool]:
    """From GET /keys/current: the groups the key may write to, by id ("all": every group)."""
    if not isinstance(info, dict):
        raise ZoteroJunk(f"GET /keys/current: the answer is {fields.kind(info)}, not an object")
    access = info.get("access")
    if access is None:
        return {}
    if not isinstance(access, dict):
        raise ZoteroJunk(f"GET /keys/current: access is {fields.kind(access)}, not an object")
    groups = access.get("groups")
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise ZoteroJunk(f"GET /keys/current: access.groups is {fields.kind(groups)}, not an object")
    return {str(group): isinstance(rights, dict) and rights.get("write") is True for group, rights in groups.items()}


def group_name(obj: object, group_id: int) -> str:
    """A group's name from GET /groups/ID (its number when it has none)."""
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, dict):
        raise ZoteroJunk(f"GET /groups/{group_id}: the answer has no data object")
    try:
        name = fields.text(data, "name", 300)
    except Junk as problem:
        raise ZoteroJunk(f"GET /groups/{group_id}: {problem}") from None
    return name or str(group_id)


def is_key(text: str) -> bool:
    """Whether `text` is spelled as a Zotero object key (8 capitals and digits)."""
    return bool(_KEY.fullmatch(text))


def collections(rows: list[object]) -> list[tuple[str, str]]:
    """(key, name) of each collection; one that cannot be read is left out."""
    found = []
    for row in rows:
        data = row.get("data") if isinstance(row, dict) else None
        key, name = (row.get("key"), data.get("name")) if isinstance(row, dict) and isinstance(data, dict) \
            else (None, None)
        if isinstance(key, str) and _KEY.fullmatch(key) and isinstance(name, str) and len(name) <= TEXT_MAX:
            found.append((key, name))
    return found


# --- fields ---------------------------------------------------------------------------------


def _which(obj: object, place: int) -> str:
    key = obj.get("key") if isinstance(obj, dict) else None
    if isinstance(key, (str, int)) and not isinstance(key, bool) and len(str(key)) <= 20:
        return str(key)
    return f"number {place} of the page"

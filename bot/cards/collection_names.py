"""How members read a collection's name. Collections made by the bot have names an
operator can type (`use follow-2-arxiv-cs.LG`, `search in:added-slack-T0123`) but a member
should not have to decipher: "added-slack-T0123" reads "added in chat",
"follow-2-arxiv-cs.LG" reads "followed: cs.LG (Machine Learning)". Stored names stay as
they are; only what is shown changes. An operator's own names (`iclr2021`) read as given.

The shapes are the ones bot.channels.added_collection and the follows feature's
collection_name make, and "filled:openalex", what the enrichment filled in."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from store.models import FILLED_PREFIX

_PROVIDERS = {"openalex": "OpenAlex"}
_ADDED = re.compile(r"^added-[a-z0-9]+-.+$")
# follow-<channel>-<kind>[-<target>][-<8 hex digits of the query's digest>]
_FOLLOW = re.compile(r"^follow-\d+-(?P<kind>arxiv|author|citations)(?:-(?P<target>.+?))?(?P<query>-[0-9a-f]{8})?$")


@cache
def arxiv_categories() -> dict[str, str]:
    """arXiv's category taxonomy, id -> name (arxiv_categories.json beside this module)."""
    text = resources.files("bot.cards").joinpath("arxiv_categories.json").read_text(encoding="utf-8")
    return {row["id"]: row["name"] for row in json.loads(text)}


def collection_label(name: str) -> str:
    """The collection as a member reads it (its own name where it is no internal one)."""
    if _ADDED.match(name):
        return "added in chat"
    if name.startswith(FILLED_PREFIX):  # what the enrichment filled in (bot/enrich)
        provider = name.removeprefix(FILLED_PREFIX)
        return f"filled in from {_PROVIDERS.get(provider, provider)}"
    found = _FOLLOW.match(name)
    if found is None:
        return name
    kind, target = found["kind"], found["target"] or ""
    if kind == "arxiv":
        named = arxiv_categories().get(target)
        label = f"followed: {target} ({named})" if named else f"followed: arXiv {target}"
    elif kind == "author":
        label = f"followed: author {target}" if target else "followed: an author"
    else:
        label = "followed: citations" + (f" of {target}" if target else "")
    return label + (", with words" if found["query"] else "")


def collection_shown(name: str) -> str:
    """"added in chat (`added`)", "followed: cs.LG (Machine Learning) (`follow-2-arxiv-cs.LG`)":
    the label, and the name to type where the two differ; an operator's own name alone."""
    label = collection_label(name)
    if label == name:
        return name
    return f"{label} (`{'added' if _ADDED.match(name) else name}`)"

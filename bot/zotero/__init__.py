"""A channel's papers, votes and notes written to a Zotero group library, and group collections imported."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.zotero.commands import ZoteroFeature

    return ZoteroFeature


PLUGIN = Plugin("zotero", _feature)

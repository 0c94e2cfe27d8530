"""Looking things up: search, show, similar, and a channel's settings in one place."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.lookup.commands import LookupFeature

    return LookupFeature


PLUGIN = Plugin("lookup", _feature)

"""Briefs from the group's own language model (`brief N`), off unless an endpoint is configured."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.briefs.commands import BriefsFeature

    return BriefsFeature


PLUGIN = Plugin("briefs", _feature)

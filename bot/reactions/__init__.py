"""Reactions that vote: the emoji on a post count as votes, and `reactions` chooses them."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.reactions.commands import ReactionsFeature

    return ReactionsFeature


PLUGIN = Plugin("reactions", _feature)

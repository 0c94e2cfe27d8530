"""Votes on posts, polls for what to read next and the reading queue, with their chat commands."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.votes.commands import VotesFeature

    return VotesFeature


PLUGIN = Plugin("votes", _feature)

"""The paper of the day: a channel's schedule, topics and collections, today, next and history."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.daily.commands import DailyFeature

    return DailyFeature


PLUGIN = Plugin("daily", _feature)

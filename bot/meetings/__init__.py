"""Weekly meetings: the sessions, the presenter rota, notes and reminders, with their chat commands."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.meetings.commands import MeetingsFeature

    return MeetingsFeature


PLUGIN = Plugin("meetings", _feature)

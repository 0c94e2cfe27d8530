"""The group's memory outside the chat: the archive page, the calendar feed, exports."""

from __future__ import annotations

from bot.feature import Feature, PageRoute, Plugin
from bot.memory.cli import add_commands
from bot.services.routes import ARCHIVE_PREFIX, CALENDAR_PREFIX


def _feature() -> type[Feature]:
    from bot.memory.commands import MemoryFeature

    return MemoryFeature


PLUGIN = Plugin(
    "memory", _feature,
    routes=(PageRoute(ARCHIVE_PREFIX, ARCHIVE_PREFIX + "TOKEN[.bib]",
                  "a channel's archive page (or its papers as .bib, .ris, .json)"),
            PageRoute(CALENDAR_PREFIX, CALENDAR_PREFIX + "TOKEN.ics", "a channel's meetings as a calendar feed")),
    cli=add_commands,
)

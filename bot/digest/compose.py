"""A digest as one message: the features' sections in their order, each cut to a few
lines, and a quiet week as one line.

The bounds here keep a digest readable; the adapters keep any message within its
platform's limits (Slack's 50 blocks and 3,000-character sections, Discord's 10 embeds
and 6,000 characters), so a digest is one post on every platform.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TypedDict
from zoneinfo import ZoneInfo

from bot.feature import DigestSection
from bot.messages import Reply, Section

LINES_SHOWN = 10  # a section's items; the rest are counted
LINE_CHARS = 300
TITLE_CHARS = 100
SECTIONS_SHOWN = 8  # Discord shows each as an embed, cards included, ten at most
CARDS_SHOWN = 2


class KeptSection(TypedDict):
    title: str
    lines: list[str]
    papers: list[int]  # the numbers its lines name


class DigestBody(TypedDict):
    """What the digests table keeps of a posted digest (Digest.body), for the archive page."""

    text: str
    sections: list[KeptSection]


def digest_reply(sections: list[DigestSection], since: datetime, until: datetime, zone: str,
                 links: Mapping[int, tuple[str, str]] | None = None) -> Reply:
    """The week's digest, or the quiet week's one line when no section has news.
    `links`: paper number -> (its title as the lines write it, its link), for the papers
    the sections name; a platform links each title where a line shows it."""
    if not any(s.news for s in sections):
        return Reply(text=quiet_line(since, zone))
    shown = sections[:SECTIONS_SHOWN]
    return Reply(
        text=heading(since, until, zone),
        sections=[Section(_cut(s.title, TITLE_CHARS), _lines(s.lines), _links(s, links or {})) for s in shown],
        cards=[card for s in shown for card in s.cards][:CARDS_SHOWN],
    )


def heading(since: datetime, until: datetime, zone: str) -> str:
    tz = ZoneInfo(zone)
    start, end = since.astimezone(tz), until.astimezone(tz)
    return f"Weekly digest: the week from {start:%a %d %b} to {end:%a %d %b %H:%M} {zone}"


def quiet_line(since: datetime, zone: str) -> str:
    return f"Quiet week: nothing new here since {since.astimezone(ZoneInfo(zone)):%a %d %b}."


def body(reply: Reply, sections: list[DigestSection]) -> DigestBody:
    """What the digests table keeps of a posted digest, for the archive page: the
    sections shown (the first of `sections`; none for a quiet week)."""
    return {
        "text": reply.text,
        "sections": [{"title": shown.title, "lines": shown.lines, "papers": list(source.papers)}
                     for shown, source in zip(reply.sections, sections, strict=False)],
    }


def _links(section: DigestSection, links: Mapping[int, tuple[str, str]]) -> dict[str, str]:
    """The section's papers' titles -> links, for those its lines name as "[N] Title"."""
    named = "\n".join(section.lines)
    return {title: url for n in section.papers if n in links
            for title, url in [links[n]] if f"[{n}] {title}" in named}


def _lines(lines: list[str]) -> list[str]:
    kept = [_cut(line, LINE_CHARS) for line in lines[:LINES_SHOWN]]
    if len(lines) > LINES_SHOWN:
        kept.append(f"…and {len(lines) - LINES_SHOWN} more")
    return kept


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

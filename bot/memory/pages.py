"""What the public URL answers: /calendar/TOKEN.ics, /archive/TOKEN and
/archive/TOKEN.bib, as (status, headers, body) for the adapter to send. A wrong, revoked
or malformed token is a plain 404, the same as any unknown path."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from bot.channels.channels import Channels, ChannelSettings
from bot.feature import Features
from bot.memory.archive import ArchivePage
from bot.memory.calendar import CalendarFeed
from bot.memory.export import bibtex
from bot.memory.links import ChannelLinks
from bot.memory.record import Recorder
from bot.messages import ChannelRef

CALENDAR_PREFIX = "/calendar/"
ARCHIVE_PREFIX = "/archive/"
PREFIXES = (CALENDAR_PREFIX, ARCHIVE_PREFIX)
_CALENDAR = re.compile(r"/calendar/([^/]+)\.ics")
_ARCHIVE = re.compile(r"/archive/([^/.]+)(\.bib)?")
# Private pages: no shared cache keeps them, no search engine lists them, no referrer
# carries the token to the sites a page links to.
PRIVATE = [("Cache-Control", "private"), ("X-Robots-Tag", "noindex, nofollow"),
           ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff")]
# Nothing may load or run: the page's one stylesheet is allowed by its nonce, images
# only as data: (none today: the picture is inline SVG), forms submit to the page itself.
PAGE_POLICY = ("default-src 'none'; style-src 'nonce-{nonce}'; img-src data:; form-action 'self'; "
               "base-uri 'none'; frame-ancestors 'none'")
FILE_POLICY = "default-src 'none'; sandbox"


@dataclass
class Page:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


NOT_FOUND = Page(404)  # the adapter answers it as every other 404


Sections = Callable[[ChannelSettings], list[tuple[str, list[str]]]]  # what other features add to the archive


class Pages:
    def __init__(self, links: ChannelLinks, channels: Channels, recorder: Recorder, feed: CalendarFeed,
                 archive: ArchivePage, clock: Callable[[], datetime], sections: Sections = lambda _channel: []):
        self.sections = sections
        self.links = links
        self.channels = channels
        self.recorder = recorder
        self.feed = feed
        self.archive = archive
        self.clock = clock

    def answer(self, path: str, query: dict[str, str]) -> Page:
        if calendar := _CALENDAR.fullmatch(path):
            return self._calendar(calendar.group(1))
        if archive := _ARCHIVE.fullmatch(path):
            token, bib = archive.groups()
            return self._bibtex(token) if bib else self._archive(token, query.get("q", ""))
        return NOT_FOUND

    def _channel(self, kind: str, token: str):
        channel_id = self.links.channel_of(kind, token)
        return self.channels.by_ids([channel_id]).get(channel_id) if channel_id is not None else None

    def _calendar(self, token: str) -> Page:
        channel = self._channel("calendar", token)
        if channel is None:
            return NOT_FOUND
        body = self.feed.ics(channel, f"Reading group · {display_name(channel.ref)}", self.clock())
        return _page("text/calendar; charset=utf-8", body, FILE_POLICY,
                     [("Content-Disposition", f'inline; filename="{_file_name(channel.ref)}.ics"')])

    def _archive(self, token: str, query: str) -> Page:
        channel = self._channel("archive", token)
        if channel is None:
            return NOT_FOUND
        nonce = secrets.token_urlsafe(16)
        html = self.archive.render(self.recorder.record(channel), display_name(channel.ref), query,
                                   f"{token}.bib", nonce, self.clock(), self.sections(channel))
        return _page("text/html; charset=utf-8", html.encode(), PAGE_POLICY.format(nonce=nonce))

    def _bibtex(self, token: str) -> Page:
        channel = self._channel("archive", token)
        if channel is None:
            return NOT_FOUND
        text = bibtex(self.recorder.record(channel).read(), channel.ref)
        return _page("application/x-bibtex; charset=utf-8", text.encode(), FILE_POLICY,
                     [("Content-Disposition", f'attachment; filename="{_file_name(channel.ref)}.bib"')])


def display_name(ref: ChannelRef) -> str:
    return f"#{ref.channel} ({ref.platform})"


def _file_name(ref: ChannelRef) -> str:
    return "paperclub-" + (re.sub(r"[^A-Za-z0-9_-]", "", ref.channel)[:60] or "channel")


def _page(content_type: str, body: bytes, policy: str, extra: list[tuple[str, str]] | None = None) -> Page:
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body))),
               ("Content-Security-Policy", policy), *PRIVATE, *(extra or [])]
    return Page(200, headers, body)


def build_pages(library, channels: Channels, meetings, votes, tokenizer, clock: Callable[[], datetime],
                features: Features | None = None) -> Pages:
    """The pages over the services a process already has (bot.app.Services); the archive
    shows the sections `features` add (Feature.archive_sections)."""
    db = meetings.db
    return Pages(ChannelLinks(db), channels, Recorder(db, library, votes), CalendarFeed(meetings, library),
                 ArchivePage(tokenizer), clock, features.archive_sections if features is not None else lambda _channel: [])

"""What the public URL answers: /calendar/TOKEN.ics, /archive/TOKEN and the channel's
papers for reference managers, /archive/TOKEN.bib, .ris and .json (CSL-JSON), as (status,
headers, body) for the adapter to send. A wrong, revoked or malformed token is a plain
404, the same as any unknown path."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.channels.channels import Channels, ChannelSettings
from bot.corpus.library import Library
from bot.feature import NOT_FOUND, Features, Page
from bot.memory.archive import ArchivePage
from bot.memory.calendar import CalendarFeed
from bot.memory.citations import csl_json, ris
from bot.memory.export import bibtex
from bot.memory.record import MeetingEntry, Recorder, entry_of
from bot.messages import ChannelRef
from bot.search.tokens import Tokenizer
from bot.services.links import ChannelLinks
from bot.services.meetings import Meetings, length_text
from bot.services.votes import Votes

UPCOMING_SHOWN = 4  # the archive's next meetings; the calendar feed has twelve weeks
_CALENDAR = re.compile(r"/calendar/([^/]+)\.ics")
_ARCHIVE = re.compile(r"/archive/([^/.]+)(\.bib|\.ris|\.json)?")
# The archive's downloads: suffix -> (writer, content type). RIS has no registered type;
# application/x-research-info-systems is what publishers send and Zotero recognises.
DOWNLOADS = {
    ".bib": (bibtex, "application/x-bibtex; charset=utf-8"),
    ".ris": (ris, "application/x-research-info-systems; charset=utf-8"),
    ".json": (csl_json, "application/vnd.citationstyles.csl+json; charset=utf-8"),
}
# Private pages: no shared cache keeps them, no search engine lists them, no referrer
# carries the token to the sites a page links to.
PRIVATE = [("Cache-Control", "private"), ("X-Robots-Tag", "noindex, nofollow"),
           ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff")]
# Nothing may load or run: the page's one stylesheet is allowed by its nonce, images
# only as data: (none today: the picture is inline SVG), forms submit to the page itself.
PAGE_POLICY = ("default-src 'none'; style-src 'nonce-{nonce}'; img-src data:; form-action 'self'; "
               "base-uri 'none'; frame-ancestors 'none'")
FILE_POLICY = "default-src 'none'; sandbox"


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
            token, suffix = archive.groups()
            return self._download(token, suffix) if suffix else self._archive(token, query.get("q", ""))
        return NOT_FOUND

    def _channel(self, kind: str, token: str) -> ChannelSettings | None:
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
        now = self.clock()
        html = self.archive.render(self.recorder.record(channel), display_name(channel.ref), query,
                                   token, nonce, now, self._upcoming(channel, now),
                                   self.sections(channel))
        return _page("text/html; charset=utf-8", html.encode(), PAGE_POLICY.format(nonce=nonce))

    def _upcoming(self, channel: ChannelSettings, now: datetime) -> list[MeetingEntry]:
        """The next meetings as the calendar feed has them (the plan as it is now, skips
        left out), with their paper once one is assigned."""
        slots = [s for s in self.feed.slots(channel.id, now) if s.start > now][:UPCOMING_SHOWN]
        papers = self.feed.library.get_many(s.paper_id for s in slots if s.paper_id)
        return [MeetingEntry(s.day, s.start, entry_of(papers[s.paper_id]) if s.paper_id in papers else None,
                             s.presenter, s.start.astimezone(ZoneInfo(s.zone)),
                             length_text(int(s.length.total_seconds() // 60)), s.place, s.link)
                for s in slots]

    def _download(self, token: str, suffix: str) -> Page:
        """What the channel read, as BibTeX, RIS or CSL-JSON: the same token as the page."""
        channel = self._channel("archive", token)
        if channel is None:
            return NOT_FOUND
        writer, content_type = DOWNLOADS[suffix]
        text = writer(self.recorder.record(channel).read(), channel.ref)
        return _page(content_type, text.encode(), FILE_POLICY,
                     [("Content-Disposition", f'attachment; filename="{_file_name(channel.ref)}{suffix}"')])


def display_name(ref: ChannelRef) -> str:
    return f"#{ref.channel} ({ref.platform})"


def _file_name(ref: ChannelRef) -> str:
    return "paperclub-" + (re.sub(r"[^A-Za-z0-9_-]", "", ref.channel)[:60] or "channel")


def _page(content_type: str, body: bytes, policy: str, extra: list[tuple[str, str]] | None = None) -> Page:
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body))),
               ("Content-Security-Policy", policy), *PRIVATE, *(extra or [])]
    return Page(200, headers, body)


def build_pages(library: Library, channels: Channels, meetings: Meetings, votes: Votes, tokenizer: Tokenizer,
                clock: Callable[[], datetime], features: Features | None = None) -> Pages:
    """The pages over the services a process already has (bot.app.Services); the archive
    shows the sections `features` add (Feature.archive_sections)."""
    db = meetings.db
    sections: Sections = features.archive_sections if features is not None else lambda _channel: []
    return Pages(ChannelLinks(db), channels, Recorder(db, library, votes), CalendarFeed(meetings, library),
                 ArchivePage(tokenizer), clock, sections)

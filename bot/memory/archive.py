"""The channel's archive page: server-side HTML from a Jinja2 template (autoescaping on,
so a title with <script> shows as text), no JavaScript, one inline SVG, a search box
over what the channel has seen (GET ?q=)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from jinja2 import Environment, PackageLoader, select_autoescape

from bot.memory.chart import votes_chart
from bot.memory.record import ChannelRecord, Entry, MeetingEntry, matches
from bot.messages import counted
from bot.search.tokens import Tokenizer

QUERY_CHARS = 200
RESULTS_SHOWN = 50


class ArchivePage:
    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        self.templates = Environment(
            loader=PackageLoader("bot.memory", "templates"),
            autoescape=select_autoescape(["html"], default=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters["counted"] = counted  # "1 meeting", "2 meetings"

    def render(self, record: ChannelRecord, name: str, query: str, token: str, nonce: str,
               now: datetime, upcoming: Sequence[MeetingEntry] = (),
               sections: Sequence[tuple[str, list[str]]] = ()) -> str:
        """The page; `token` names its downloads (TOKEN.bib, .ris, .json), relative links.
        Meetings to come (`upcoming`, from the plan) are listed apart from those held;
        `sections`: what features add (the follows)."""
        query = " ".join(query.split())[:QUERY_CHARS]
        results, problem = self.search(record, query) if query else ([], "")
        past = [m for m in record.meetings if m.starts_at <= now]
        return self.templates.get_template("archive.html").render(
            record=record, name=name, query=query, results=results, problem=problem, token=token,
            nonce=nonce, chart=votes_chart(record.weekly_votes), now=now, upcoming=list(upcoming), past=past,
            sections=sections,
        )

    def search(self, record: ChannelRecord, query: str) -> tuple[list[Entry], str]:
        """Papers the channel has seen (posted, queued, noted, met about, polled) that
        hold every word of the query, stemmed as search stems."""
        terms = set(self.tokenizer.tokens(query))
        if not terms:
            return [], "Those are all words too common to search for: try more specific ones."
        seen: dict[int, Entry] = {}
        for entry in [*record.read(), *record.queue]:
            seen.setdefault(entry.paper_id, entry)
        found = [e for e in seen.values() if matches(e, terms, self.tokenizer)]
        return found[:RESULTS_SHOWN], ""

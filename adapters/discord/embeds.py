"""A core `Reply` as Discord messages: text, one embed per paper card, buttons.

Discord's limits shape everything here: 2,000 characters of text a message (longer
text becomes several messages), embeds of 256-character titles and 1,024-character
fields, at most 10 embeds and 6,000 characters of embeds a message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord.views import actions_view
from bot.messages import PaperCard, Reply

CONTENT_MAX = 2000
TITLE_MAX = 256
AUTHOR_MAX = 256
DESCRIPTION_MAX = 4096
FIELD_MAX = 1024
EMBEDS_TOTAL_MAX = 6000
THREAD_NAME_MAX = 100
FULL_CARDS_MAX = 5  # more cards than this (a 10-option poll) are shown without snippets
NOTES_SHOWN = 3
NOTE_CHARS = 300
# The core names members "@" + their platform id; on Discord that id is a snowflake,
# and <@id> shows the member's name (the client never pings: no allowed mentions).
CORE_MENTION = re.compile(r"(?<![<\w])@(\d{15,21})\b")


@dataclass
class Outgoing:
    """One Discord message: the keyword arguments of send() and edit()."""

    content: str = ""
    embeds: list[discord.Embed] = field(default_factory=list)
    view: discord.ui.View | None = None

    def kwargs(self) -> dict[str, Any]:
        arguments: dict[str, Any] = {"embeds": self.embeds}
        if self.content:
            arguments["content"] = self.content
        if self.view is not None:
            arguments["view"] = self.view
        return arguments


def outgoing(reply: Reply) -> list[Outgoing]:
    """The messages for `reply`; the last one carries the cards and the buttons, so it is
    the message a thread opens from and votes update."""
    chunks = split_text(mention(reply.text)) or [""]
    messages = [Outgoing(content=chunk) for chunk in chunks]
    compact = len(reply.cards) > FULL_CARDS_MAX
    messages[-1].embeds = fit([card_embed(c, compact) for c in reply.cards])
    messages[-1].view = actions_view(reply.actions)
    return messages


def thread_name(reply: Reply) -> str:
    """The reply's own thread name, else its first line (a poll result opening a thread)."""
    name = reply.open_thread or reply.text.strip().split("\n")[0] or "Discussion"
    return cut(name, THREAD_NAME_MAX)


def card_embed(card: PaperCard, compact: bool = False) -> discord.Embed:
    embed = discord.Embed(
        title=cut(f"[{card.paper_id}] {card.title}", TITLE_MAX),
        url=web_url(card.url),
        description=None if compact or not card.snippet else cut(card.snippet, DESCRIPTION_MAX),
    )
    if card.authors_display:
        embed.set_author(name=cut(card.authors_display, AUTHOR_MAX))
    for name, value, inline in (
        ("Collection", card.venue, True),
        ("Matched", ", ".join(card.matched_terms), True),
        ("Tags", ", ".join(card.tags), True),
        ("Why", card.reason, False),
    ):
        if value:
            embed.add_field(name=name, value=cut(value, FIELD_MAX), inline=inline)
    for note in card.notes[:NOTES_SHOWN]:
        embed.add_field(name="Note", value=cut(note, NOTE_CHARS), inline=False)
    if len(card.notes) > NOTES_SHOWN:
        embed.add_field(name="More notes", value=f"+{len(card.notes) - NOTES_SHOWN} (`show {card.paper_id}`)")
    if card.discussion:
        embed.add_field(name="Discussion", value=cut(mention("\n".join(card.discussion)), FIELD_MAX), inline=False)
    if card.score is not None:
        embed.set_footer(text=f"BM25 score {card.score:.2f}")
    return embed


def fit(embeds: list[discord.Embed]) -> list[discord.Embed]:
    """Shorten the longest descriptions until the message's embeds fit Discord's total."""
    overflow = sum(len(e) for e in embeds) - EMBEDS_TOTAL_MAX
    for embed in sorted(embeds, key=lambda e: len(e.description or ""), reverse=True):
        if overflow <= 0:
            break
        text = embed.description or ""
        embed.description = cut(text, max(len(text) - overflow, 0)) or None
        overflow -= len(text) - len(embed.description or "")
    return embeds


def split_text(text: str, limit: int = CONTENT_MAX) -> list[str]:
    """Text in chunks of at most `limit` characters, split between lines where possible."""
    chunks: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:  # one line longer than a message: cut it
            if current:
                chunks.append(current)
                current = ""
            chunks.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            chunks.append(current)
            candidate = line
        current = candidate
    if current.strip():
        chunks.append(current)
    return chunks


def mention(text: str) -> str:
    return CORE_MENTION.sub(r"<@\1>", text)


def web_url(url: str | None) -> str | None:
    """Discord rejects an embed whose url is not http(s); such a link is left out."""
    return url if url and url.startswith(("https://", "http://")) else None


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit > 0 else ""

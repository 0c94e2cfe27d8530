"""A core `Reply` as Discord messages: text, one embed per paper card, buttons.

Discord refuses a whole message past any of its limits (400, code 50035), so everything
is cut to them here: 2,000 characters of text a message (longer text becomes several
messages); embed titles and author lines of 256, descriptions of 4,096, 25 fields of
256 (name) and 1,024 (value), footers of 2,048; at most 10 embeds a message, and 6,000
characters over all of them. Past that total the least important parts give way first
(TRIMS); the buttons are components, outside the total, and always stay. A reply's titled
sections (a weekly digest's parts) are embeds of their own before the cards, shortened
by whole lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord.views import actions_view
from bot.cards.latex import readable
from bot.cards.links import web_link
from bot.messages import PaperCard, Reply, Section

CONTENT_MAX = 2000
TITLE_MAX = 256
AUTHOR_MAX = 256
DESCRIPTION_MAX = 4096
FIELDS_MAX = 25
FIELD_MAX = 1024  # a field's value; the names are ours, a few characters each
FOOTER_MAX = 2048
EMBEDS_MAX = 10
EMBEDS_TOTAL_MAX = 6000
THREAD_NAME_MAX = 100
FULL_CARDS_MAX = 5  # more cards than this (a 10-option poll) are shown without snippets
NOTES_SHOWN = 3
NOTE_CHARS = 300
ABOUT_MAX = 1000  # the lines features add to a card (a TL;DR), all together
# What gives way when a message's embeds exceed 6,000 characters, least important first:
# (part, the length it may be cut down to). A part is an Embed attribute or the name of a
# field; "footer" is "title match" where the title matched. Each step cuts that part of every
# embed to one common length, just short enough to fit, so the cards of a poll stay alike.
# The title (with the paper's id and a poll's option), why it was picked and who wrote it go last, and
# never entirely.
TRIMS: tuple[tuple[str, int], ...] = (
    ("Sources", 0),
    ("footer", 0),
    ("Tags", 0),
    ("More notes", 0),
    ("Note", 0),
    ("Matched", 100),
    ("Discussion", 200),
    ("description", 0),  # the snippet or most of the abstract
    ("Matched", 0),
    ("Discussion", 0),
    ("Venue", 60),
    ("author", 60),
    ("Why", 100),
    ("title", 60),
)
STUB_CHARS = 16  # a part cut shorter than this says nothing: it goes entirely
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


@dataclass
class Field:
    name: str
    value: str
    inline: bool = True


@dataclass
class CardEmbed:
    """One card's embed as plain text, measured and trimmed before it becomes a
    discord.Embed."""

    title: str
    url: str | None = None
    description: str = ""
    author: str = ""
    fields: list[Field] = field(default_factory=list)
    footer: str = ""
    by_lines: bool = False  # the description is lines (a section's): shortened line by line

    def size(self) -> int:
        """What Discord counts toward a message's 6,000 characters."""
        fields = sum(len(f.name) + len(f.value) for f in self.fields if f.value)
        return len(self.title) + len(self.description) + len(self.author) + len(self.footer) + fields

    def texts(self, part: str) -> list[tuple[Any, str]]:
        """(holder, attribute) of each text that `part` names in this embed."""
        if part in ("title", "description", "author", "footer"):
            return [(self, part)]
        return [(f, "value") for f in self.fields if f.name == part]

    def embed(self) -> discord.Embed:
        embed = discord.Embed(title=self.title, url=self.url, description=self.description or None)
        if self.author:
            embed.set_author(name=self.author)
        for f in self.fields:
            if f.value:  # a field cut to nothing goes (Discord refuses an empty value)
                embed.add_field(name=f.name, value=f.value, inline=f.inline)
        if self.footer:
            embed.set_footer(text=self.footer)
        return embed


def outgoing(reply: Reply) -> list[Outgoing]:
    """The messages for `reply`; the last one carries the cards and the buttons, so it is
    the message a thread opens from and votes update."""
    chunks = split_text(mention(reply.text)) or [""]
    messages = [Outgoing(content=chunk) for chunk in chunks]
    compact = len(reply.cards) > FULL_CARDS_MAX
    parts = [section_embed(s) for s in reply.sections[:EMBEDS_MAX]]
    # The last message holds the sections and as many of the last cards as fit beside them.
    split = len(reply.cards) - min(EMBEDS_MAX - len(parts), len(reply.cards))
    groups = [reply.cards[i:min(i + EMBEDS_MAX, split)] for i in range(0, split, EMBEDS_MAX)] + [reply.cards[split:]]
    # More cards than one message holds: the first ones go in messages of their own.
    messages[-1:-1] = [Outgoing(embeds=embeds(group, compact)) for group in groups[:-1]]
    messages[-1].embeds = [e.embed() for e in fit(parts + [card_embed(c, compact) for c in groups[-1]])]
    messages[-1].view = actions_view(reply.actions)
    return messages


def embeds(cards: list[PaperCard], compact: bool = False) -> list[discord.Embed]:
    """The embeds of one message, inside Discord's limits."""
    return [e.embed() for e in fit([card_embed(c, compact) for c in cards])]


def thread_name(reply: Reply) -> str:
    """The reply's own thread name, else its first line (a poll result opening a thread)."""
    name = reply.open_thread or reply.text.strip().split("\n")[0] or "Discussion"
    return cut(name, THREAD_NAME_MAX)


def section_embed(section: Section) -> CardEmbed:
    """A titled section of a reply (a digest's part): its lines as the description,
    shortened by whole lines when the message's total is exceeded."""
    lines = [_linked_line(line, section.links) for line in section.lines]
    return CardEmbed(title=cut(section.title, TITLE_MAX),
                     description=_whole_lines(mention("\n".join(lines)), DESCRIPTION_MAX),
                     by_lines=True)


def _linked_line(line: str, links: dict[str, str]) -> str:
    """A section's line with the first paper title it names as a masked link, "[Title](url)",
    where neither can break the link's markdown (a bracket in the title, a parenthesis or
    space in the link)."""
    for title, url in links.items():
        if title and title in line and url.startswith(("https://", "http://")):
            if re.search(r"[\[\]]", title) or re.search(r"[\s()<>]", url):
                return line
            return line.replace(title, f"[{title}]({url})", 1)
    return line


def card_embed(card: PaperCard, compact: bool = False) -> CardEmbed:
    """A card's embed, each part within its own limit."""
    fields = [Field(name, cut(value, FIELD_MAX), inline) for name, value, inline in (
        ("Venue", card.venue, True),
        ("Added", card.added_by, True),
        ("Matched", ", ".join(card.matched_terms), True),
        ("Tags", ", ".join(card.tags), True),
        ("Why", card.reason, False),
    ) if value]
    fields += [Field("Note", cut(note, NOTE_CHARS), False) for note in card.notes[:NOTES_SHOWN]]
    if len(card.notes) > NOTES_SHOWN:
        fields.append(Field("More notes", f"+{len(card.notes) - NOTES_SHOWN} (`show {card.paper_id}`)"))
    if card.discussion:
        # Member notes are set on the card after the core made it: their LaTeX is read here.
        discussion = "\n".join(readable(note) for note in card.discussion)
        fields.append(Field("Discussion", cut(mention(discussion), FIELD_MAX), False))
    if card.sources:
        fields.append(Field("Sources", cut("\n".join(card.sources), FIELD_MAX), False))
    return CardEmbed(
        title=cut(f"{card.option}: " * bool(card.option) + f"[{card.paper_id}] {card.title}", TITLE_MAX),
        url=web_link(card.url),  # the core checked it already; a card made elsewhere may not be
        description=_description(card, compact),
        author=cut(card.authors_display, AUTHOR_MAX),
        fields=fields[:FIELDS_MAX],
        footer=cut(score_line(card), FOOTER_MAX),
    )


def _description(card: PaperCard, compact: bool) -> str:
    """The lines features add (a TL;DR) above the snippet: what a trim cuts last of it.
    A compact card (one of many) keeps them and drops the snippet."""
    about = cut("\n".join(" ".join(line.split()) for line in card.about), ABOUT_MAX)
    snippet = "" if compact else card.snippet
    return cut("\n\n".join(part for part in (about, snippet) if part), DESCRIPTION_MAX)


def score_line(card: PaperCard) -> str:
    """"title match" where the title matched (it is ranked above higher scores, and says
    so); a raw BM25 score means nothing to a member and is left to the operator's
    `paperclub search`."""
    return "title match" if card.title_match else ""


def fit(cards: list[CardEmbed], total: int = EMBEDS_TOTAL_MAX) -> list[CardEmbed]:
    """Trim the embeds of one message until they fit `total`, step by step (TRIMS)."""
    for part, floor in TRIMS:
        overflow = sum(c.size() for c in cards) - total
        if overflow <= 0:
            break
        texts = [text for c in cards for text in c.texts(part)]
        cap = _level([len(getattr(h, a)) for h, a in texts], overflow, floor)
        for holder, attribute in texts:
            lines = getattr(holder, "by_lines", False) and attribute == "description"
            setattr(holder, attribute, (_whole_lines if lines else _shortened)(getattr(holder, attribute), cap))
    return cards


def _level(lengths: list[int], overflow: int, floor: int) -> int:
    """The longest length to cut every text down to that saves `overflow` characters,
    but not below `floor` (then the next step saves the rest)."""
    low, high = floor, max(lengths, default=floor)
    while low < high:  # the largest cap whose savings still reach the overflow
        middle = (low + high + 1) // 2
        if sum(max(0, n - middle) for n in lengths) >= overflow:
            low = middle
        else:
            high = middle - 1
    return low


def _shortened(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    return cut(text, cap) if cap >= STUB_CHARS else ""


def _whole_lines(text: str, cap: int) -> str:
    """The first lines of `text` that fit `cap` characters with a last "…" line; one line
    longer than that is cut."""
    if len(text) <= cap:
        return text
    kept = ""
    for line in text.split("\n"):
        candidate = f"{kept}\n{line}" if kept else line
        if len(candidate) + 2 > cap:
            break
        kept = candidate
    return f"{kept}\n…" if kept else cut(text.split("\n")[0], cap)


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


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit > 0 else ""

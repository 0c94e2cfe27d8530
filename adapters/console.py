"""The console adapter: chat commands on stdin, replies on stdout.

It is both a way to try the bot without Slack or Discord and the test harness for the
whole command grammar: `echo "search diffusion" | paperclub console --json`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from bot.cards.latex import readable
from bot.messages import ChannelRef, Incoming, PaperCard, Reply, Section, UserRef

if TYPE_CHECKING:  # `paperclub search` shows cards with render_card, without the bot
    from bot.core import PaperClub

log = logging.getLogger(__name__)

PROMPT = "paperclub> "
APOLOGY = "Sorry, that command failed ({kind}). The console goes on: try another command."
NOTES_SHOWN = 3
NOTE_CHARS = 200


class ConsoleSession:
    """One member in one console channel."""

    def __init__(self, core: PaperClub, channel: str = "general", user: str = "console", manager: bool = False):
        self.core = core
        self.channel = ChannelRef("console", "local", channel)
        self.user = UserRef("console", user, display_name=user, is_manager=manager)

    def send(self, text: str) -> Reply:
        return self.core.handle(Incoming(self.channel, self.user, text))

    def answer(self, text: str) -> Reply:
        """The core's reply, or an apology if it raised: one bad line must not end the
        session, and every line gets its one answer."""
        try:
            return self.send(text)
        except Exception as error:  # the console outlives any one command
            log.debug("a console command raised", exc_info=True)
            return Reply(text=APOLOGY.format(kind=type(error).__name__), ok=False)

    def run(self, lines: Iterable[str], out: TextIO, as_json: bool = False, prompt: bool = False) -> int:
        """Answer every line; returns how many replies were errors (the session goes on).
        Each reply is flushed, so a program driving the console through pipes reads it at once."""
        errors = 0
        if prompt:
            out.write(PROMPT)
            out.flush()
        for line in lines:
            if line.strip().lower() in QUIT_WORDS:  # the console's own words, not the bot's
                break
            if line.strip() and not line.lstrip().startswith("#"):
                reply = self.answer(line.strip())
                errors += not reply.ok
                out.write(render_json(reply) if as_json else render_text(reply))
                out.write("\n")
            if prompt:
                out.write(PROMPT)
            out.flush()
        return errors


QUIT_WORDS = frozenset({"exit", "quit", "/exit", "/quit"})


def render_json(reply: Reply) -> str:
    return json.dumps(reply.to_dict(), ensure_ascii=False)


def render_text(reply: Reply) -> str:
    parts = [reply.text] if reply.text else []
    parts += [render_section(s) for s in reply.sections]
    parts += [render_card(c) for c in reply.cards]
    if reply.actions:
        # No buttons here: each action shows the line to type for it.
        parts.append("  ".join(f"[{a.label}: {a.typed or a.value}]" for a in reply.actions))
    if reply.link_to:
        parts.append(f"(discussion: the thread of message {reply.link_to})")
    return "\n\n".join(parts)


def render_section(section: Section) -> str:
    """The title, then each line with the link of the paper it names after it."""
    return "\n".join([f"== {section.title}", *(f"  {line}" + _link_of(line, section.links) for line in section.lines)])


def _link_of(line: str, links: dict[str, str]) -> str:
    return next((f"  <{url}>" for title, url in links.items() if title and title in line), "")


def render_card(card: PaperCard, operator: bool = False) -> str:
    """A card as text. A member sees no BM25 score and no source lines: they are operator
    detail, for `paperclub search` (`operator`; the sources only when it asked for them)."""
    lines = [f"{card.option}: [{card.paper_id}] {card.title}" if card.option else f"[{card.paper_id}] {card.title}"]
    if card.authors_display:
        lines.append(f"    {card.authors_display}")
    meta = "   ".join(part for part in (card.venue, card.added_by, score_line(card, operator)) if part)
    if meta:
        lines.append(f"    {meta}")
    if card.url:
        lines.append(f"    {card.url}")
    if card.matched_terms:
        lines.append(f"    matched: {', '.join(card.matched_terms)}")
    if card.reason:
        lines.append(f"    why: {card.reason}")
    if card.tags:
        lines.append(f"    tags: {', '.join(card.tags)}")
    lines += [f"    {line}" for line in card.about]  # a TL;DR, above the abstract
    if card.snippet:
        lines.append(f"    {card.snippet}")
    for note in card.notes[:NOTES_SHOWN]:
        lines.append(f"    note: {_shorten(note, NOTE_CHARS)}")
    if len(card.notes) > NOTES_SHOWN:
        lines.append(f"    (+{len(card.notes) - NOTES_SHOWN} more notes)")
    # Member notes are set on the card after the core made it: their LaTeX is read here.
    lines += [f"    - {readable(line)}" for line in card.discussion]
    lines += [f"    source: {source}" for source in card.sources if operator]
    return "\n".join(lines)


def score_line(card: PaperCard, operator: bool = False) -> str:
    """"title match" where the title matched (it is ranked above higher scores, and says so);
    for the operator the BM25 score before it ("score 6.32 · title match"), a number that
    tells a member nothing."""
    parts = [f"score {card.score:.2f}"] if operator and card.score is not None else []
    return " · ".join(parts + (["title match"] if card.title_match else []))


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"



class ConsoleDelivery:
    """Posts for console channels go to a stream (stdout), one block per post."""

    def __init__(self, out: TextIO, as_json: bool = False):
        self.out = out
        self.as_json = as_json
        self.count = 0

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        self.count += 1
        if self.as_json:
            self.out.write(json.dumps({"channel": channel.channel, **reply.to_dict()}, ensure_ascii=False) + "\n")
        else:
            self.out.write(f"#{channel.channel}\n{render_text(reply)}\n\n")
        self.out.flush()
        return f"console:{channel.channel}:{self.count}"

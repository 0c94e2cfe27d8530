"""Block Kit for paperclub replies: the text, paper cards and buttons of a `Reply`.

Slack refuses a whole message when one part breaks a limit, so every part is clipped
here to what Slack accepts: section text 3,000 characters, 50 blocks a message, 25
elements an actions block, button text 75 and value 2,000 characters, action ids unique
within the message. The whole message is bounded too (Slack refuses one past about
12,000 characters of text, `msg_blocks_too_long`, however small each section): the
reply's text first, then cards while they fit whole, then cards without their snippets,
then "…and N more papers" for the rest. A reply's titled sections (a weekly digest's
parts) come between its text and its cards, one block each, with the lines that fit.
Clipping cuts between words, never inside a link, bold or `&amp;`.
Everything a member or a corpus file wrote is escaped (`&`, `<`, `>`), so text such as
`<!channel>` typed into a query is shown, not acted on, and every mrkdwn text object is
`verbatim`, so a plain `@here` or `#channel` in an abstract is not turned into a ping
or a link either (our own links are written out as `<url|title>`, which still work).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from bot.cards.latex import readable, spoken
from bot.messages import Action, PaperCard, Reply, Section

log = logging.getLogger(__name__)

SECTION_CHARS = 3000
MAX_BLOCKS = 50
ACTIONS_PER_BLOCK = 25
CONTEXT_ELEMENTS = 10
BUTTON_TEXT_CHARS = 75
BUTTON_VALUE_CHARS = 2000
ACTION_ID_PREFIX = "paperclub_action_"
TEXT_SECTIONS = 10  # a reply's own text gets at most this many sections
FALLBACK_CHARS = 3000  # the top-level `text`: notifications and clients without blocks
# All the text of a message's blocks (sections, context lines, button labels), with a
# margin under the about 12,000 characters past which Slack refuses the message.
MESSAGE_CHARS = 11_000
TEXT_TOO_LONG = "… (the rest is too long for one message)"

# Budgets for the parts of a card's section; together they stay under SECTION_CHARS.
TITLE_CHARS = 250
URL_CHARS = 500
AUTHORS_CHARS = 300
SNIPPET_CHARS = 1400
ABOUT_CHARS = 700  # the lines features add (a TL;DR), taken from the snippet's budget
REASON_CHARS = 400
NOTE_CHARS = 300
NOTES_SHOWN = 3
CONTEXT_CHARS = 300
SOURCES_CHARS = 600

_WORD_EDGES = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)
_BUTTON_STYLES = {"primary", "danger"}


def message(reply: Reply) -> dict:
    """`text` and `blocks` for chat.postMessage, chat.update, an ack or a response_url."""
    tail = action_blocks(reply.actions)  # the buttons are the point of a post: always whole
    room = MESSAGE_CHARS - text_chars(tail)
    head = text_blocks(reply.text, room // 2 if reply.cards or reply.sections else room)  # the rest follows
    left = room - text_chars(head)
    parts = section_blocks(reply.sections, MAX_BLOCKS - len(head) - len(tail) - (1 if reply.cards else 0),
                           left * 2 // 3 if reply.cards else left)  # cards keep a third
    cards = _cards_that_fit(reply.cards, MAX_BLOCKS - len(head) - len(parts) - len(tail), left - text_chars(parts))
    return {"text": fallback_text(reply), "blocks": head + parts + cards + tail}


def text_chars(blocks: list[dict]) -> int:
    """The characters of text in `blocks`, as Slack counts them toward a message's size."""
    total = 0
    for block in blocks:
        if block["type"] == "section":
            total += len(block["text"]["text"])
        elif block["type"] in ("context", "actions"):
            total += sum(len(e["text"]) if block["type"] == "context" else len(e["text"]["text"])
                         for e in block["elements"])
    return total


def fallback_text(reply: Reply) -> str:
    text = reply.text or "\n".join(card.title for card in reply.cards) or "paperclub"
    if reply.post_id is not None and len(reply.cards) == 1:  # a post's notification names its paper
        text = f"{text.splitlines()[0]}: {reply.cards[0].title}"
    return clip(escape(text), FALLBACK_CHARS)


def escape(text: str) -> str:
    """Slack's three control characters; everything else is shown as typed."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at whitespace and marked with an ellipsis."""
    if len(text) <= limit:
        return text
    pieces = re.split(r"(\s+)", text)
    kept, size = [], 0
    for piece in pieces:
        if size + len(piece) > limit - 1:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept).rstrip() + "…"


# --- the reply's text --------------------------------------------------------------------


def text_blocks(text: str, limit: int = MESSAGE_CHARS) -> list[dict]:
    """The reply's text as sections, split between lines where it is long, at most
    `limit` characters in all."""
    if not text.strip():
        return []
    chunks: list[str] = []
    for line in escape(text).split("\n"):
        line = clip(line, SECTION_CHARS)
        if chunks and len(chunks[-1]) + 1 + len(line) <= SECTION_CHARS:
            chunks[-1] += "\n" + line
        else:
            chunks.append(line)
    chunks = [chunk for chunk in chunks if chunk.strip()]
    kept: list[str] = []
    for position, chunk in enumerate(chunks):
        last = position == len(chunks) - 1
        # Unless this is the last chunk, leave room (and a section) for saying it was cut.
        room = limit - sum(map(len, kept)) - (0 if last else len(TEXT_TOO_LONG))
        if len(chunk) > room or (position == TEXT_SECTIONS - 1 and not last):
            kept.append(TEXT_TOO_LONG)
            break
        kept.append(chunk)
    return [_section(chunk) for chunk in kept]


# --- sections -----------------------------------------------------------------------------


def section_blocks(sections: list[Section], blocks_left: int, chars_left: int) -> list[dict]:
    """One block per section (its title in bold, then its lines), in order: each with
    the lines that fit its 3,000 characters and the message's room, then a line saying
    how many sections were left out when the room runs out."""
    kept: list[dict] = []
    for shown, section in enumerate(sections):
        last = shown == len(sections) - 1
        blocks_room = blocks_left - len(kept) - (0 if last else 1)
        chars_room = chars_left - text_chars(kept) - (0 if last else len(_more_sections(len(sections))))
        text = _section_text(section, min(SECTION_CHARS, chars_room))
        if blocks_room < 1 or text is None:
            return kept + [_context([_more_sections(len(sections) - shown)])] if blocks_left > len(kept) else kept
        kept.append(_section(text))
    return kept


def _section_text(section: Section, limit: int) -> str | None:
    """The title and as many whole lines as fit `limit` characters, the rest counted;
    None when not even the title does."""
    title = f"*{clip(escape(section.title), TITLE_CHARS)}*"
    lines = [_linked_line(line, section.links) for line in section.lines]
    for count in range(len(lines), -1, -1):
        more = [f"_…and {len(lines) - count} more_"] if count < len(lines) else []
        text = "\n".join([title, *lines[:count], *more])
        if len(text) <= limit:
            return text
    return None


def _more_sections(left: int) -> str:
    return f"…and {left} more {'part' if left == 1 else 'parts'} (too long for one Slack message)"


# --- cards --------------------------------------------------------------------------------


def _cards_that_fit(cards: list[PaperCard], blocks_left: int, chars_left: int) -> list[dict]:
    """Whole cards while they fit, then cards without snippet and notes (the least
    needed parts: `show ID` has them), then a line saying how many were left out."""
    kept: list[dict] = []
    short = False
    for shown, card in enumerate(cards):
        last = shown == len(cards) - 1
        # Unless this is the last card, leave room for the line about the ones left out.
        blocks_room = blocks_left - len(kept) - (0 if last else 1)
        chars_room = chars_left - text_chars(kept) - (0 if last else len(_more_note(len(cards))))
        blocks = card_blocks(card, short)
        if len(blocks) > blocks_room or text_chars(blocks) > chars_room:
            short, blocks = True, card_blocks(card, short=True)
        if len(blocks) > blocks_room or text_chars(blocks) > chars_room:
            return kept + [_context([_more_note(len(cards) - shown)])]
        kept.extend(blocks)
    return kept


def _more_note(left: int) -> str:
    return f"…and {left} more {'paper' if left == 1 else 'papers'} (too many for one Slack message)"


def card_blocks(card: PaperCard, short: bool = False) -> list[dict]:
    """A section (linked title, authors, snippet with the matched words in bold, why it
    was picked), a context line (ID, venue, matched terms, tags, title match), then notes and
    sources. `short`: without the snippet, notes and sources, which `show ID` gives."""
    lines = [f"*{escape(card.option)}:* *{_title(card)}*" if card.option else f"*{_title(card)}*"]
    if card.authors_display:
        lines.append(clip(escape(card.authors_display), AUTHORS_CHARS))
    about = _about(card.about)
    if about:  # above the abstract, and kept on a short card: it is what a post with it is for
        lines.append(about)
    if card.snippet and not short:
        lines.append(bold_words(card.snippet, card.matched_terms, SNIPPET_CHARS - len(about)))
    if card.reason:
        lines.append("*Why:* " + clip(escape(card.reason), REASON_CHARS))
    if short and (card.snippet or card.notes or card.discussion or card.sources):
        lines.append(f"_Abstract and notes: `show {card.paper_id}`_")
    blocks = [_section("\n".join(lines)), _context(_card_facts(card))]
    # Member notes are set on the card after the core made it: their LaTeX is read here.
    discussion = [readable(note) for note in card.discussion]
    notes = _quoted(card.notes, "note") + _quoted(discussion, "member note")
    if notes and not short:
        blocks.append(_section(clip("\n".join(notes), SECTION_CHARS)))
    if card.sources and not short:
        blocks.append(_context(["Sources: " + clip(escape("; ".join(card.sources)), SOURCES_CHARS)]))
    return blocks


def _about(about: list[str]) -> str:
    """The lines features add to a card (a TL;DR), escaped, ABOUT_CHARS in all at most."""
    return clip("\n".join(escape(" ".join(line.split())) for line in about), ABOUT_CHARS)


def _title(card: PaperCard) -> str:
    title = clip(escape(card.title), TITLE_CHARS)
    url = card.url or ""
    return f"<{url}|{title}>" if _linkable(url) else title


def _linkable(url: str) -> bool:
    """A link is only made of a URL Slack can parse whole; any other is left out."""
    return url.startswith(("https://", "http://")) and len(url) <= URL_CHARS and not re.search(r"[\s<>|]", url)


def _linked_line(line: str, links: dict[str, str]) -> str:
    """A section's line escaped, the first paper title it names linked ("[12] <url|Title>: ...")."""
    text = clip(escape(line), SECTION_CHARS // 2)
    for title, url in links.items():
        shown = escape(title)
        if shown and shown in text and _linkable(url):
            linked = text.replace(shown, f"<{url}|{shown}>", 1)
            return linked if len(linked) <= SECTION_CHARS // 2 else text
    return text


def _card_facts(card: PaperCard) -> list[str]:
    facts = [f"ID {card.paper_id}"]
    if card.venue:
        facts.append(clip(escape(card.venue), CONTEXT_CHARS))
    facts += [clip(escape(card.added_by), CONTEXT_CHARS)] if card.added_by else []  # "Added by Ann on ..."
    if card.matched_terms:
        terms = ", ".join(f"*{escape(term)}*" for term in card.matched_terms)
        facts.append("matched: " + clip(terms, CONTEXT_CHARS))
    if card.tags:
        facts.append("tags: " + clip(escape(", ".join(card.tags)), CONTEXT_CHARS))
    if card.title_match:  # ranked above higher scores, and says so; a raw BM25 score is the operator's
        facts.append("title match")
    return facts


def _quoted(notes: list[str], kind: str) -> list[str]:
    lines = [
        f"> _{kind}:_ {clip(escape(' '.join(note.split())), NOTE_CHARS)}"
        for note in notes[:NOTES_SHOWN]
    ]
    if len(notes) > NOTES_SHOWN:
        lines.append(f"_+{len(notes) - NOTES_SHOWN} more {kind}s_")
    return lines


def bold_words(text: str, words: Iterable[str], limit: int) -> str:
    """`text` escaped, with every occurrence of `words` (any case) in bold; bold goes
    around a whole word inside its punctuation, "(*RL*)," and is never cut by clipping."""
    wanted = {w.lower() for w in words}
    out: list[str] = []
    size = 0
    for token in text.split():
        lead, core, trail = _WORD_EDGES.match(token).groups()
        # "ε" is marked for "epsilon": the card shows as Unicode what the query matched.
        marked = core.lower() in wanted or spoken(core).strip().lower() in wanted
        core = f"*{escape(core)}*" if marked else escape(core)
        piece = escape(lead) + core + escape(trail)
        if size + len(piece) + 1 > limit - 1:
            out.append("…")
            break
        out.append(piece)
        size += len(piece) + 1
    return " ".join(out)


# --- buttons ------------------------------------------------------------------------------


def action_id(position: int) -> str:
    return f"{ACTION_ID_PREFIX}{position}"


def action_blocks(actions: list[Action]) -> list[dict]:
    """One button per action, 25 to an actions block; a click sends back `value`."""
    buttons = []
    for position, action in enumerate(actions):
        if len(action.value) > BUTTON_VALUE_CHARS:
            log.warning(
                "button %r left out: its value is over %d characters",
                action.label,
                BUTTON_VALUE_CHARS,
            )
            continue
        buttons.append(_button(position, action))
    return [
        {"type": "actions", "elements": buttons[start : start + ACTIONS_PER_BLOCK]}
        for start in range(0, len(buttons), ACTIONS_PER_BLOCK)
    ]


def _button(position: int, action: Action) -> dict:
    button = {
        "type": "button",
        "action_id": action_id(position),
        "text": {
            "type": "plain_text",
            "text": clip(action.label, BUTTON_TEXT_CHARS) or "…",
            "emoji": True,
        },
        "value": action.value,
    }
    if action.style in _BUTTON_STYLES:
        button["style"] = action.style
    return button


# --- blocks -------------------------------------------------------------------------------


def _section(text: str) -> dict:
    return {"type": "section", "text": _mrkdwn(text)}


def _context(texts: list[str]) -> dict:
    return {"type": "context", "elements": [_mrkdwn(t) for t in texts[:CONTEXT_ELEMENTS]]}


def _mrkdwn(text: str) -> dict:
    # verbatim: Slack does not turn a plain @here, @channel or #name in the text into a
    # ping or a link (escaping covers only the <!here> form).
    return {"type": "mrkdwn", "text": text, "verbatim": True}

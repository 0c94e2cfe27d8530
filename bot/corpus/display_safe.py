"""Display-safe text: what a source may not put on a card. Every stored paper's text passes
here once, at the corpus boundary (bot.corpus.importing, for feeds, adds and imports alike).

Removed: the format characters (Unicode category Cf) that reorder or hide text (the bidi
overrides U+202A-202E and isolates U+2066-2069, U+200E/U+200F, U+FEFF, U+200B, U+2060, the
tag characters U+E0000-E007F that smuggle invisible ASCII, the soft hyphen), control
characters (Cc) other than whitespace, and combining marks (Mn, Me) past MARKS_MAX on one
character ("Zalgo" stacks that run over the lines around them).

Kept: a NUL, which importing refuses with its own explanation (no database stores it);
whitespace, which the readers collapse where a field is one line (notes keep their line
breaks); and the joiners ZWJ U+200D and ZWNJ U+200C after a visible character, one at a
time: emoji sequences (a family, a rainbow flag), Indic conjuncts and half forms (Sinhala
ශ්‍රී, Malayalam chillus), Persian word forms (می‌شود) need them. A joiner counts as a mark
in a stack, so it cannot split one. Lost, knowingly: the subdivision flags (England,
Scotland, Wales: tag characters) become a plain black flag, and the rare visible format
characters (the Arabic number signs U+0600-0605) go with the invisible ones.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from bot.corpus.records import PaperRecord, clean_space

# Combining marks kept on one character. Real text needs up to four: Vietnamese two even
# decomposed (ệ: e, dot below, circumflex), Devanagari two (nukta, virama), Thai and Arabic
# with its vowels two or three, Tibetan stacks and pointed Biblical Hebrew four (སྒྲུཾ).
MARKS_MAX = 4
JOINERS = "\u200c\u200d"  # ZWNJ, ZWJ


@dataclass(frozen=True)
class _Patterns:
    hidden: re.Pattern[str]  # format and control characters to remove
    stack: re.Pattern[str]  # two or more marks or joiners on one character
    # The same for text of the Basic Multilingual Plane alone: one table lookup a
    # character, where the marks beyond it (Brahmi, musical symbols) are ranges to try.
    bmp_stack: re.Pattern[str]
    joiners: re.Pattern[str]


@cache
def _patterns() -> _Patterns:
    """Built on first use from this Python's Unicode database (a fifth of a second: only a
    process that meets text other than printable ASCII pays it)."""
    hidden, marks = [], []
    for code in range(sys.maxunicode + 1):
        character = chr(code)
        category = unicodedata.category(character)
        if _hidden(character, category):
            hidden.append(code)
        elif category in ("Mn", "Me"):
            marks.append(code)
    marks = sorted(marks + [ord(j) for j in JOINERS])
    bmp = [code for code in marks if code <= 0xFFFF]
    astral = _ranges([code for code in marks if code > 0xFFFF])
    return _Patterns(
        hidden=re.compile(f"[{_ranges(hidden)}]+"),
        # A character past the BMP is looked up among those marks only when it is one.
        stack=re.compile(f"(?:[{_ranges(bmp)}]|(?=[\\U00010000-\\U0010ffff])[{astral}]){{2,}}"),
        bmp_stack=re.compile(f"[{_ranges(bmp)}]{{2,}}"),
        joiners=re.compile(f"[{JOINERS}]+"),
    )


def _hidden(character: str, category: str) -> bool:
    """A format character other than the joiners; a control other than whitespace and NUL."""
    if category == "Cf":
        return character not in JOINERS
    return category == "Cc" and character != "\0" and not character.isspace()


def _ranges(codes: list[int]) -> str:
    """A regex character class's inside for these code points (ascending)."""
    parts, start = [], 0
    for i, code in enumerate(codes):
        if i + 1 < len(codes) and codes[i + 1] == code + 1:
            continue
        first, last = codes[start], code
        parts.append(f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}")
        start = i + 1
    return "".join(parts)


def display_safe(text: str) -> str:
    """`text` without the characters that hide or reorder text, its stacks of marks cut to
    MARKS_MAX a character. Each step is asked first whether it has anything to do, in C:
    printable text holds no format or control character, ASCII no mark, and a text with
    no joiner no loose one. Printable ASCII (most text) comes back as it is, unread; an
    abstract with a few accents costs a few microseconds."""
    if text.isascii() and text.isprintable():
        return text
    patterns = _patterns()
    if not text.isprintable():
        text = patterns.hidden.sub("", text)
    if text.isascii():
        return text
    stack = patterns.stack if _beyond_bmp(text) else patterns.bmp_stack
    if stack.search(text):
        text = stack.sub(_capped, text)
    if "\u200c" in text or "\u200d" in text:
        text = patterns.joiners.sub(_joining, text)
    return text


def _beyond_bmp(text: str) -> bool:
    """Whether the text holds a character past U+FFFF (two UTF-16 units each)."""
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text)


def _capped(stack: re.Match[str]) -> str:
    kept: list[str] = []
    for character in stack.group():
        if character in JOINERS and kept and kept[-1] in JOINERS:
            continue  # one joiner at a time
        kept.append(character)
    return "".join(kept[:MARKS_MAX])


def _joining(joiner: re.Match[str]) -> str:
    """A joiner after a visible character stays; at the start, or after a space, it joins
    nothing (one at a time already: _capped)."""
    at = joiner.start()
    return "" if at == 0 or joiner.string[at - 1].isspace() else joiner.group()[0]


def make_display_safe(record: PaperRecord) -> None:
    """Clean, in place, every text of the record a card or a reply may show: one-line
    fields respaced where a removed character sat between spaces, the abstract and the
    notes keeping their line breaks; an author, tag or note that held nothing else is
    dropped. The url and the ids stay as given: they name the paper, and an id with a
    format character in it matches nothing rather than another paper."""
    record.title = safe_line(record.title)
    record.abstract = display_safe(record.abstract)
    record.authors = _each(record.authors, safe_line)
    record.tags = _each(record.tags, safe_line)
    record.notes = _each(record.notes, display_safe)
    for name in ("track", "presentation", "award", "venue"):
        if value := getattr(record, name):
            setattr(record, name, safe_line(value) or None)
    for restored in record.sources:
        make_display_safe(restored.record)


def safe_line(text: str) -> str:
    """display_safe for a one-line value (a title, a name): respaced where it changed."""
    cleaned = display_safe(text)
    return text if cleaned == text else clean_space(cleaned)


def _each(values: list[str], clean: Callable[[str], str]) -> list[str]:
    """The values cleaned, less those cleaning emptied."""
    return [cleaned for value in values if (cleaned := clean(value)) or not value]

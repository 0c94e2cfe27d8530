"""Author names split into family and given names for the citation formats, by rules that
cannot refuse a name.

A name is whatever a source gave: a page's citation_author, a BibTeX file, a feed. BibTeX's
own splitter (bibtexparser's) raises on an unbalanced brace or a third comma, and one such
name ("Mallory }") broke every CSL-JSON export that held its paper (issue 45). Here the rules
are BibTeX's, simplified, and a name they do not fit is written whole, as a literal name,
instead of being guessed at:

- "Family, Given" and "Family, Suffix, Given" split at their commas ("Turing, Alan");
- "Given Family": the last word is the family name, with the lowercase words before it as
  its particle ("Ludwig van Beethoven": family "van Beethoven", given "Ludwig");
- one word, a name in one pair of braces (BibTeX's way of saying "do not split":
  "{Barnes and Noble}"), an empty part between commas, more than two commas, or a part
  without a letter ("Mallory }", "Smith, ?") is literal.

Other braces, backslashes and punctuation are ordinary characters: the caller decides how
each format writes them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Name:
    family: str
    given: str
    suffix: str = ""


def split_name(text: str) -> Name | None:
    """`text` as family, given and suffix names, or None when it is to be written whole.
    Never raises: any string is either split or literal."""
    if _one_group(text):
        return None
    if "," in text:
        parts = [" ".join(part.split()) for part in text.split(",")]
        if len(parts) == 2:
            name = Name(family=parts[0], given=parts[1])
        elif len(parts) == 3:
            name = Name(family=parts[0], given=parts[2], suffix=parts[1])
        else:
            return None
        pieces = parts
    else:
        words = text.split()
        if len(words) < 2:
            return None
        # The family name starts at the first lowercase word between the first and the last
        # (BibTeX's "von" part: van, de la), else it is the last word alone.
        start = next((n for n in range(1, len(words) - 1) if _lowercase(words[n])), len(words) - 1)
        name = Name(family=" ".join(words[start:]), given=" ".join(words[:start]))
        pieces = [name.family, name.given]
    return name if all(_has_letter(piece) for piece in pieces) else None


def _one_group(text: str) -> bool:
    """Whether the whole text is one pair of braces: "{Barnes and Noble}", not "{A} {B}"."""
    if not (text.startswith("{") and text.endswith("}")):
        return False
    depth = 0
    for position, ch in enumerate(text):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            return position == len(text) - 1  # the first brace closes at the end
    return False  # "{{x}": the first brace never closes


def _lowercase(word: str) -> bool:
    """Whether the word's first letter is lower case ("van", "d'Alembert"); a word without
    letters is not."""
    first = next((ch for ch in word if ch.isalpha()), "")
    return first.islower()


def _has_letter(part: str) -> bool:
    return any(ch.isalpha() for ch in part)

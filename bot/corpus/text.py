"""Text helpers shared by the readers: numbered lines, paragraphs, derived titles."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.corpus.records import clean_space, title_key

# Past this length a derived title stops reading like a title; the cut is made at a word.
DERIVED_TITLE_LIMIT = 90


@dataclass
class Paragraph:
    """Consecutive non-blank lines; `line` is the 1-based line of the first one."""

    line: int
    lines: list[str]

    @property
    def text(self) -> str:
        return clean_space(" ".join(self.lines))


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines with their 1-based line numbers."""
    return [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]


def paragraphs(text: str, first_line: int = 1) -> list[Paragraph]:
    """Blank-line separated paragraphs; `first_line` is the number of the text's line 1."""
    found: list[Paragraph] = []
    current: Paragraph | None = None
    for number, line in enumerate(text.split("\n"), first_line):
        if not line.strip():
            current = None
        elif current is None:
            current = Paragraph(number, [line])
            found.append(current)
        else:
            current.lines.append(line)
    return found


# A sentence ends at . ! ? followed by a capital (with or without the space a careless
# writer forgot: "structure.This"), but not after the common abbreviations.
_SENTENCE_END = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bet al)(?<!\bvs)(?<!\bcf)[.!?](?=\s+[\"“‘(A-Z]|[A-Z][a-z])"
)
# A clause that ends a paragraph properly: final punctuation, maybe inside quotes/brackets.
_CLOSED = re.compile(r"[.!?)\]\"”’']\s*$")


def first_sentence(text: str) -> str:
    match = _SENTENCE_END.search(text)
    return text[: match.start() + 1] if match else text


def ends_sentence(text: str) -> bool:
    """False for text that stops mid-sentence, the usual sign of a truncated file."""
    return bool(_CLOSED.search(text))


# Abstracts often end on their code's address, without a full stop.
_LINK_AT_END = re.compile(r"(?:://|\bwww\.)\S*$")


def looks_complete(text: str) -> bool:
    """ends_sentence, but an abstract that ends on a link is complete too."""
    return ends_sentence(text) or bool(_LINK_AT_END.search(text.rstrip()))


def shorten(text: str, limit: int = DERIVED_TITLE_LIMIT) -> str:
    """Cut at a word boundary so the result, with its "…", fits in `limit` characters."""
    text = text.rstrip(". ")
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-–—") + "…"


# The method name an abstract gives itself. Only explicit namings count ("we propose a
# mechanism, called Compositional Attention", "which we refer to as X"), or a coined
# token right after the verb ("We develop MetaLink,"): a guessed name would mislead.
_NAME = r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*(?:\s*\([A-Z][\w-]*\))?"
_NAMED = re.compile(
    r"\b[Ww]e\s+(?:propose|present|introduce|develop)\b[^.]*?"
    r"\b(?:called|dubbed|named|termed|refer to as|we call)\s+(?:the\s+)?(" + _NAME + ")"
)
_COINED = re.compile(
    r"\b[Ww]e\s+(?:propose|present|introduce|develop)\s+([A-Za-z][\w-]*[A-Z][\w-]*)(?=[\s,:;(])"
)


def method_name(text: str) -> str | None:
    match = _NAMED.search(text) or _COINED.search(text)
    if match is None:
        return None
    return re.sub(r"\s*\(", " (", match.group(1))


# Text-formatting commands read badly in a title: "\textit{catastrophic forgetting}" and
# "{\em intrinsic}" keep only their words. Math ($\epsilon$) stays as the source has it.
_LATEX_FORMATTING = re.compile(r"\\[a-zA-Z]+\{([^{}]*)\}|\{\\[a-zA-Z]+\s+([^{}]*)\}")


def derive_title(text: str) -> str:
    """A readable display title for a paper known only by its abstract.

    The paper's own name for its method, when it states one, leads; the first sentence
    (shortened) says what the paper is about.
    """
    plain = _LATEX_FORMATTING.sub(lambda m: m.group(1) or m.group(2) or "", text)
    sentence = first_sentence(clean_space(plain))
    name = method_name(text)
    if name is None or name.casefold() in sentence.casefold():
        return shorten(sentence)
    return shorten(f"{name}: {sentence}")


def unique_title(title: str, taken: set[str]) -> str:
    """`title`, numbered if needed so that two derived titles never name one paper."""
    candidate, number = title, 2
    while title_key(candidate) in taken:
        candidate, number = f"{title} ({number})", number + 1
    taken.add(title_key(candidate))
    return candidate

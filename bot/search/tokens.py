"""The tokenizer for scientific text: what a document and a query are made of.

Documents and queries go through the same function, so a query typed in any case,
with or without accents, hyphens or LaTeX, meets the words of the abstract.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

# Lucene's English stop words plus the common function words of abstracts; kept short
# on purpose: words like "learning" or "model" carry meaning in a reading group's query.
STOP_WORDS = frozenset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with we our us its from which can has have had
    been being were than also both each other over under via do does did so what when where
    who whom how why all any more most some very i you he she them your his her my me
    """.split()
)

# A command with an argument is markup (\textit{x} -> x, "\underline{e}dge" -> "edge"); a
# command without one names a symbol and is kept as a word (\alpha -> alpha, \ell -> ell).
# $...$ delimiters, braces, ^ and _ markers go.
_LATEX_COMMAND = re.compile(r"\\([a-zA-Z]+)\*?(\{)?")
_LATEX_MARKUP = re.compile(r"[{}$^_~\\]")
# A term: letters and digits, optionally joined by single hyphens (gpt-4, l2, int8,
# multi-task); any other character ends a word ("model's" -> "model", "s").
_TERM = re.compile(r"[0-9a-z]+(?:-[0-9a-z]+)*")


def fold(text: str) -> str:
    """Unicode-normalise, drop accents, lowercase: "Lähner" -> "lahner"."""
    if text.isascii():  # most abstracts: normalisation would change nothing, and costs most
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFKC", stripped).casefold()


def strip_latex(text: str) -> str:
    """Remove LaTeX commands and markup characters but keep their arguments."""
    return _LATEX_MARKUP.sub("", _LATEX_COMMAND.sub(_latex_word, text))


def _latex_word(match: re.Match[str]) -> str:
    return "" if match.group(2) else f" {match.group(1)} "


class Tokenizer:
    """Turns text into stemmed terms; one instance per process (the stemmer caches)."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")

    @lru_cache(maxsize=200_000)  # noqa: B019 - one long-lived tokenizer per process
    def _stem(self, word: str) -> str:
        return self._stemmer.stemWord(word)

    def stems(self, words: list[str]) -> list[str]:
        """The stems of plain words, in one call to the stemmer (an index's word list)."""
        return self._stemmer.stemWords(words)

    def words(self, text: str) -> list[str]:
        """The unstemmed, stop-word-free words of `text` (used to show matched terms)."""
        raw = _TERM.findall(fold(strip_latex(text)))
        return [w for w in raw if len(w) > 1 and w not in STOP_WORDS]

    def tokens(self, text: str) -> list[str]:
        """The terms BM25 sees. A hyphenated word gives the whole and its parts, so
        "multi-task" matches queries for "multi-task" and for "multi task"."""
        return [term for term, _word in self.terms_with_words(text)]

    @lru_cache(maxsize=200_000)  # noqa: B019 - card snippets tokenise the same words again and again
    def word_terms(self, word: str) -> frozenset[str]:
        """The terms of one whitespace-separated word of text."""
        return frozenset(self.tokens(word))

    def terms_with_words(self, text: str) -> list[tuple[str, str]]:
        """(term, the word as written) pairs, so a card can show "robustness" for "robust"."""
        out: list[tuple[str, str]] = []
        for word in self.words(text):
            if "-" in word:
                parts = word.split("-")
                out.append(("-".join(self._stem(p) for p in parts), word))
                out.extend((self._stem(p), p) for p in parts if len(p) > 1 and p not in STOP_WORDS)
            else:
                out.append((self._stem(word), word))
        return out

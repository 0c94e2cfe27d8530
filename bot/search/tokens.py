"""The tokenizer for scientific text: what a document and a query are made of.

Documents and queries go through the same function, so a query typed in any case,
with or without accents, hyphens or LaTeX, meets the words of the abstract.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from operator import itemgetter

import Stemmer

from bot.corpus.folding import fold

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


def strip_latex(text: str) -> str:
    """Remove LaTeX commands and markup characters but keep their arguments."""
    if not _has_markup(text):  # most abstracts: both substitutions would change nothing
        return text
    return _LATEX_MARKUP.sub("", _LATEX_COMMAND.sub(_latex_word, text))


def _has_markup(text: str) -> bool:
    # Every character the two patterns can touch: a command starts with a backslash,
    # the rest is _LATEX_MARKUP's class. Seven substring tests beat one regex search.
    return (
        "\\" in text
        or "{" in text
        or "}" in text
        or "$" in text
        or "^" in text
        or "_" in text
        or "~" in text
    )


def _latex_word(match: re.Match[str]) -> str:
    return "" if match.group(2) else f" {match.group(1)} "


# For ASCII text, as bytes: A-Z lowered (what fold does to ASCII), every other character
# _TERM cannot match made a space. The text then splits on spaces into chunks of
# [0-9a-z-]; a chunk without a hyphen is exactly one of _TERM's words.
_ASCII_CHUNKS = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 or c == 45 else 32
    for c in range(256)
)
# Past this many distinct chunks a cache starts again, so a long-lived process cannot
# grow without end (a 20k-paper corpus holds about 70k distinct words).
CACHE_LIMIT = 200_000  # about 40 MB per cache when full

_Pair = tuple[str, str]
_first = itemgetter(0)


class _PlainPairs(dict[bytes, "_Pair | None"]):
    """A chunk without a hyphen (one word) -> its (term, word) pair, or None for a stop
    word or a single character; computed on a miss. Hits are plain dict lookups, safe
    from several threads under the GIL; a miss may empty the cache first, never a
    problem for a reader, who only ever looks up one key at a time."""

    def __init__(self, stem: Callable[[str], str]) -> None:
        super().__init__()
        self._stem = stem

    def __missing__(self, chunk: bytes) -> _Pair | None:
        word = chunk.decode("ascii")
        if len(word) < 2 or word in STOP_WORDS:
            pair = None
        else:
            stem = self._stem(word)
            pair = (word if stem == word else stem, word)  # one string when they are equal
        if len(self) >= CACHE_LIMIT:
            self.clear()
        self[chunk] = pair
        return pair


class _HyphenatedPairs(dict[bytes, "tuple[_Pair, ...]"]):
    """A chunk with a hyphen ("multi-task", "-x-", "a--b") -> its pairs, in order."""

    def __init__(self, stems: Callable[[list[str]], list[str]]) -> None:
        super().__init__()
        self._stems = stems

    def __missing__(self, chunk: bytes) -> tuple[_Pair, ...]:
        out: list[_Pair] = []
        for word in _TERM.findall(chunk.decode("ascii")):
            if len(word) < 2 or word in STOP_WORDS:
                continue
            parts = word.split("-")
            stems = self._stems(parts)
            if len(parts) == 1:
                out.append((stems[0], word))
                continue
            out.append(("-".join(stems), word))
            out.extend((s, p) for s, p in zip(stems, parts) if len(p) > 1 and p not in STOP_WORDS)
        pairs = tuple(out)
        if len(self) >= CACHE_LIMIT:
            self.clear()
        self[chunk] = pairs
        return pairs


class Tokenizer:
    """Turns text into stemmed terms; one instance per process (the stemmer caches)."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")
        # A chunk without a hyphen (one term) -> its (term, word) pair, or None for a
        # stop word or a single character; a chunk with one -> its tuple of pairs.
        self._plain = _PlainPairs(self._stemmer.stemWord)
        self._hyphenated = _HyphenatedPairs(self._stemmer.stemWords)

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
        return list(map(_first, self.terms_with_words(text)))

    @lru_cache(maxsize=200_000)  # noqa: B019 - card snippets tokenise the same words again and again
    def word_terms(self, word: str) -> frozenset[str]:
        """The terms of one whitespace-separated word of text."""
        return frozenset(self.tokens(word))

    def terms_with_words(self, text: str) -> list[tuple[str, str]]:
        """(term, the word as written) pairs, so a card can show "robustness" for "robust".

        The words of `_TERM.findall(fold(strip_latex(text)))` minus stop words and single
        characters; a hyphenated word gives its stemmed whole, then its stemmed parts.
        Computed once per distinct chunk of text and cached: a text is split into chunks,
        each looked up (in C, through map and filter)."""
        plain = strip_latex(text)
        if plain.isascii():  # fold would only lower it: the table does
            spaced = plain.encode("ascii").translate(_ASCII_CHUNKS)
        else:  # other characters also end words: keep _TERM's words, one per chunk
            spaced = " ".join(_TERM.findall(fold(plain))).encode("ascii")
        if b"-" not in spaced:
            return list(filter(None, map(self._plain.__getitem__, spaced.split())))
        # Few chunks hold a hyphen: look them up one by one, the text between in bulk.
        lookup = self._plain.__getitem__
        out: list[tuple[str, str]] = []
        start = 0
        hyphen = spaced.find(b"-")
        while hyphen != -1:
            begin = spaced.rfind(b" ", start, hyphen) + 1
            end = spaced.find(b" ", hyphen)
            if end == -1:
                end = len(spaced)
            out += filter(None, map(lookup, spaced[start:begin].split()))
            out += self._hyphenated[spaced[begin:end]]
            start = end
            hyphen = spaced.find(b"-", end)
        out += filter(None, map(lookup, spaced[start:].split()))
        return out

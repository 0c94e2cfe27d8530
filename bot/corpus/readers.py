"""Corpus readers: from a file's bytes to paper records, or a FILE:LINE error.

`read_path` decodes, detects the format from the content (the seed files' extensions
say little: .txt holds four different layouts) and parses. It raises before returning
anything, so a caller never stores part of a bad file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from pathlib import Path

from bot.corpus import (
    arxiv_atom,
    bibtex,
    blog_review,
    jsonl,
    openreview,
    poster_session,
    topic_abstracts,
    trending,
)
from bot.corpus.records import CorpusFormatError, PaperRecord

Parser = Callable[[str, str], list[PaperRecord]]

# In detection order: cheap and specific signatures first, the prose fallback last.
_READERS = {
    "jsonl": jsonl,
    "bibtex": bibtex,
    "arxiv": arxiv_atom,
    "openreview": openreview,
    "poster-session": poster_session,
    "trending": trending,
    "blog-review": blog_review,
    "topic-abstracts": topic_abstracts,
}
FORMATS: dict[str, Parser] = {name: module.parse for name, module in _READERS.items()}

# Control characters that never occur in text (tab, newlines, form feed are fine). One
# NUL, or more than one such character in a hundred, means the file is not text.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_SHARE = 0.01

__all__ = ["FORMATS", "CorpusFormatError", "PaperRecord", "decode", "detect", "read_path"]


def read_path(path: str | Path, fmt: str | None = None) -> tuple[str, list[PaperRecord]]:
    """(format, records) of one corpus file; `fmt` skips detection."""
    name = str(path)
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    text = decode(Path(path).read_bytes(), name)
    fmt = fmt or detect(text, name)
    records = FORMATS[fmt](text, name)
    if not records:
        raise CorpusFormatError(name, 1, f"no papers found (read as {fmt})")
    return fmt, records


def detect(text: str, path: str) -> str:
    for name, module in _READERS.items():
        if module.looks_like(text):
            return name
    raise CorpusFormatError(
        path,
        1,
        f"cannot tell the format of this file; pass --format with one of: {', '.join(FORMATS)}",
    )


def decode(data: bytes, path: str) -> str:
    """Strict UTF-8 (a BOM is dropped) or UTF-16 with a BOM, with \\n line ends."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = _decode_utf16(data, path)
        _reject_binary(text, path)
    else:
        # Checked on the raw bytes first: binary data is rarely valid UTF-8, and "binary"
        # tells the user more than "byte 0x89 is not UTF-8".
        _reject_binary(data.decode("latin-1"), path)
        text = _decode_utf8(data.removeprefix(codecs.BOM_UTF8), path)
    if not text.strip():
        raise CorpusFormatError(path, 1, "empty file")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode_utf8(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorpusFormatError(
            path,
            _line_at(data[: error.start].decode("latin-1")),
            f"not valid UTF-8 (byte 0x{data[error.start]:02x}); save the file as UTF-8",
        ) from None


def _decode_utf16(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError as error:
        line = _line_at(data[: error.start].decode("utf-16", errors="replace"))
        message = "not valid UTF-16 (it starts with a UTF-16 BOM)"
        raise CorpusFormatError(path, line, message) from None


def _reject_binary(text: str, path: str) -> None:
    first = _CONTROL.search(text)
    if first is None:
        return
    if "\0" in text or len(_CONTROL.findall(text)) > _CONTROL_SHARE * len(text):
        line = _line_at(text[: first.start()])
        raise CorpusFormatError(path, line, "binary data, not a text corpus file")


def _line_at(prefix: str) -> int:
    """The 1-based line on which the text after `prefix` begins (any line-end style)."""
    return prefix.count("\n") + prefix.count("\r") - prefix.count("\r\n") + 1

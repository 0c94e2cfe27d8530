"""Corpus readers: from a file's bytes to paper records, or a FILE:LINE error.

`read_path` reads the file with caps on its size and line length, decodes, detects the
format from the content (the seed files' extensions say little: .txt holds four different
layouts) and parses. It raises before returning anything, so a caller never stores part
of a bad file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from functools import partial
from importlib import import_module
from pathlib import Path

from bot.corpus.formats import READER_MODULES
from bot.corpus.records import CorpusFormatError, PaperRecord
from bot.corpus.text import looks_complete, shorten

Parser = Callable[[str, str], list[PaperRecord]]

# Imported by name, so that formats.py is the one list of formats.
_READERS = {name: import_module(f"bot.corpus.{module}") for name, module in READER_MODULES.items()}
FORMATS: dict[str, Parser] = {name: module.parse for name, module in _READERS.items()}

# Control characters that never occur in text (tab, newlines, form feed are fine). One
# NUL, or more than one such character in a hundred, means the file is not text.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_SHARE = 0.01
# The same characters as UTF-8 bytes (one byte each, never inside a longer sequence):
# deleting every other byte counts them at a tenth of the pattern's search of the text.
_NOT_CONTROL_BYTES = bytes(c for c in range(256) if not _CONTROL.match(chr(c)))

# A file is read whole before anything is stored, so its size is capped; past the cap it
# is split (the same paper in two files stays one paper).
FILE_MAX = 256 << 20
# Records are a few kilobytes. A longer line (a file without line breaks, a runaway
# field) is refused as soon as it is read, before it is held, decoded and scanned whole.
LINE_MAX = 1 << 20
_LINE_TOO_LONG = (
    f"line longer than {LINE_MAX >> 20} MiB, the most one line may hold: "
    "give each record its own line (JSON Lines), or break long fields over lines"
)
# Prose formats: a cut between two papers reads as a shorter file, and one inside an
# abstract can only be suspected (it stops mid-sentence), so that file is imported with a
# warning. A cut in the structured formats breaks their syntax, and they are refused.
_PROSE = {"openreview", "poster-session", "trending", "blog-review", "topic-abstracts"}

__all__ = [
    "FILE_MAX",
    "FORMATS",
    "LINE_MAX",
    "CorpusFormatError",
    "PaperRecord",
    "decode",
    "detect",
    "read_path",
    "truncation_warnings",
]


def read_path(path: str | Path, fmt: str | None = None) -> tuple[str, list[PaperRecord]]:
    """(format, records) of one corpus file; `fmt` skips detection."""
    name = str(path)
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    text = decode(read_capped(Path(path), name), name)
    fmt = fmt or detect(text, name)
    records = FORMATS[fmt](text, name)
    if not records:
        raise CorpusFormatError(name, 1, f"no papers found (read as {fmt})")
    return fmt, records


def read_capped(path: Path, name: str) -> bytearray:
    """The file's bytes, read a line at a time: refused at the first line over LINE_MAX, or
    past FILE_MAX, with only that much held in memory."""
    size = path.stat().st_size
    if size > FILE_MAX:
        raise CorpusFormatError(name, 1, _too_big(size))
    data = bytearray()
    with path.open("rb") as handle:
        # At most LINE_MAX bytes and a line end ("\r\n") per read.
        for number, line in enumerate(iter(partial(handle.readline, LINE_MAX + 2), b""), 1):
            if len(line.rstrip(b"\r\n")) > LINE_MAX:
                raise CorpusFormatError(name, number, _LINE_TOO_LONG)
            data += line
            if len(data) > FILE_MAX:  # a file that grows while read, or a pipe
                raise CorpusFormatError(name, number, _too_big(len(data)))
    return data


def _too_big(size: int) -> str:
    return f"the file is {size:,} bytes, at most {FILE_MAX:,} are read at once: split it"


def truncation_warnings(fmt: str, records: list[PaperRecord], path: str) -> list[str]:
    """`FILE:LINE: warning: ...` when a prose file's last abstract stops mid-sentence."""
    if fmt not in _PROSE or not records:
        return []
    last = max(records, key=lambda record: record.line)
    if not last.abstract or looks_complete(last.abstract):
        return []
    title = shorten(last.title, 60)
    warning = (
        f"{path}:{last.line}: warning: the abstract of {title!r} stops mid-sentence "
        "at the end of the file; if the file was cut, import the whole file again"
    )
    return [warning]


def detect(text: str, path: str) -> str:
    for name, module in _READERS.items():
        if module.looks_like(text):
            return name
    raise CorpusFormatError(
        path,
        1,
        f"cannot tell the format of this file; pass --format with one of: {', '.join(FORMATS)}",
    )


def decode(data: bytes | bytearray, path: str) -> str:
    """Strict UTF-8 (a BOM is dropped) or UTF-16 with a BOM, with \\n line ends."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = _decode_utf16(data, path)
        _reject_binary(text, path)
    else:
        text = _decode_utf8(data, path)
        if data.translate(None, _NOT_CONTROL_BYTES):  # some: is it binary? (and where)
            _reject_binary(text, path)
    if not text or text.isspace():  # not text.strip(): that copies the whole file
        raise CorpusFormatError(path, 1, "empty file")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode_utf8(data: bytes | bytearray, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        # Binary data is rarely valid UTF-8, and "binary" tells the user more than "byte
        # 0x89 is not UTF-8". (Valid UTF-8 is checked for binary once decoded: the control
        # characters are the same bytes, and that spares a latin-1 copy of the file.)
        _reject_binary(data.decode("latin-1"), path)
        raw = error.object  # without the BOM, which error.start does not count
        raise CorpusFormatError(
            path,
            _line_at(raw[: error.start].decode("latin-1")),
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x}); save the file as UTF-8",
        ) from None


def _decode_utf16(data: bytes | bytearray, path: str) -> str:
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

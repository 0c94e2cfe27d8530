"""BibTeX files, parsed by bibtexparser (v2).

Titles and names lose their protective braces and simple accent commands ({\\"u} -> ü);
abstracts keep their LaTeX as text (the tokenizer strips it), because decoding LaTeX
would also treat a bare "%" in an abstract as the start of a comment and cut it.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import TYPE_CHECKING

from bot.corpus.identifiers import arxiv_id, normalise_ids
from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space

if TYPE_CHECKING:  # bibtexparser loads to parse a BibTeX file, not to detect formats
    from bibtexparser.model import Block, Entry

# Each failed block is reported here as FILE:LINE; the parser's own warning about it
# (with 0-based line numbers) would only repeat it, confusingly, on stderr.
logging.getLogger("bibtexparser.splitter").setLevel(logging.ERROR)

_ENTRY_START = re.compile(r"^\s*@[A-Za-z]+\s*[{(]", re.M)
_DANGLING = re.compile(r"@[A-Za-z]*")
# Accent commands and the combining mark each adds: \"u, \"{u}, {\"u} all become ü.
_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303",
    "=": "\u0304", ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b",
    "c": "\u0327", "r": "\u030a", "k": "\u0328",
}
_ACCENT = re.compile(
    r"\\([\"'`^~=.](?=\s*\{?\\?[A-Za-z])|[uvHcrk](?=[\s{]))\s*\{?\\?([A-Za-z])\}?"
)
_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "aa": "å", "AA": "Å",
            "l": "ł", "L": "Ł", "i": "ı", "oe": "œ", "OE": "Œ"}
_LETTER = re.compile(r"\\(ss|ae|AE|aa|AA|oe|OE|[oOlLi])(?![A-Za-z])\s*")
_ESCAPED = re.compile(r"\\([&%$#_{}~^])")
# \textasciitilde{} and \textasciicircum{}, how paperclub's export writes ~ and ^: read as \~ and
# \^ first, so that the ties (a bare ~ is a space) leave them, then as the characters.
_SYMBOL = re.compile(r"\\textascii(tilde|circum)(?![A-Za-z])(?:\{\}|\s*)")


def looks_like(text: str) -> bool:
    return bool(_ENTRY_START.search(text))


def parse(text: str, path: str) -> list[PaperRecord]:
    import bibtexparser

    library = bibtexparser.parse_string(text)
    if library.failed_blocks:
        block = min(library.failed_blocks, key=_line)
        raise CorpusFormatError(path, _line(block), _failure(block, len(text)))
    _refuse_dangling_entry(library.blocks, path)
    return [_record(entry, path) for entry in library.entries]


def _line(block: Block) -> int:
    """Where a block starts, counted from 1 (bibtexparser counts from 0). The parser sets
    it on every block it makes; its type allows None for blocks made by hand."""
    return (block.start_line or 0) + 1


def _failure(block: Block, end: int) -> str:
    from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock, Entry

    if isinstance(block, DuplicateBlockKeyBlock):
        return f"the citation key {block.key!r} is used twice"
    if isinstance(block, DuplicateFieldKeyBlock):  # the entry refused: its ignore_error_block
        entry = block.ignore_error_block
        where = f" in entry {entry.key!r}" if isinstance(entry, Entry) else ""
        return f"a field appears twice{where}: {', '.join(sorted(block.duplicate_keys))}"
    if _open_at_end(block, end):
        return "this entry is still open at the end of the file: is it truncated, or a brace open?"
    return "cannot parse this BibTeX entry (unbalanced braces or quotes, or a truncated file?)"


def _open_at_end(block: Block, end: int) -> bool:
    """True when the parser gave up on the block because the text ran out."""
    from bibtexparser.exceptions import BlockAbortedException
    from bibtexparser.model import ParsingFailedBlock

    error = block.error if isinstance(block, ParsingFailedBlock) else None
    if not isinstance(error, BlockAbortedException):
        return False
    return error.end_index is None or error.end_index >= end


def _refuse_dangling_entry(blocks: list[Block], path: str) -> None:
    """A file cut right after an entry's "@article" leaves it as comment text, which
    bibtexparser accepts; BibTeX text never ends on an entry type."""
    from bibtexparser.model import ImplicitComment

    last = blocks[-1] if blocks else None
    if isinstance(last, ImplicitComment) and _DANGLING.fullmatch(last.comment.strip()):
        message = f"the file ends on {last.comment.strip()!r}, without its entry: is it truncated?"
        raise CorpusFormatError(path, _line(last), message)


def _record(entry: Entry, path: str) -> PaperRecord:
    fields = {f.key.lower(): str(f.value) for f in entry.fields}
    line = _line(entry)
    title = clean_space(_decode_latex(fields.get("title", "")))
    if not title:
        raise CorpusFormatError(path, line, f"entry {entry.key!r} has no title")
    ids = {"bibtex": entry.key}
    if doi := fields.get("doi", "").strip():
        ids["doi"] = doi
    if arxiv := _arxiv_id(fields):
        ids["arxiv"] = arxiv
    url = fields.get("url", "").strip() or None
    year = re.search(r"\d{4}", fields.get("year", ""))
    venue = clean_space(_decode_latex(fields.get("journal") or fields.get("booktitle", "")))
    return PaperRecord(
        title=title,
        line=line,
        authors=_authors(fields.get("author", "")),
        abstract=clean_space(fields.get("abstract", "")),
        url=url,
        external_ids=normalise_ids(ids, url),
        venue=venue or None,
        year=int(year.group()) if year else None,
        tags=[t for t in map(clean_space, re.split(r"[,;]", fields.get("keywords", ""))) if t],
    )


def _decode_latex(text: str) -> str:
    """Accents to letters, ~ to a space, braces dropped, escaped specials and
    \\textasciitilde{} kept as text."""
    text = _ACCENT.sub(lambda m: m.group(2) + _ACCENTS[m.group(1)], text)
    text = _LETTER.sub(lambda m: _LETTERS[m.group(1)], text)
    text = _SYMBOL.sub(lambda m: "\\~" if m.group(1) == "tilde" else "\\^", text)
    text = _ESCAPED.sub(r"\1", re.sub(r"(?<!\\)~", " ", re.sub(r"(?<!\\)[{}]", "", text)))
    return unicodedata.normalize("NFC", text)


def _authors(field: str) -> list[str]:
    """Split on " and " outside braces; "Last, First" becomes "First Last"."""
    names: list[str] = []
    depth = start = 0
    for match in re.finditer(r"[{}]|\s+and\s+", field):
        token = match.group()
        depth += {"{": 1, "}": -1}.get(token, 0)
        if depth == 0 and token.strip() == "and":
            names.append(field[start : match.start()])
            start = match.end()
    names.append(field[start:])
    # "others" is BibTeX's et al.; "{others}" a person of that name.
    names = [clean_space(_decode_latex(name)) for name in names if name.strip() != "others"]
    return [shown for shown in map(_display_name, names) if shown]


def _display_name(name: str) -> str:
    """"Last, First" -> "First Last"; "Last, Jr., First" -> "First Last Jr."."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2:
        return f"{parts[1]} {parts[0]}".strip()
    if len(parts) == 3:
        return f"{parts[2]} {parts[0]} {parts[1]}".strip()
    return name


def _arxiv_id(fields: dict[str, str]) -> str | None:
    """The eprint of an arXiv entry, or an "arXiv:ID" in the journal field (Google Scholar)."""
    archive = (fields.get("archiveprefix") or fields.get("eprinttype") or "arxiv").lower()
    eprint = arxiv_id(fields.get("eprint", "")) if archive == "arxiv" else None
    cited = re.search(r"arXiv:\s*(\S+)", fields.get("journal", ""), re.I)
    return eprint or (arxiv_id(cited.group(1).rstrip(".,")) if cited else None)

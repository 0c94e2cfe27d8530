"""JSON Lines: BEIR corpora and paperclub's own export, one object per line.

BEIR:       {"_id": "4983", "title": "...", "text": "...", "metadata": {"url": ...}}
paperclub:  {"id": 12, "external_ids": {"arxiv": ...}, "title": ..., "authors": [...],
             "abstract": ..., "url", "track", "award", "presentation", "venue", "year",
             "tags": [...], "notes": [...], "title_derived": false, "collections", "sources"}

`id` and `collections` describe a paper inside one database and are ignored. `sources`
(each {"collection", "source", "line", "format"} and, where that source said something
else than the paper shows, "fields" with those values) come back as the record's
`sources`, each with its own record: importing an export restores them as they were. A
record without `sources` is filed under the imported file. A file holding one JSON array
of such objects is read too.

Either may carry the paper's vector, made elsewhere (docs/relevance.md, "Precomputed
vectors"): `"vector": {"model": "sentence-transformers/all-MiniLM-L6-v2", "values": [...]}`.
Here its values are checked (finite numbers, not all zero) and scaled to unit length; the
import checks its model and its dimension against the library's.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Iterator
from typing import Any

from bot.corpus.identifiers import normalise_ids
from bot.corpus.records import (
    LINE_NUMBER_MAX,
    CorpusFormatError,
    GivenVector,
    PaperRecord,
    RestoredSource,
    clean_space,
)
from bot.corpus.text import derive_title, unique_title

_OPTIONAL_TEXT = ("url", "track", "award", "presentation", "venue")
_AUTHOR_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_CUT = "; the file ends here: is it truncated?"
_SOURCE_NAMES = ("collection", "source", "format")


class _FieldError(ValueError):
    """What is wrong with one object's fields; reported at the object's line."""


def looks_like(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith("{") or re.match(r"\[\s*[{\]]", head) is not None


def parse(text: str, path: str) -> list[PaperRecord]:
    records: list[PaperRecord] = []
    taken: set[str] = set()
    for line, obj in _objects(text, path):
        if not isinstance(obj, dict):
            found = type(obj).__name__
            raise CorpusFormatError(path, line, f"expected a JSON object, found {found}")
        try:
            record = _record(obj, line, taken)
            record.sources = _sources(obj)
            record.vector = _vector(obj.get("vector"))
            records.append(record)
        except _FieldError as error:
            raise CorpusFormatError(path, line, str(error)) from None
    return records


def _objects(text: str, path: str) -> Iterator[tuple[int, Any]]:
    """(line, value) for each line of JSON Lines, or each element of a JSON array."""
    if text.lstrip().startswith("["):
        yield from _array_items(text, path)
        return
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except RecursionError:
                raise CorpusFormatError(path, number, "JSON nested too deep to read") from None
            except json.JSONDecodeError as error:
                # A broken last line without a line end is where a cut file stops.
                cut = _CUT if number == len(lines) else ""
                message = f"not valid JSON ({error.msg}, column {error.colno}){cut}"
                raise CorpusFormatError(path, number, message) from None


def _array_items(text: str, path: str) -> Iterator[tuple[int, Any]]:
    try:
        items = json.loads(text)
    except RecursionError:
        raise CorpusFormatError(path, 1, "JSON nested too deep to read") from None
    except json.JSONDecodeError as error:
        cut = "" if text.rstrip().endswith("]") else _CUT  # the array never closes
        message = f"not valid JSON ({error.msg}){cut}"
        raise CorpusFormatError(path, error.lineno, message) from None
    # Parsed once to validate; scanned again element by element to learn their lines.
    decoder, position = json.JSONDecoder(), text.index("[") + 1
    for item in items:
        position = _skip(text, position, " \t\n,")
        _, end = decoder.raw_decode(text, position)
        yield text.count("\n", 0, position) + 1, item
        position = end


def _skip(text: str, position: int, characters: str) -> int:
    while text[position] in characters:
        position += 1
    return position


def _record(obj: dict[str, Any], line: int, taken: set[str]) -> PaperRecord:
    # BEIR's metadata varies by data set, so only the values of the expected kind count.
    metadata = given if isinstance(given := obj.get("metadata"), dict) else {}
    title = clean_space(_text(obj, "title") or "")
    abstract = clean_space(_text(obj, "abstract") or _text(obj, "text") or "")
    if not title and not abstract:
        raise _FieldError("an entry needs a title or a text/abstract")
    record = PaperRecord(
        title=title or unique_title(derive_title(abstract), taken),
        line=line,
        authors=_authors(obj.get("authors", _lenient(metadata, "authors", list))),
        abstract=abstract,
        year=_year(obj.get("year", _lenient(metadata, "year", int))),
        tags=_strings(obj, "tags"),
        notes=[note.strip() for note in _strings(obj, "notes")],
        title_derived=not title or obj.get("title_derived") is True,
    )
    for name in _OPTIONAL_TEXT:
        setattr(record, name, _text(obj, name) or _lenient(metadata, name, str))
    record.external_ids = normalise_ids(_external_ids(obj, metadata), record.url)
    return record


def _sources(obj: dict[str, Any]) -> list[RestoredSource]:
    """An exported paper's sources, each with its record: the paper's fields with that
    source's differing "fields" laid over them."""
    entries = obj.get("sources") or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise _FieldError("'sources' must be a list of objects")
    restored = [_source(entry, obj) for entry in entries]
    places = [(s.collection, s.source) for s in restored]
    if len(set(places)) < len(places):
        raise _FieldError("'sources' names the same collection and file twice")
    return restored


def _source(entry: dict[str, Any], obj: dict[str, Any]) -> RestoredSource:
    collection, source, fmt = (_source_name(entry, key) for key in _SOURCE_NAMES)
    line = entry.get("line", 1)
    if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= LINE_NUMBER_MAX:
        raise _FieldError(f"a source's 'line' must be a whole number from 1 to {LINE_NUMBER_MAX}")
    fields = entry.get("fields", {})
    if not isinstance(fields, dict):
        raise _FieldError("a source's 'fields' must be an object")
    record = _record({**obj, **fields}, line, set())
    return RestoredSource(collection, source, line, fmt, record)


def _vector(given: Any) -> GivenVector | None:
    """The paper's vector, scaled to unit length; None when the record has none."""
    if given is None:
        return None
    if not isinstance(given, dict):
        raise _FieldError(''''vector' must be an object: {"model": "...", "values": [numbers]}''')
    model = given.get("model")
    if not isinstance(model, str) or not model.strip():
        raise _FieldError("'vector.model' must name the embedding model that made the vector")
    values = given.get("values")
    if not isinstance(values, list) or not values:
        raise _FieldError("'vector.values' must be a non-empty list of numbers")
    numbers = array("d")
    if set(map(type, values)) <= {int, float}:  # no string, bool or null: one pass in C
        try:
            numbers = array("d", values)
        except OverflowError:  # an integer past any float
            pass
    if len(numbers) != len(values) or not all(map(math.isfinite, numbers)):
        raise _FieldError(_first_bad_value(values))
    peak = max(map(abs, numbers))
    if peak == 0:
        raise _FieldError("'vector' is all zeros: it points nowhere, so no paper could be close to it")
    scaled = [value / peak for value in numbers]  # its length is then from 1 to sqrt(n): no overflow
    length = math.hypot(*scaled)
    return GivenVector(model.strip(), array("f", [value / length for value in scaled]))


def _first_bad_value(values: list[Any]) -> str:
    """What is wrong with the first value of a vector that is not a finite number."""
    for index, value in enumerate(values):
        number = type(value) in (int, float)
        try:
            finite = number and math.isfinite(value)
        except OverflowError:
            finite = False
        if not finite:
            shown = json.dumps(value)
            shown = shown if len(shown) <= 40 else shown[:39] + "…"
            kind = "finite numbers" if number else "numbers"
            return f"'vector.values' must be {kind}: values[{index}] is {shown}"
    return "'vector.values' must be finite numbers"


def _source_name(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _FieldError(f"a source's '{key}' must be a non-empty string")
    return value


def _lenient(metadata: dict[str, Any], key: str, kind: type) -> Any:
    value = metadata.get(key)
    return value if isinstance(value, kind) and value else None


def _text(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise _FieldError(f"'{key}' must be a string")
    return value or None


def _strings(obj: dict[str, Any], key: str) -> list[str]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise _FieldError(f"'{key}' must be a list of strings")
    return value


def _authors(value: Any) -> list[str]:
    """A list of names, or one string "A, B and C"."""
    if isinstance(value, str):
        value = _AUTHOR_SEPARATOR.split(value)
    names = _strings({"authors": value}, "authors")
    return [name for name in map(clean_space, names) if name]


def _external_ids(obj: dict[str, Any], metadata: dict[str, Any]) -> dict[str, str]:
    ids = obj.get("external_ids") or {}
    if not isinstance(ids, dict) or not all(isinstance(v, str | int) for v in ids.values()):
        raise _FieldError("'external_ids' must map schemes to identifiers")
    found = {scheme.lower(): str(value) for scheme, value in ids.items() if str(value).strip()}
    if obj.get("_id") not in (None, ""):
        found.setdefault("beir", str(obj["_id"]))
    if doi := _lenient(metadata, "doi", str):
        found.setdefault("doi", doi)
    return found


def _year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise _FieldError("'year' must be a number")
    return int(value)

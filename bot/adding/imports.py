"""`paperclub import 2106.01345 https://doi.org/10... --collection reading`: the operator's
import of papers by link or id, through the same providers as `add` in chat; and of a
Zotero group's collection, `zotero:GROUP/COLLECTION` (bot/zotero/imports.py)."""

from __future__ import annotations

from bot.adding.providers import NAMES, AddProblem, Providers
from bot.corpus.identifiers import PAGE, find_all
from bot.corpus.importing import ImportSummary
from bot.corpus.library import Library
from bot.ops.settings import ConfigError
from bot.zotero.imports import ZoteroImportProblem, import_collection, is_zotero_reference
from bot.zotero.sync import ZoteroConfig

DEFAULT_COLLECTION = "imported"


def is_reference(text: str) -> bool:
    """The argument is one paper link or id, or a Zotero collection (and so not a file name)."""
    if is_zotero_reference(text):
        return True
    found = find_all(text)
    return len(found) == 1 and found[0][0] == text.strip().strip("<>")


def import_reference(library: Library, providers: Providers, text: str, collection: str | None) -> ImportSummary:
    """Fetch one paper (or a Zotero collection's papers) and store it; AddProblem (a
    one-line reason) or CorpusFormatError."""
    if is_zotero_reference(text):
        try:
            return import_collection(library, ZoteroConfig.from_env(), text, collection)
        except (ZoteroImportProblem, ConfigError) as problem:
            raise AddProblem("refused", str(problem)) from None
    _asked, ref = find_all(text)[0]
    record = providers.one(ref)
    source = NAMES.get(ref[0], "page") if ref[0] != PAGE else "page"
    summary = library.import_records([record], collection=collection or DEFAULT_COLLECTION, source=source,
                                     fmt=ref[0], path=text)
    return summary


__all__ = ["AddProblem", "DEFAULT_COLLECTION", "import_reference", "is_reference"]

"""`paperclub import 2106.01345 https://doi.org/10... --collection reading`: the operator's
import of papers by link or id, through the same providers as `add` in chat. (A feed
source's reference, such as a Zotero group's `zotero:GROUP/COLLECTION`, is imported by
the feature that offers the source: Feature.feed_sources.)"""

from __future__ import annotations

from bot.adding.providers import NAMES, AddProblem, Providers
from bot.corpus.identifiers import PAGE, find_all
from bot.corpus.importing import ImportSummary
from bot.corpus.library import Library

DEFAULT_COLLECTION = "imported"


def is_reference(text: str) -> bool:
    """The argument is one paper link or id (and so not a file name)."""
    found = find_all(text)
    return len(found) == 1 and found[0][0] == text.strip().strip("<>")


def import_reference(library: Library, providers: Providers, text: str, collection: str | None) -> ImportSummary:
    """Fetch one paper and store it; AddProblem (a one-line reason) or CorpusFormatError."""
    _asked, ref = find_all(text)[0]
    record = providers.one(ref)
    source = NAMES.get(ref[0], "page") if ref[0] != PAGE else "page"
    summary = library.import_records([record], collection=collection or DEFAULT_COLLECTION, source=source,
                                     fmt=ref[0], path=text)
    return summary


__all__ = ["DEFAULT_COLLECTION", "AddProblem", "import_reference", "is_reference"]

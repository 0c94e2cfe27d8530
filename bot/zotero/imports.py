"""`paperclub import zotero:GROUP/COLLECTION` (or `zotero:GROUP` for the whole library):
a group library's items brought into the corpus, merged with the papers it already holds
by the usual identity rules (DOI, arXiv id, title; bot.corpus.importing). The key is the
operator's, PAPERCLUB_ZOTERO_API_KEY.

One run reads at most PAPERCLUB_ZOTERO_IMPORT_MAX items (10,000 unless set), whatever the
server says it holds or keeps answering, and says so when it stops there. Pages are read
one at a time and made into records as they come (a record keeps only the fields a paper
stores, each of bounded length) and stored BATCH items at a time, each batch all or none
as a feed's page is: a run holds one raw page and one batch, not all of them."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

from bot.corpus import identifiers
from bot.corpus.fetch import FeedError
from bot.corpus.importing import ImportSummary
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, check_record
from bot.zotero import answers
from bot.zotero.api import PAGE, ZoteroApi, ZoteroCut, ZoteroError
from bot.zotero.items import record_of
from bot.zotero.sync import ZoteroConfig

log = logging.getLogger(__name__)

PREFIX = "zotero:"
# Items stored per transaction: a run's records are never all held at once (an abstract
# may be 100,000 characters), and a failure costs at most the batch being read.
BATCH = 500
_REFERENCE = re.compile(r"zotero:(\d{1,15})(?:/(.+))?", re.I | re.S)


class ZoteroImportProblem(Exception):
    """The import could not be done; str() says why and what to do."""


def is_zotero_reference(text: str) -> bool:
    return bool(_REFERENCE.fullmatch(text.strip()))


def import_collection(library: Library, config: ZoteroConfig, text: str, collection: str | None) -> ImportSummary:
    """Read the top-level items of the group's collection (at most config.import_max) and
    store them, BATCH items at a time."""
    found = _REFERENCE.fullmatch(text.strip())
    if found is None:
        raise ZoteroImportProblem(f"{text!r} is not zotero:GROUP or zotero:GROUP/COLLECTION")
    if not config.env_key:
        raise ZoteroImportProblem("set PAPERCLUB_ZOTERO_API_KEY to a key that may read the group")
    group_id, asked = int(found.group(1)), (found.group(2) or "").strip()
    api = config.api(config.env_key)
    summary = ImportSummary(path=text, format="zotero")
    try:
        key, name = _collection(api, group_id, asked) if asked else (None, None)
        source = f"zotero:{group_id}" + (f"/{key}" if key else "")
        # A collection name searches can name (`in:zotero-4242-reading-group`): no spaces.
        summary.collection = collection or "-".join(["zotero", str(group_id),
                                                     *re.findall(r"\w+", (name or "").lower())])
        reading = _Reading(api, group_id, key, config.import_max, source)
        for records in reading.batches():
            _add(summary, library.import_records(records, collection=summary.collection, source=source,
                                                 fmt="zotero", path=text))
    except ZoteroError as problem:
        raise ZoteroImportProblem(_failed(problem, group_id) + (
            f" ({summary.total:,} items were stored before it; importing again stores none twice)"
            if summary.total else "")) from None
    summary.warnings += [f"{source}: skipped item {which}: {why}" for which, why in reading.skipped]
    if reading.more:
        summary.warnings.append(
            f"{source}: stopped after {reading.read:,} items, the most one run reads; the group holds more. Set "
            "PAPERCLUB_ZOTERO_IMPORT_MAX higher to import the rest (items already imported are not doubled).")
    return summary


def _failed(problem: ZoteroError, group_id: int) -> str:
    if problem.status == 404:
        return f"Zotero has no group {group_id} (HTTP 404)"
    if problem.status in (401, 403):
        return f"Zotero refused PAPERCLUB_ZOTERO_API_KEY for group {group_id} (HTTP {problem.status})"
    return str(problem)


def _add(summary: ImportSummary, part: ImportSummary) -> None:
    summary.added += part.added
    summary.updated += part.updated
    summary.unchanged += part.unchanged
    summary.vectors += part.vectors
    summary.warnings += part.warnings


class _Reading:
    """One run's read of a collection: at most `most` items, in batches of records; then
    how many items were read, whether the group has more, and the items skipped."""

    def __init__(self, api: ZoteroApi, group_id: int, key: str | None, most: int, source: str):
        self.api, self.group_id, self.key, self.most, self.source = api, group_id, key, most, source
        self.read = 0
        self.more = False
        self.skipped: list[tuple[str, str]] = []

    def batches(self) -> Iterator[list[PaperRecord]]:
        """Records of BATCH items at a time: a page's raw rows are dropped once made into
        records, and a batch's records once stored."""
        page: list[object] = []
        records: list[PaperRecord] = []
        # One page past the cap: whether anything comes after the `most`-th item.
        rows = self.api.all_items(self.group_id, self.key, pages=self.most // PAGE + 1)
        try:
            for row in rows:
                if self.read == self.most:
                    self.more = True
                    break
                page.append(row)
                self.read += 1
                if len(page) == PAGE:
                    records += self._records(page)
                    page = []
                if self.read % BATCH == 0:
                    yield records
                    records = []
        except ZoteroCut as cut:
            if cut.late:
                raise
            self.more = True  # every page full up to the page cap: the server has more
        finally:
            rows.close()
        records += self._records(page)
        if records:
            yield records

    def _records(self, rows: list[object]) -> list[PaperRecord]:
        records, bad = _records(rows, self.group_id, self.source, self.read - len(rows))
        self.skipped += bad
        return records


def _records(rows: list[object], group_id: int, source: str, before: int
             ) -> tuple[list[PaperRecord], list[tuple[str, str]]]:
    """The items as records the library can store; those skipped as (item, why), each
    logged once: one odd item costs that item, not the import. `before`: how many items
    came before these (for their line)."""
    records = []
    items, bad = answers.items(rows, source)
    for line, item in enumerate(items, before + 1):
        record = record_of(item, group_id, line)
        if record is None:
            continue
        record.external_ids = identifiers.normalise_ids(record.external_ids)
        try:
            check_record(record, source)
        except CorpusFormatError as problem:
            bad.append((item["key"], problem.message))
            continue
        records.append(record)
    for which, why in bad:
        log.warning("%s: skipped item %s: %s", source, which, why)
    return records, bad


def find_collection(api: ZoteroApi, group_id: int, asked: str) -> tuple[tuple[str, str] | None, list[str]]:
    """The group's collection keyed or named `asked` as (key, name), or None and the names
    of some of its collections (to say which there are). A key is looked up by itself
    first, so that a group with more collections than one read lists (ZoteroCut) can
    still be named by a collection's key."""
    if answers.is_key(asked):
        try:
            by_key = answers.collections([api.collection(group_id, asked)])
        except ZoteroError as problem:
            if problem.status != 404:
                raise
            by_key = []
        if by_key:
            return by_key[0], []
    collections = answers.collections(api.collections(group_id))
    for match in ([c for c in collections if c[0] == asked],
                  [c for c in collections if c[1].casefold() == asked.casefold()]):
        if match:
            return match[0], []
    return None, sorted(n for _, n in collections)[:10]


def _collection(api: ZoteroApi, group_id: int, asked: str) -> tuple[str, str]:
    try:
        found, names = find_collection(api, group_id, asked)
    except ZoteroCut as cut:
        if cut.late:
            raise
        raise ZoteroImportProblem(f"group {group_id} has more collections than paperclub reads in one go: give "
                                  "the collection by its key (zotero:GROUP/KEY, the 8 characters in its "
                                  "address)") from None
    if found is None:
        raise ZoteroImportProblem(f"group {group_id} has no collection {asked!r} (its collections: "
                                  f"{', '.join(names) or 'none'})")
    return found


class ZoteroFeed:
    """`paperclub feed add COLLECTION zotero:GROUP/COLLECTION --cron ...`: the group's
    collection imported again on a schedule (bot.corpus.feeds.FeedSource), as the import
    does it once."""

    prefix = PREFIX

    def __init__(self, config: ZoteroConfig):
        self.config = config

    def check(self, url: str) -> str:
        if not is_zotero_reference(url):
            raise FeedError(f"url {url!r}: give zotero:GROUP or zotero:GROUP/COLLECTION (a name or a key)")
        return url.strip()

    def run(self, library: Library, url: str, collection: str | None) -> ImportSummary:
        try:
            return import_collection(library, self.config, url, collection)
        except ZoteroImportProblem as problem:
            raise FeedError(f"{url}: {problem}") from None

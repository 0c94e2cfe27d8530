"""`paperclub import zotero:GROUP/COLLECTION` (or `zotero:GROUP` for the whole library):
a group library's items brought into the corpus, merged with the papers it already holds
by the usual identity rules (DOI, arXiv id, title; bot.corpus.importing). The key is the
operator's, PAPERCLUB_ZOTERO_API_KEY."""

from __future__ import annotations

import logging
import re

from bot.corpus import identifiers
from bot.corpus.fetch import FeedError
from bot.corpus.importing import ImportSummary
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, check_record
from bot.zotero import answers
from bot.zotero.api import ZoteroApi, ZoteroError
from bot.zotero.items import record_of
from bot.zotero.sync import ZoteroConfig

log = logging.getLogger(__name__)

PREFIX = "zotero:"
_REFERENCE = re.compile(r"zotero:(\d{1,15})(?:/(.+))?", re.I | re.S)


class ZoteroImportProblem(Exception):
    """The import could not be done; str() says why and what to do."""


def is_zotero_reference(text: str) -> bool:
    return bool(_REFERENCE.fullmatch(text.strip()))


def import_collection(library: Library, config: ZoteroConfig, text: str, collection: str | None) -> ImportSummary:
    """Read every top-level item of the group's collection and store it."""
    found = _REFERENCE.fullmatch(text.strip())
    if found is None:
        raise ZoteroImportProblem(f"{text!r} is not zotero:GROUP or zotero:GROUP/COLLECTION")
    if not config.env_key:
        raise ZoteroImportProblem("set PAPERCLUB_ZOTERO_API_KEY to a key that may read the group")
    group_id, asked = int(found.group(1)), (found.group(2) or "").strip()
    api = config.api(config.env_key)
    try:
        key, name = _collection(api, group_id, asked) if asked else (None, None)
        items = list(api.all_items(group_id, key))
    except ZoteroError as problem:
        if problem.status == 404:
            raise ZoteroImportProblem(f"Zotero has no group {group_id} (HTTP 404)") from None
        if problem.status in (401, 403):
            raise ZoteroImportProblem(f"Zotero refused PAPERCLUB_ZOTERO_API_KEY for group {group_id} "
                                      f"(HTTP {problem.status})") from None
        raise ZoteroImportProblem(str(problem)) from None
    source = f"zotero:{group_id}" + (f"/{key}" if key else "")
    records, skipped = _records(items, group_id, source)
    # A collection name searches can name (`in:zotero-4242-reading-group`): no spaces.
    default = "-".join(["zotero", str(group_id), *re.findall(r"\w+", (name or "").lower())])
    summary = library.import_records(records, collection=collection or default, source=source, fmt="zotero",
                                     path=text)
    summary.warnings += [f"{source}: skipped item {which}: {why}" for which, why in skipped]
    return summary


def _records(rows: list[object], group_id: int, source: str) -> tuple[list[PaperRecord], list[tuple[str, str]]]:
    """The items as records the library can store; those skipped as (item, why), each
    logged once: one odd item costs that item, not the import."""
    items, skipped = answers.items(rows, source)
    records = []
    for line, item in enumerate(items, 1):
        record = record_of(item, group_id, line)
        if record is None:
            continue
        record.external_ids = identifiers.normalise_ids(record.external_ids)
        try:
            check_record(record, source)
        except CorpusFormatError as problem:
            skipped.append((item["key"], problem.message))
            continue
        records.append(record)
    for which, why in skipped:
        log.warning("%s: skipped item %s: %s", source, which, why)
    return records, skipped


def _collection(api: ZoteroApi, group_id: int, asked: str) -> tuple[str, str]:
    collections = answers.collections(api.collections(group_id))
    for match in ([c for c in collections if c[0] == asked], [c for c in collections if c[1].casefold() ==
                                                               asked.casefold()]):
        if match:
            return match[0]
    names = ", ".join(sorted(n for _, n in collections)[:10]) or "none"
    raise ZoteroImportProblem(f"group {group_id} has no collection {asked!r} (its collections: {names})")


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

"""Scheduled corpus feeds: a collection refreshed from a URL on a cron (`paperclub feed`).

Two parts, none of them tied to a chat platform (the polite HTTP client that fetches,
with the arXiv API's rules, is bot/corpus/fetch.py):

* `Feeds`: the feeds table (one feed per collection): add, remove, list, record a run.
* `refresh` and `feed_jobs`: fetch a feed, import every page through
  `Library.import_file` (same readers, same all-or-nothing rule per page), bring the
  search index up to date and record the outcome; never raising out of a scheduled job.

Cron expressions are classic five-field crontabs in UTC. APScheduler 3 numbers weekdays
from Monday (0 = Monday), crontab from Sunday (0 and 7 = Sunday): `cron_trigger` turns
numeric weekdays into names first, so "0 6 * * 1-5" means Monday to Friday as in cron.
Always build a feed's trigger with `cron_trigger`, never with `CronTrigger.from_crontab`
on the stored text.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from apscheduler.triggers.cron import CronTrigger
from sqlalchemy import delete, select, update

from bot.corpus.fetch import FeedError, Fetcher, FetchError, FetchPolicy, is_arxiv_query
from bot.corpus.formats import EXAMPLE_FEED_URL as EXAMPLE_URL
from bot.corpus.importing import ImportSummary
from bot.corpus.readers import FORMATS
from bot.corpus.records import COLLECTION_MAX, CorpusFormatError
from store import Database
from store.database import dml_result, upsert_insert
from store.models import Feed, utcnow

log = logging.getLogger(__name__)

JOB_PREFIX = "feed:"
# A run that starts up to an hour late (the process was restarting at 06:00) still runs;
# missed runs collapse into one; never two runs of one feed at once.
FEED_MISFIRE_GRACE_SECONDS = 3600
MAX_MESSAGE = 2000


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


# --- validation ---------------------------------------------------------------------------

_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab numbers 0..6
_CRON_HELP = "five fields, minute hour day-of-month month day-of-week, in UTC, e.g. '0 6 * * *'"


def cron_trigger(cron: str) -> CronTrigger:
    """The APScheduler trigger for a five-field crontab in UTC, with crontab's weekdays."""
    fields = (cron or "").split()
    if len(fields) != 5:
        raise FeedError(f"cron {cron!r}: {len(fields)} field(s); a crontab has {_CRON_HELP}")
    if fields[2] != "*" and fields[4] != "*":
        # cron runs when either matches, APScheduler only when both do: refuse the doubt.
        raise FeedError(
            f"cron {cron!r}: restricts both the day of the month and the weekday, which cron "
            "and APScheduler read differently; restrict only one of them"
        )
    fields[4] = _weekdays(fields[4], cron)
    try:
        return CronTrigger.from_crontab(" ".join(fields), timezone="UTC")
    except ValueError as problem:
        raise FeedError(f"cron {cron!r}: {problem}; a crontab has {_CRON_HELP}") from None


def _weekdays(text: str, cron: str) -> str:
    """A crontab weekday field (0 or 7 = Sunday, names allowed) as APScheduler day names."""
    if text == "*":
        return text
    days: set[int] = set()
    for item in text.lower().split(","):
        base, slash, step_text = item.partition("/")
        try:
            step = int(step_text) if slash else 1
            if step < 1:
                raise ValueError
            if base == "*":
                low, high = 0, 6
            elif "-" in base:
                first, last = base.split("-", 1)
                low, high = _day(first), _day(last)
            else:
                low = _day(base)
                high = 6 if slash else low
        except ValueError:
            raise FeedError(
                f"cron {cron!r}: weekday {item!r} is not a day: use 0-7 (0 and 7 are Sunday) "
                "or sun, mon, tue, wed, thu, fri, sat"
            ) from None
        if low > high:
            raise FeedError(f"cron {cron!r}: weekday range {item!r} runs backwards")
        days.update(day % 7 for day in range(low, high + 1, step))
    if len(days) == 7:
        return "*"
    return ",".join(_DAY_NAMES[day] for day in sorted(days))


def _day(text: str) -> int:
    if text in _DAY_NAMES:
        return _DAY_NAMES.index(text)
    number = int(text)
    if not 0 <= number <= 7:
        raise ValueError(text)
    return number


def check_url(url: str) -> str:
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise FeedError(f"url {url!r}: give an http:// or https:// address, e.g. {EXAMPLE_URL}")
    if is_arxiv_query(url):
        for name in ("start", "max_results"):
            value = dict(parse_qsl(parts.query)).get(name)
            if value is not None and not value.isdigit():
                raise FeedError(f"url {url!r}: {name}={value!r} is not a whole number")
    return url


def check_collection(collection: str) -> str:
    name = (collection or "").strip()
    if not name:
        raise FeedError("collection: give a name, e.g. cs-lg")
    if len(name) > COLLECTION_MAX or any(ord(c) < 32 for c in name):
        raise FeedError(f"collection {name[:40]!r}: at most {COLLECTION_MAX} printable characters")
    return name


def check_format(fmt: str | None) -> str | None:
    if fmt is None or fmt == "":
        return None
    if fmt not in FORMATS:
        raise FeedError(f"format {fmt!r}: choose one of {', '.join(FORMATS)} (or none: detect)")
    return fmt


# --- the feeds table ---------------------------------------------------------------------


class FeedSource(Protocol):
    """A feed that is not a page to fetch (`zotero:GROUP/COLLECTION`): a feature above the
    corpus offers it (bot.app lists them), and a feed whose URL starts with its prefix is
    checked and imported by it instead of fetched."""

    prefix: str  # "zotero:"

    def check(self, url: str) -> str:
        """The URL as stored; FeedError saying what to give otherwise."""

    def run(self, library: Any, url: str, collection: str | None) -> ImportSummary:
        """Import what the feed holds into `collection` (None: the source's own name for
        it); FeedError, its message starting with the URL, when it cannot."""


def source_for(sources: Sequence[FeedSource], url: str) -> FeedSource | None:
    return next((s for s in sources if url.strip().lower().startswith(s.prefix)), None)


@dataclass(eq=False)  # a service: compared and hashed by identity, as before
class Feeds:
    """The feeds, one per collection. Rows come back detached, with every column loaded.
    `sources`: the feeds that are not pages (FeedSource), whose URLs `add` accepts too."""

    db: Database
    sources: Sequence[FeedSource] = ()

    def add(self, collection: str, url: str, cron: str, fmt: str | None = None) -> Feed:
        """Add a feed, or change the URL, cron and format of the collection's feed (which
        is enabled again); its history (created_at, last run) is kept."""
        collection = check_collection(collection)
        source = source_for(self.sources, url or "")
        url = source.check(url.strip()) if source else check_url(url)
        cron = " ".join(cron.split()) if cron else ""
        cron_trigger(cron)
        fmt = check_format(fmt)
        row = {"collection": collection, "url": url, "cron": cron, "format": fmt, "enabled": True}
        with self.db.session() as session:
            statement = upsert_insert(session, Feed).values({**row, "created_at": utcnow()})
            session.execute(
                statement.on_conflict_do_update(
                    index_elements=["collection"],
                    set_={k: statement.excluded[k] for k in ("url", "cron", "format", "enabled")},
                )
            )
            return session.scalars(select(Feed).where(Feed.collection == collection)).one()

    def remove(self, collection: str) -> bool:
        """Forget the feed (the papers it brought stay); False if there was none."""
        with self.db.session() as session:
            result = session.execute(delete(Feed).where(Feed.collection == collection.strip()))
            return bool(dml_result(result).rowcount)

    def list(self) -> list[Feed]:
        with self.db.session() as session:
            return list(session.scalars(select(Feed).order_by(Feed.collection)))

    def get(self, collection: str) -> Feed | None:
        with self.db.session() as session:
            return session.scalar(select(Feed).where(Feed.collection == collection.strip()))

    def set_enabled(self, collection: str, enabled: bool) -> bool:
        with self.db.session() as session:
            result = session.execute(
                update(Feed).where(Feed.collection == collection.strip()).values(enabled=enabled)
            )
            return bool(dml_result(result).rowcount)

    def record(self, collection: str, status: str, message: str, at: datetime) -> bool:
        """Remember a run's outcome; False if the feed was removed meanwhile."""
        if status not in ("ok", "failed"):
            raise ValueError(f"status {status!r}: ok or failed")
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 1] + "…"
        with self.db.session() as session:
            result = session.execute(
                update(Feed)
                .where(Feed.collection == collection)
                .values(last_run_at=at, last_status=status, last_message=message)
            )
            return bool(dml_result(result).rowcount)


def next_run(feed: Feed | str, after: datetime | None = None) -> datetime | None:
    """When the feed's cron fires next (UTC) after `after` (default: now)."""
    cron = feed if isinstance(feed, str) else feed.cron
    after = after or utc_now()
    fires: datetime | None = cron_trigger(cron).get_next_fire_time(None, after)  # (untyped)
    return fires


# --- refreshing ---------------------------------------------------------------------------


@dataclass
class RefreshResult:
    collection: str
    status: str  # ok | failed
    message: str
    at: datetime
    pages: int = 0
    entries: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    failed_pages: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def refresh(
    services: Any,
    feed: Feed | str,
    *,
    fetcher: Fetcher | None = None,
    clock: Callable[[], datetime] = utc_now,
    update_index: bool = True,
) -> RefreshResult:
    """Fetch the feed, import it into its collection, update the search index and record
    the outcome on the feed. `services` needs .db, .library and .search (bot.app.Services).
    Never raises: every problem becomes a "failed" result, logged and recorded."""
    collection = feed if isinstance(feed, str) else feed.collection
    result = RefreshResult(collection, "failed", "", clock())
    sources = getattr(services, "feed_sources", ())
    feeds = Feeds(services.db, sources)
    try:
        row = feeds.get(collection) if isinstance(feed, str) else feed
        if row is None:
            result.message = f"no feed for collection {collection!r}"
            log.error("feed %s: %s", collection, result.message)
            return result
        source = source_for(sources, row.url)
        if source is not None:
            _import_source(services.library, source, row, result)
        else:
            _import_pages(services.library, row, fetcher or Fetcher(FetchPolicy.from_env()), result)
    except (FetchError, FeedError) as problem:
        result.message = str(problem)
    except Exception as problem:  # a scheduled job must never raise
        log.exception("feed %s: refresh failed", collection)
        result.message = f"unexpected {type(problem).__name__}: {problem}"
    if update_index and (result.added or result.updated):
        try:
            services.search.current()
        except Exception as problem:
            log.exception("feed %s: search index update failed", collection)
            result.message += f"; the search index was not updated ({type(problem).__name__}: {problem})"
    level = logging.INFO if result.ok else logging.WARNING
    log.log(level, "feed %s: %s: %s", collection, result.status, result.message)
    try:
        feeds.record(collection, result.status, result.message, result.at)
    except Exception:
        log.exception("feed %s: could not record the run", collection)
    return result


def _import_pages(library: Any, feed: Feed, fetcher: Fetcher, result: RefreshResult) -> None:
    pages = fetcher.fetch(feed.url)
    result.pages = len(pages)
    failures: list[str] = []
    # Every page is written under the same file name (in its own folder): the name is the
    # papers' source, and a paper moving from page 1 to page 2 must stay the same source.
    name = f"{_slug(feed.collection)}.feed"
    with tempfile.TemporaryDirectory(prefix="paperclub-feed-") as tmp:
        for number, page in enumerate(pages, 1):
            if page.entries == 0:
                continue
            path = Path(tmp, f"page{number}", name)
            path.parent.mkdir()
            path.write_bytes(page.body)
            try:
                summary = library.import_file(path, feed.collection, feed.format)
            except CorpusFormatError as problem:
                result.failed_pages.append(number)
                failures.append(
                    f"page {number} ({page.url}) not imported: {name}:{problem.line}: {problem.message}"
                )
                continue
            except (OSError, ValueError) as problem:
                result.failed_pages.append(number)
                failures.append(f"page {number} ({page.url}) not imported: {problem}")
                continue
            result.entries += summary.total
            result.added += summary.added
            result.updated += summary.updated
            result.unchanged += summary.unchanged
    counts = (
        f"{result.entries} entries from {result.pages - len(failures)} page(s): "
        f"{result.added} added, {result.updated} updated, {result.unchanged} unchanged"
    )
    if not result.entries and not failures:
        counts = "the feed had no entries"
    if failures:
        result.status = "failed"
        result.message = "; ".join(failures) + f" (imported: {counts})"
    else:
        result.status = "ok"
        result.message = counts


def _import_source(library: Any, source: FeedSource, feed: Feed, result: RefreshResult) -> None:
    summary = source.run(library, feed.url, feed.collection)
    result.entries, result.added = summary.total, summary.added
    result.updated, result.unchanged = summary.updated, summary.unchanged
    result.status = "ok"
    result.message = (f"{summary.total} entries: {summary.added} added, {summary.updated} updated, "
                      f"{summary.unchanged} unchanged")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "feed"


# --- scheduling ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedJob:
    """One feed's scheduled refresh: add it to an APScheduler scheduler (`add_to`)."""

    id: str  # "feed:<collection>"
    trigger: CronTrigger
    run: Callable[[], None]
    collection: str
    cron: str

    @property
    def name(self) -> str:
        # The cron is part of the name, so sync_jobs sees a changed schedule.
        return f"{self.id} [{self.cron}]"

    def add_to(self, scheduler: Any) -> None:
        scheduler.add_job(
            self.run,
            self.trigger,
            id=self.id,
            name=self.name,
            misfire_grace_time=FEED_MISFIRE_GRACE_SECONDS,
            coalesce=True,
            max_instances=1,
            replace_existing=True,
        )


def feed_jobs(services: Any, fetcher: Fetcher | None = None) -> list[FeedJob]:
    """A job per enabled feed. A row with an unusable cron (written by hand) is logged
    and left out, so one bad feed never stops the scheduler."""
    jobs = []
    for feed in Feeds(services.db).list():
        if not feed.enabled:
            continue
        try:
            trigger = cron_trigger(feed.cron)
        except FeedError as problem:
            log.error("feed %s not scheduled: %s", feed.collection, problem)
            continue
        jobs.append(FeedJob(JOB_PREFIX + feed.collection, trigger, _job(services, feed.collection, fetcher),
                            feed.collection, feed.cron))
    return jobs


def _job(services: Any, collection: str, fetcher: Fetcher | None) -> Callable[[], None]:
    def run() -> None:
        try:
            # The row is read again at run time: a changed URL applies from the next run.
            refresh(services, collection, fetcher=fetcher)
        except Exception:  # refresh does not raise; this is the last line of defence
            log.exception("feed %s: job failed", collection)

    return run


def sync_jobs(scheduler: Any, services: Any, fetcher: Fetcher | None = None) -> list[str]:
    """Make the scheduler's "feed:" jobs match the enabled feeds (feeds added, removed or
    re-timed by `paperclub feed` in another process); returns the feed job ids. Cheap
    enough to call from the minute tick. Jobs whose cron did not change are left alone."""
    wanted = {job.id: job for job in feed_jobs(services, fetcher)}
    for job in scheduler.get_jobs():
        if job.id.startswith(JOB_PREFIX) and (job.id not in wanted or job.name != wanted[job.id].name):
            scheduler.remove_job(job.id)
    present = {job.id for job in scheduler.get_jobs()}
    for job_id, job in wanted.items():
        if job_id not in present:
            job.add_to(scheduler)
    return sorted(wanted)

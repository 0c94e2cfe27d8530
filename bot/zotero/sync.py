"""Writing a linked channel's papers, votes and notes to its Zotero collection, a bounded
step each scheduler minute.

What to write is read from the tables the other features keep (posts, the reading queue,
additions, notes, votes), not hooked into them: the papers the channel touched that have
no item yet in `zotero_items`, the notes without a `zotero_notes` row, the items whose
vote tags changed. An anti-join against those maps is the high-water mark: unlike a
timestamp it misses no row committed late by another replica, and it sees a vote taken
back. The work per minute is bounded (a page budget for reading, one write of at most 50
objects, a few tag updates per link).

One sync of a link, under its lease (bot/zotero/links.py):
1. a write that got no answer last time is sent again with the same write token and the
   same item keys (made here): Zotero answers 412 if it had accepted it, and the items
   are then read back by key, so nothing is created twice;
2. the collection's items changed since the last read are read (`since=`), so a paper the
   collection already holds (same DOI or arXiv id) is adopted instead of written again;
3. new items and child notes are written (one request, keys and token stored first);
4. vote tags are rewritten where they changed, with If-Unmodified-Since-Version: a 412
   (someone edited the item) reads it again and retries.
A Backoff header stops the sync after the answer it came with, until it has passed; a 429
or 503 with Retry-After postpones the next sync by that much and counts as a failure.
Either is at most a day (bot.zotero.api.WAIT_MOST): the link is deferred to a stored time
(`retry_at`), never slept on, and released whatever the header said.

Every answer is checked by bot.zotero.answers before use: one item of the collection that
cannot be read is skipped (logged once, with the link's group and the item's key), the
rest are used; an answer that cannot be used at all fails the sync, saying why.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, union_all
from sqlalchemy.orm import Session

from bot.corpus.cutoffs import Cutoffs
from bot.corpus.identifiers import ARXIV, DOI
from bot.corpus.records import ID_MAX
from bot.services.models import Addition, PaperNote, Post, PostVote, QueueItem
from bot.zotero import answers
from bot.zotero.api import PAGE, WRITE_BATCH, ZoteroApi, ZoteroCut, ZoteroError, wait_seconds
from bot.zotero.items import (
    READ_TAG,
    TAG_PREFIX,
    item_ids,
    new_key,
    new_token,
    note_item,
    paper_item,
)
from bot.zotero.keys import KeyBox
from bot.zotero.links import ZoteroLinks
from bot.zotero.models import ZoteroItem, ZoteroLink, ZoteroNote
from bot.zotero.settings import IMPORT_MAX, ZoteroSettings
from store import Database
from store.models import Channel, Paper, utcnow

log = logging.getLogger(__name__)

LINKS_PER_TICK = 20
READ_PAGES_PER_SYNC = 5  # 500 items a minute: a large collection is read over a few minutes
READ_SECONDS = 30.0  # a sync's reading stops this long after it began; the next sync goes on from there
TAG_UPDATES_PER_SYNC = 10
PATCH_TRIES = 3
DEFAULT_EMOJI = ("👍", "👎", "✅")  # bot/reactions/commands.py's; a channel may choose its own
Written = ZoteroItem | ZoteroNote  # the row of an object a sync writes: an item or a child note


@dataclass(frozen=True)
class ZoteroConfig:
    """Where the API is, the operator's key, and the box for keys given in chat."""

    api_url: str = "https://api.zotero.org"
    env_key: str | None = None
    box: KeyBox | None = None
    make_api: Callable[[str, str], ZoteroApi] = ZoteroApi
    import_max: int = IMPORT_MAX  # items one import reads at most (PAPERCLUB_ZOTERO_IMPORT_MAX)
    # Every client it makes shares these, so that a stop cuts every request in flight.
    cutoffs: Cutoffs = field(default_factory=Cutoffs, compare=False)

    def api(self, key: str) -> ZoteroApi:
        api = self.make_api(self.api_url, key)
        api.cutoffs = self.cutoffs
        return api

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ZoteroConfig:
        """PAPERCLUB_ZOTERO_API_URL, PAPERCLUB_ZOTERO_API_KEY, PAPERCLUB_SECRET_KEY,
        PAPERCLUB_ZOTERO_IMPORT_MAX."""
        settings = ZoteroSettings.from_env(env)
        return cls(settings.zotero_api_url, settings.api_key, KeyBox(settings.secret) if settings.secret else None,
                   import_max=settings.import_max)


class KeyUnusable(Exception):
    """No key this link can use; str() says what a manager can do."""


class Postponed(Exception):
    """Zotero asked us to slow down (Backoff): stop this sync, start the next after `seconds`."""

    def __init__(self, seconds: float):
        super().__init__(f"Zotero asked to wait {seconds:.0f} s")
        self.seconds = seconds


class ZoteroSync:
    def __init__(self, db: Database, links: ZoteroLinks, config: ZoteroConfig):
        self.db = db
        self.links = links
        self.config = config

    def key_of(self, link: ZoteroLink) -> str:
        if link.api_key is None:
            if not self.config.env_key:
                raise KeyUnusable("there is no API key: a manager gives one privately with `zotero key KEY`")
            return self.config.env_key
        key = self.config.box.open(link.api_key) if self.config.box else None
        if key is None:
            raise KeyUnusable("the key given in chat cannot be decrypted (PAPERCLUB_SECRET_KEY changed or is "
                              "not set): a manager gives it again with `zotero key KEY`")
        return key

    # --- the tick ------------------------------------------------------------------------

    def tick(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for link_id in self.links.due(now, LINKS_PER_TICK):
            if stopping():
                break
            owner = self.links.claim(link_id, now)
            if owner is None:  # another process has it
                continue
            self._sync_claimed(link_id, owner, now, counts)
        return {name: value for name, value in counts.items() if value}

    def _sync_claimed(self, link_id: int, owner: str, now: datetime, counts: dict[str, int]) -> None:
        link = self.db_link(link_id)
        if link is None:
            return
        error, wait, refused = None, None, False
        try:
            api = self.config.api(self.key_of(link))
            self.sync(link, api, counts)
        except Postponed as postponed:
            wait = _wait(postponed.seconds)
        except KeyUnusable as problem:
            error, refused = str(problem), True
        except ZoteroError as problem:
            error, refused = describe(problem, link), problem.status in (401, 403, 404)
            wait = _wait(problem.retry_after or problem.backoff)
        except Exception:  # a bug syncing one link must not stop the others or hold its lease
            log.exception("zotero sync of group %s failed", link.group_id)
            error = "paperclub met an error of its own (the operator's log has it)"
        if error:
            counts["zotero_failed"] += 1
            log.warning("zotero sync of group %s failed: %s", link.group_id, error)
        self.links.finish(link_id, owner, now, error, wait, refused)

    def db_link(self, link_id: int) -> ZoteroLink | None:
        with self.db.session() as session:
            return session.get(ZoteroLink, link_id)

    def sync(self, link: ZoteroLink, api: ZoteroApi, counts: dict[str, int]) -> None:
        steps = (self._resend, self._read, self._create, self._retag)
        for step in steps:
            done = step(link, api, counts)
            if api.backoff:
                raise Postponed(api.backoff)
            if done is False:  # the collection is still being read: write nothing yet
                return

    # --- 1. a write that got no answer ---------------------------------------------------

    def _resend(self, link: ZoteroLink, api: ZoteroApi, counts: dict[str, int]) -> None:
        with self.db.session() as session:
            token = session.scalar(select(ZoteroItem.write_token).where(
                ZoteroItem.link_id == link.id, ZoteroItem.write_token.is_not(None)).limit(1)) or \
                session.scalar(select(ZoteroNote.write_token).where(
                    ZoteroNote.link_id == link.id, ZoteroNote.write_token.is_not(None)).limit(1))
        if token:
            self._send(link, api, token, counts)

    # --- 2. what the collection holds ----------------------------------------------------

    def _read(self, link: ZoteroLink, api: ZoteroApi, counts: dict[str, int]) -> bool:
        """Read on from where the last sync stopped, at most READ_PAGES_PER_SYNC pages and
        READ_SECONDS; True once the collection has been read to its end. Each page's place
        is stored with what it brought, so a read cut by the cap, the deadline or a failure
        resumes at the next page: an item is remembered once, none is passed over."""
        start = link.read_start
        with api.within(READ_SECONDS):
            for _ in range(READ_PAGES_PER_SYNC):
                try:
                    page = api.items_page(_group(link), link.collection_key, link.read_version, start)
                except ZoteroCut:
                    log.info("zotero link %d (group %s): read cut at item %d, going on next time", link.id,
                             link.group_id, start)
                    break
                count = self._read_page(link, page.data)
                start += count
                # Total-Results is not believed (too many never ends a read, too few would skip items):
                # the end is a page of fewer items than asked.
                finished = count < PAGE
                self._keep_place(link, start, page.version, finished)
                if finished:
                    return True
                if api.backoff:
                    break
        return False

    def _read_page(self, link: ZoteroLink, data: object) -> int:
        """Remember a page's items; how many rows it had (those skipped included)."""
        items, skipped = answers.items(data, f"GET the items of group {link.group_id}")
        for which, why in skipped:  # read once: `since` moves past it with the page
            log.warning("zotero link %d (group %s): skipped item %s: %s", link.id, link.group_id, which, why)
        self._remember(link.id, items)
        return len(items) + len(skipped)

    def _keep_place(self, link: ZoteroLink, start: int, version: int | None, finished: bool) -> None:
        """The read's place after a page: the next item, or, at the end, the library's
        version the next read starts `since`."""
        with self.db.session() as session:
            # Unlinked meanwhile: NoResultFound ends this sync (an error of its own, logged).
            row = session.get_one(ZoteroLink, link.id)
            if finished:
                row.read_version, row.read_start = version or row.read_version, 0
            else:
                row.read_start = start
        if finished:
            link.read_version, link.read_start = version or link.read_version, 0
        else:
            link.read_start = start

    def _remember(self, link_id: int, items: list[answers.Item]) -> None:
        """Each item read (checked: bot.zotero.answers): its version, and the ids it names
        (for matching papers to it)."""
        if not items:
            return
        with self.db.session() as session:
            known = {row.item_key: row for row in session.scalars(select(ZoteroItem).where(
                ZoteroItem.link_id == link_id, ZoteroItem.item_key.in_([i["key"] for i in items])))}
            for item in items:
                ids = {scheme: value for scheme, value in item_ids(item["data"]).items()
                       if len(value) <= ID_MAX}  # a longer "DOI" is nobody's: it matches no paper
                row = known.get(item["key"])
                if row is None:
                    session.add(ZoteroItem(link_id=link_id, item_key=item["key"], version=item.get("version"),
                                           state="remote", doi=ids.get(DOI), arxiv=ids.get(ARXIV), tags=[]))
                elif row.state != "pending":
                    row.version = item.get("version")

    # --- 3. new items and notes ----------------------------------------------------------

    def _create(self, link: ZoteroLink, api: ZoteroApi, counts: dict[str, int]) -> None:
        token = new_token()
        with self.db.session() as session:
            wanted = _unwritten_papers(session, link, WRITE_BATCH)
            papers = session.scalars(select(Paper).where(Paper.id.in_(wanted))).all() if wanted else []
            by_id = {p.id: p for p in papers}
            room = WRITE_BATCH
            for paper_id in wanted:
                if paper_id in by_id:
                    room -= self._place(session, link, by_id[paper_id], token, counts)
            _plan_notes(session, link, token, room)
        self._send(link, api, token, counts)

    def _place(self, session: Session, link: ZoteroLink, paper: Paper, token: str, counts: dict[str, int]) -> int:
        """Adopt the collection's item with the paper's DOI or arXiv id, or plan a new one;
        the number of objects it adds to the write (0 or 1)."""
        ids = paper.ids()
        held = None
        for column, scheme in ((ZoteroItem.doi, DOI), (ZoteroItem.arxiv, ARXIV)):
            if held is None and ids.get(scheme):
                held = session.scalar(select(ZoteroItem).where(
                    ZoteroItem.link_id == link.id, ZoteroItem.paper_id.is_(None), column == ids[scheme]).limit(1))
        if held is not None:
            held.paper_id, held.state, held.updated_at = paper.id, "synced", utcnow()
            counts["zotero_matched"] += 1
            return 0
        session.add(ZoteroItem(link_id=link.id, item_key=new_key(), paper_id=paper.id, state="pending",
                               doi=ids.get(DOI), arxiv=ids.get(ARXIV), write_token=token, tags=[]))
        return 1

    def _send(self, link: ZoteroLink, api: ZoteroApi, token: str, counts: dict[str, int]) -> None:
        """Send the objects stored with `token` (again, if it was sent before)."""
        payload, rows = self._payload(link, token)
        if not payload:
            return
        try:
            answer = api.create(_group(link), payload, token)
        except ZoteroError as problem:
            if problem.status != 412:
                raise
            # The token was accepted before (its answer was lost): read back what it made.
            back, _skipped = answers.items(api.items_by_key(_group(link), [r.item_key for r in rows]).data,
                                           "GET the items just written")
            found = {i["key"]: i for i in back}
            self._settle(rows, {key: (item.get("version"), None) for key, item in found.items()},
                         "Zotero did not keep it (an earlier try)", counts)
            return
        outcome = answers.written(answer.data, [p["key"] for p in payload])
        self._settle(rows, outcome, "Zotero did not answer for it", counts)

    def _payload(self, link: ZoteroLink, token: str) -> tuple[list[dict[str, Any]], list[Written]]:
        with self.db.session() as session:
            items = session.scalars(select(ZoteroItem).where(ZoteroItem.link_id == link.id,
                                                             ZoteroItem.write_token == token)).all()
            notes = session.scalars(select(ZoteroNote).where(ZoteroNote.link_id == link.id,
                                                             ZoteroNote.write_token == token)).all()
            papers = {p.id: p for p in session.scalars(select(Paper).where(
                Paper.id.in_([i.paper_id for i in items if i.paper_id])))}
            tags = desired_tags(session, link.channel_id, [i.paper_id for i in items if i.paper_id])
            payload: list[dict[str, Any]] = []
            rows: list[Written] = []
            for item in items:
                if item.paper_id in papers:
                    item.tags = tags.get(item.paper_id, [])
                    payload.append(paper_item(papers[item.paper_id], item.item_key, link.collection_key, item.tags))
                    rows.append(item)
                else:  # the paper was deleted meanwhile
                    session.delete(item)
            for row in notes:
                note = session.get(PaperNote, row.note_id)
                parent = session.scalar(select(ZoteroItem.item_key).where(
                    ZoteroItem.link_id == link.id, ZoteroItem.paper_id == note.paper_id)) if note else None
                if note is None or parent is None:
                    session.delete(row)
                    continue
                payload.append(note_item(row.item_key, parent, note.user_id, note.text, note.created_at))
                rows.append(row)
        return payload, rows

    def _settle(self, rows: list[Written], outcome: dict[str, tuple[int | None, str | None]], missing: str,
                counts: dict[str, int]) -> None:
        """Record each object's fate: written (its version), or refused (why)."""
        with self.db.session() as session:
            for row in rows:
                row = session.merge(row)
                version, problem = outcome.get(row.item_key, (None, missing))
                row.write_token = None
                if problem is None:
                    row.state = "synced"
                    if isinstance(row, ZoteroItem):
                        row.version, row.updated_at = version, utcnow()
                    counts["zotero_notes" if isinstance(row, ZoteroNote) else "zotero_written"] += 1
                else:
                    row.state = "failed"
                    if isinstance(row, ZoteroItem):
                        row.error = problem[:2000]
                    counts["zotero_refused"] += 1
                    log.warning("zotero refused item %s: %s", row.item_key, problem)

    # --- 4. vote tags -------------------------------------------------------------------

    def _retag(self, link: ZoteroLink, api: ZoteroApi, counts: dict[str, int]) -> None:
        with self.db.session() as session:
            rows = session.scalars(select(ZoteroItem).where(
                ZoteroItem.link_id == link.id, ZoteroItem.state == "synced", ZoteroItem.paper_id.is_not(None))
                .order_by(ZoteroItem.id)).all()
            # (The query left out items without a paper.)
            paper_ids = [r.paper_id for r in rows if r.paper_id is not None]
            wanted = desired_tags(session, link.channel_id, paper_ids)
        stale = [(row, wanted.get(row.paper_id, [])) for row in rows
                 if row.paper_id is not None and row.tags != wanted.get(row.paper_id, [])]
        for row, tags in stale[:TAG_UPDATES_PER_SYNC]:
            version = self._patch_tags(link, api, row, tags)
            with self.db.session() as session:
                stored = session.get(ZoteroItem, row.id)
                if stored is not None:
                    stored.tags, stored.version, stored.updated_at = tags, version, utcnow()
            counts["zotero_tagged"] += 1
            if api.backoff:
                return

    def _patch_tags(self, link: ZoteroLink, api: ZoteroApi, row: ZoteroItem, tags: list[str]) -> int | None:
        """Replace the tags paperclub wrote before with `tags`, keeping everyone else's."""
        for attempt in range(1, PATCH_TRIES + 1):
            item = answers.one_item(api.item(_group(link), row.item_key), f"GET item {row.item_key}")
            current = [t["tag"] for t in item["data"].get("tags", [])]
            kept = [t for t in current if t not in row.tags]
            new = kept + [t for t in tags if t not in kept]
            try:
                return api.patch(_group(link), row.item_key, {"tags": [{"tag": t} for t in new]},
                                 item["version"]).version
            except ZoteroError as problem:
                if problem.status != 412 or attempt == PATCH_TRIES:
                    raise
                log.info("zotero item %s changed while we tagged it; reading it again", row.item_key)
        return None


def _wait(seconds: float | None) -> timedelta | None:
    """A wait Zotero asked for as a delay a link can be deferred by (at most WAIT_MOST)."""
    clamped = wait_seconds(seconds)
    return timedelta(seconds=clamped) if clamped else None


def _group(link: ZoteroLink) -> int:
    """The link's group: a link is synced only once it names one (links._free)."""
    if link.group_id is None:
        raise RuntimeError(f"zotero link {link.id} names no group")
    return link.group_id


def describe(problem: ZoteroError, link: ZoteroLink) -> str:
    """What went wrong, as `zotero` and `settings` say it."""
    if problem.status in (401, 403):
        return (f"Zotero refused the API key for group {link.group_id} (HTTP {problem.status}): a manager gives "
                "one that may write there with `zotero key KEY`")
    if problem.status == 404:
        return f"group {link.group_id} or its collection is gone (HTTP 404): relink with `zotero link`"
    if problem.status in (429, 503):
        wait = f", asking to wait {problem.retry_after:.0f} s" if problem.retry_after else ""
        return f"Zotero is busy (HTTP {problem.status}{wait})"
    return str(problem)


def _unwritten_papers(session: Session, link: ZoteroLink, limit: int) -> list[int]:
    """The papers the channel posted, queued, added or annotated that have no item yet,
    the first touched first."""
    channel = link.channel_id
    touched = union_all(
        select(Post.paper_id.label("paper_id"), Post.posted_at.label("at"))
        .where(Post.channel_id == channel, Post.state == "sent"),
        select(QueueItem.paper_id, QueueItem.added_at).where(QueueItem.channel_id == channel),
        select(Addition.paper_id, Addition.created_at).where(
            Addition.channel_id == channel, Addition.paper_id.is_not(None), Addition.outcome.in_(("added", "existed"))),
        select(PaperNote.paper_id, PaperNote.created_at).where(PaperNote.channel_id == channel),
    ).subquery()
    mapped = select(ZoteroItem.paper_id).where(ZoteroItem.link_id == link.id, ZoteroItem.paper_id.is_not(None))
    first = func.min(touched.c.at)
    return list(session.scalars(
        select(touched.c.paper_id).where(touched.c.paper_id.not_in(mapped)).group_by(touched.c.paper_id)
        .order_by(first, touched.c.paper_id).limit(limit)))


def _plan_notes(session: Session, link: ZoteroLink, token: str, room: int) -> int:
    """Plan the channel's notes on papers that have an item (or get one in this write)."""
    if room <= 0:
        return 0
    written = select(ZoteroNote.note_id).where(ZoteroNote.link_id == link.id)
    parents = select(ZoteroItem.paper_id).where(
        ZoteroItem.link_id == link.id, ZoteroItem.paper_id.is_not(None),
        (ZoteroItem.state == "synced") | (ZoteroItem.write_token == token))
    notes = session.scalars(select(PaperNote.id).where(
        PaperNote.channel_id == link.channel_id, PaperNote.id.not_in(written), PaperNote.paper_id.in_(parents))
        .order_by(PaperNote.id).limit(room)).all()
    for note_id in notes:
        session.add(ZoteroNote(link_id=link.id, note_id=note_id, item_key=new_key(), state="pending",
                               write_token=token))
    return len(notes)


def desired_tags(session: Session, channel_id: int, paper_ids: list[int]) -> dict[int, list[str]]:
    """The tags the channel's votes give each paper: "paperclub:👍 3" per opinion emoji
    with votes, and "read" when someone marked it read or the queue finished it."""
    if not paper_ids:
        return {}
    reactions = session.scalar(select(Channel.reactions).where(Channel.id == channel_id))
    emoji = tuple(reactions.split()) if reactions and len(reactions.split()) == 3 else DEFAULT_EMOJI
    symbol = {"up": emoji[0], "down": emoji[1]}
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for paper_id, value, count in session.execute(
        select(Post.paper_id, PostVote.value, func.count()).join(PostVote, PostVote.post_id == Post.id)
        .where(Post.channel_id == channel_id, Post.paper_id.in_(paper_ids))
        .group_by(Post.paper_id, PostVote.value)
    ):
        counts[paper_id][value] = count
    done = set(session.scalars(select(QueueItem.paper_id).where(
        QueueItem.channel_id == channel_id, QueueItem.state == "done", QueueItem.paper_id.in_(paper_ids))))
    tags: dict[int, list[str]] = {}
    for paper_id in paper_ids:
        votes = counts.get(paper_id, {})
        found = [f"{TAG_PREFIX}{symbol[v]} {votes[v]}" for v in ("up", "down") if votes.get(v)]
        if votes.get("read") or paper_id in done:
            found.append(READ_TAG)
        tags[paper_id] = found
    return tags

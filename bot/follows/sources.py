"""What `follow citations` starts from: the papers a channel read, voted up or met
about, each with the words a card uses for it ("which you discussed on 3 Nov"), and
their OpenAlex work ids, looked up once and cached (openalex_works)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import select

from bot.corpus import identifiers
from bot.follows.models import OpenAlexWork
from bot.follows.openalex import OpenAlex
from bot.services.models import Meeting, Post, PostVote, QueueItem
from store import Database
from store.database import as_utc, upsert_insert
from store.models import Paper, PaperExternalId

ASK_AGAIN = timedelta(days=7)  # a paper OpenAlex did not know is looked up again after this
# What a channel did with a paper, strongest first: a card names the strongest.
VERBS = ("discussed", "voted up", "read")


@dataclass(frozen=True)
class ReadPaper:
    paper_id: int
    title: str
    verb: str
    on: date

    def phrase(self) -> str:
        return f"cites [{self.paper_id}] {self.title}, which you {self.verb} on {self.on.day} {self.on:%b}"


def read_papers(db: Database, channel_id: int, now: datetime) -> list[ReadPaper]:
    """The channel's papers that citing papers are looked for: met about (a meeting that
    began, a queue item done), voted up, or marked read; each once, by its strongest verb."""
    found: dict[int, tuple[int, date]] = {}

    def note(paper_id: int | None, verb: str, moment: date | None) -> None:
        if paper_id is None or moment is None:
            return
        day = as_utc(moment).date() if isinstance(moment, datetime) else moment
        rank = VERBS.index(verb)
        if paper_id not in found or rank < found[paper_id][0]:
            found[paper_id] = (rank, day)

    with db.session() as session:
        for paper_id, day in session.execute(select(Meeting.paper_id, Meeting.local_date).where(
                Meeting.channel_id == channel_id, Meeting.paper_id.is_not(None), Meeting.starts_at <= now)):
            note(paper_id, "discussed", day)
        for paper_id, moment in session.execute(select(QueueItem.paper_id, QueueItem.done_at).where(
                QueueItem.channel_id == channel_id, QueueItem.state == "done")):
            note(paper_id, "discussed", moment)
        for paper_id, value, moment in session.execute(
                select(Post.paper_id, PostVote.value, Post.posted_at).join(PostVote, PostVote.post_id == Post.id)
                .where(Post.channel_id == channel_id, PostVote.value.in_(("up", "read")))):
            note(paper_id, "voted up" if value == "up" else "read", moment)
        titles = dict(session.execute(select(Paper.id, Paper.title).where(Paper.id.in_(list(found)))).all())
    return sorted((ReadPaper(pid, titles[pid], VERBS[rank], day) for pid, (rank, day) in found.items()
                   if pid in titles), key=lambda r: (r.on, r.paper_id))


class WorkIds:
    """Papers' OpenAlex work ids, resolved by DOI (an arXiv paper by its arXiv DOI) and
    kept, so a channel's read papers are looked up once, not every day."""

    def __init__(self, db: Database, openalex: OpenAlex):
        self.db = db
        self.openalex = openalex

    def of(self, paper_ids: list[int], now: datetime) -> dict[int, str]:
        cached, unknown = self._cached(paper_ids, now)
        if unknown:
            cached.update(self._resolve(unknown, now))
        return cached

    def _cached(self, paper_ids: list[int], now: datetime) -> tuple[dict[int, str], list[int]]:
        with self.db.session() as session:
            rows = {r.paper_id: r for r in session.scalars(
                select(OpenAlexWork).where(OpenAlexWork.paper_id.in_(paper_ids)))}
        known = {pid: r.work_id for pid, r in rows.items() if r.work_id}
        unknown = [pid for pid in paper_ids if pid not in rows
                   or (not rows[pid].work_id and now - as_utc(rows[pid].resolved_at) >= ASK_AGAIN)]
        return known, unknown

    def _resolve(self, paper_ids: list[int], now: datetime) -> dict[int, str]:
        dois: dict[str, int] = {}
        with self.db.session() as session:
            for paper_id, scheme, value in session.execute(
                    select(PaperExternalId.paper_id, PaperExternalId.scheme, PaperExternalId.value)
                    .where(PaperExternalId.paper_id.in_(paper_ids),
                           PaperExternalId.scheme.in_((identifiers.ARXIV, identifiers.DOI)))):
                dois[value if scheme == identifiers.DOI else f"10.48550/arxiv.{value}".lower()] = paper_id
        found = self.openalex.resolve(sorted(dois)) if dois else {}
        works = {dois[doi]: wid for doi, wid in found.items() if doi in dois}
        rows = [{"paper_id": pid, "work_id": works.get(pid), "resolved_at": now} for pid in paper_ids]
        with self.db.session() as session:
            statement = upsert_insert(session, OpenAlexWork).values(rows)
            session.execute(statement.on_conflict_do_update(
                index_elements=["paper_id"],
                set_={"work_id": statement.excluded.work_id, "resolved_at": statement.excluded.resolved_at}))
        return works

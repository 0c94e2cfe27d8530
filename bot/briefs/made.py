"""Each brief made once: looked up by its key, claimed by one asker, filled or released.

A key is (paper, hash of the title and abstract sent, model, language, prompt version):
a paper whose abstract changed, another model, another language or a new prompt is a
new brief; anything else is the brief made already, for every channel. Of several
askers at once (two channels, two replicas) the one whose claim row lands calls the
model; the others poll the row until it is made or gone, within their own deadline.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, select, update

from bot.briefs.models import Brief, BriefSpend
from bot.briefs.prompt import PROMPT_VERSION, BriefText
from store import Database
from store.database import upsert_insert

POLL = 0.2  # seconds between looks at another asker's claim


@dataclass(frozen=True)
class Key:
    paper_id: int
    text_hash: str
    model: str
    language: str
    prompt_version: int = PROMPT_VERSION

    def where(self) -> list[ColumnElement[bool]]:
        return [Brief.paper_id == self.paper_id, Brief.text_hash == self.text_hash, Brief.model == self.model,
                Brief.language == self.language, Brief.prompt_version == self.prompt_version]


def text_hash(title: str, abstract: str) -> str:
    return hashlib.sha256(f"{title}\n{abstract}".encode()).hexdigest()


class Briefs:
    def __init__(self, db: Database, lease: timedelta, sleep: Callable[[float], None] = time.sleep):
        self.db = db
        self.lease = lease  # a claim older than this was abandoned (its process died)
        self.sleep = sleep

    def made(self, key: Key) -> BriefText | None:
        with self.db.session() as session:
            row = session.scalar(select(Brief).where(*key.where(), Brief.state == "made"))
            return _text(row) if row is not None else None

    def claim(self, key: Key, now: datetime) -> bool:
        """True when this asker is to call the model: its claim row landed, or it took
        over one abandoned past the lease."""
        with self.db.session() as session:
            landed = session.execute(
                upsert_insert(session, Brief).values(
                    paper_id=key.paper_id, text_hash=key.text_hash, model=key.model, language=key.language,
                    prompt_version=key.prompt_version, state="making", questions=[], claimed_at=now)
                .on_conflict_do_nothing(index_elements=["paper_id", "text_hash", "model", "language",
                                                        "prompt_version"])
                .returning(Brief.id)).scalar()
            if landed is not None:
                return True
            taken = session.execute(
                update(Brief).where(*key.where(), Brief.state == "making", Brief.claimed_at < now - self.lease)
                .values(claimed_at=now))
            return bool(getattr(taken, "rowcount", 0))

    def fill(self, key: Key, brief: BriefText, now: datetime) -> None:
        with self.db.session() as session:
            session.execute(update(Brief).where(*key.where()).values(
                state="made", tldr=brief.tldr, contribution=brief.contribution, questions=list(brief.questions),
                made_at=now))

    def release(self, key: Key) -> None:
        """The call failed: the claim goes, and the next asker tries again."""
        with self.db.session() as session:
            session.execute(delete(Brief).where(*key.where(), Brief.state == "making"))

    def wait(self, key: Key, deadline: float, monotonic: Callable[[], float] = time.monotonic) -> BriefText | None:
        """Another asker's brief, once made; None when its claim went (the call failed)
        or the deadline came first."""
        while monotonic() < deadline:
            with self.db.session() as session:
                row = session.scalar(select(Brief).where(*key.where()))
                if row is None:
                    return None
                if row.state == "made":
                    return _text(row)
            self.sleep(min(POLL, max(0.0, deadline - monotonic())))
        return None

    def spend(self, channel_id: int, day: date, budget: int) -> bool:
        """Take one of the channel's calls for `day`; False when `budget` are taken."""
        with self.db.session() as session:
            session.execute(upsert_insert(session, BriefSpend).values(channel_id=channel_id, day=day, calls=0)
                            .on_conflict_do_nothing(index_elements=["channel_id", "day"]))
            taken = session.execute(
                update(BriefSpend).where(and_(BriefSpend.channel_id == channel_id, BriefSpend.day == day,
                                              BriefSpend.calls < budget))
                .values(calls=BriefSpend.calls + 1))
            return bool(getattr(taken, "rowcount", 0))


def _text(row: Brief) -> BriefText:
    q = [*row.questions, "", "", ""][:3]
    return BriefText(row.tldr or "", row.contribution or "", (q[0], q[1], q[2]))


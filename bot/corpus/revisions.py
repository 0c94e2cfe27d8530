"""The corpus revision: a number every import that changes papers moves on, and which
papers each revision changed.

The search index is saved for a revision and brought up to date from the papers changed
since (`changed_since`); the corpus identity, random and made once, tells a recreated
database (which counts revisions from 0 again) from the one an index was saved for.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select, update
from sqlalchemy.orm import Session

from store import Database
from store.database import dml_result, table_of, upsert_insert
from store.models import CorpusState, Paper, new_identity, utcnow

CHUNK = 500  # rows per IN (...) lookup; well under every database's parameter limit
# Every command asks for it (is the index current?): built once, not on every call.
_REVISION = select(CorpusState.revision).where(CorpusState.id == 1)


def current_revision(session: Session | Connection) -> int:
    return session.scalar(_REVISION) or 0


def corpus_identity(db: Database) -> str:
    """This database's random id (made on first use where missing): unlike revisions,
    which a recreated database counts from 0 again, it is never the same twice."""
    with db.session() as session:
        found = session.scalar(select(CorpusState.identity).where(CorpusState.id == 1))
    if found:
        return found
    with db.session() as session:
        ensure_state(session)
        # Only where still missing: of two processes asking at once, one writes it.
        session.execute(
            update(CorpusState)
            .where(CorpusState.id == 1, CorpusState.identity.is_(None))
            .values(identity=new_identity())
        )
        made = session.scalar(select(CorpusState.identity).where(CorpusState.id == 1))
    if made is None:  # the UPDATE above wrote one, or another process did first
        raise RuntimeError("the corpus identity was not written")
    return made


def stamp(session: Session) -> str:
    """The revision and the moment it was reached: unlike the bare number, this tells
    a recreated database (which counts revisions from 0 again) from the old one, so
    an index saved for the old one is never served for the new."""
    row = session.get(CorpusState, 1)
    return f"{row.revision}@{row.updated_at.isoformat()}" if row else "0"


def changed_since(since: int) -> Any:
    """The condition on papers added or changed by the imports after revision `since`."""
    return Paper.changed_revision > since


def changed_count(session: Session, since: int) -> int:
    """How many papers the imports after revision `since` changed (counted on the index)."""
    return session.scalar(select(func.count()).where(changed_since(since))) or 0


def bump_revision(session: Session) -> int:
    """Move the corpus to its next revision and return it.

    An atomic increment: concurrent imports each move the revision, none is lost. The
    UPDATE write-locks the row until this transaction ends, so the value read back
    after it is this import's own: a concurrent import waits, then counts on from it.
    """
    bump = (
        update(CorpusState)
        .where(CorpusState.id == 1)
        .values(revision=CorpusState.revision + 1, updated_at=utcnow())
    )
    if dml_result(session.execute(bump)).rowcount == 0:  # no row (the migrations make it): make it
        ensure_state(session)
        session.execute(bump)
    return session.scalars(select(CorpusState.revision).where(CorpusState.id == 1)).one()


def ensure_state(session: Session) -> None:
    """The corpus_state row, at revision 0 with an identity, unless it exists."""
    row = {"id": 1, "revision": 0, "updated_at": utcnow(), "identity": new_identity()}
    session.execute(upsert_insert(session, CorpusState).values(row).on_conflict_do_nothing(index_elements=["id"]))


def mark_changed(session: Session, paper_ids: list[int], revision: int) -> None:
    """Stamp the papers an import added or updated with the revision it moved the corpus
    to: one UPDATE per CHUNK ids, not one per paper."""
    papers = table_of(Paper)  # Core: no session objects to look up and refresh
    for start in range(0, len(paper_ids), CHUNK):
        chunk = paper_ids[start : start + CHUNK]
        session.execute(update(papers).where(papers.c.id.in_(chunk)).values(changed_revision=revision))

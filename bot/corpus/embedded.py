"""The papers' stored vectors (store.models.PaperVector): which papers still need one under
a model, writing the vectors a model made, and reading them all back.

The text a vector is made of and its hash are the embedding's business
(bot.search.embedding.paper_text, text_hash); they are passed in, so the corpus knows
nothing of models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, select, tuple_, update
from sqlalchemy.orm import Session

from bot.corpus.revisions import current_revision, ensure_state
from store import Database
from store.models import CorpusState, Paper, PaperVector

_VERSION = select(CorpusState.vectors_version).where(CorpusState.id == 1)  # built once: read before every search
# Papers read per query while looking for those that need a vector.
PAGE = 2000


@dataclass(frozen=True)
class Pending:
    """A paper that needs a vector: none yet under the model, or one of another text."""

    paper_id: int
    text: str
    text_hash: str


@dataclass(frozen=True)
class Made:
    paper_id: int
    text_hash: str
    codes: bytes
    scale: float


@dataclass(eq=False)
class StoredVectors:
    db: Database

    def pending(
        self,
        model: str,
        text_of: Callable[[str, str], str],
        hash_of: Callable[[str], str],
        after: int = 0,
        limit: int = PAGE,
    ) -> list[Pending]:
        """Up to `limit` papers after id `after`, in id order, whose vector under `model`
        is missing or was made from another text (`text_of(title, abstract)`)."""
        found: list[Pending] = []
        while len(found) < limit:
            with self.db.session() as session:
                rows = session.execute(
                    select(Paper.id, Paper.title, Paper.abstract, PaperVector.text_hash)
                    .outerjoin(PaperVector, (PaperVector.paper_id == Paper.id) & (PaperVector.model == model))
                    .where(Paper.id > after)
                    .order_by(Paper.id)
                    .limit(PAGE)
                ).all()
            if not rows:
                break
            for paper_id, title, abstract, stored in rows:
                text = text_of(title, abstract or "")
                digest = hash_of(text)
                if digest != stored:
                    found.append(Pending(paper_id, text, digest))
            after = rows[-1][0]
        return found[:limit]

    def save(self, model: str, made: Sequence[Made]) -> None:
        """Store these vectors under `model`, replacing what the papers had, in one
        transaction. A paper deleted meanwhile is skipped."""
        if not made:
            return
        ids = [m.paper_id for m in made]
        with self.db.session() as session:
            version = _next_version(session)
            present = set(session.scalars(select(Paper.id).where(Paper.id.in_(ids))))
            session.execute(
                delete(PaperVector).where(
                    tuple_(PaperVector.paper_id, PaperVector.model).in_([(i, model) for i in ids])
                )
            )
            session.add_all(
                PaperVector(paper_id=m.paper_id, model=model, text_hash=m.text_hash, codes=m.codes,
                            scale=m.scale, version=version)
                for m in made
                if m.paper_id in present
            )

    def version(self) -> int:
        """The version of the last write of vectors (0: none yet): one row read, cheap
        enough to ask before every search."""
        with self.db.connection() as connection:
            return int(connection.scalar(_VERSION) or 0)

    def rows(self, model: str, since: int = 0) -> Iterator[tuple[int, bytes, float]]:
        """(paper id, codes, scale) of every vector under `model` written after version
        `since`, in paper id order."""
        after = 0
        while True:
            with self.db.session() as session:
                page = session.execute(
                    select(PaperVector.paper_id, PaperVector.codes, PaperVector.scale)
                    .where(PaperVector.model == model, PaperVector.version > since)
                    .where(PaperVector.paper_id > after)
                    .order_by(PaperVector.paper_id)
                    .limit(PAGE * 10)
                ).all()
            if not page:
                return
            for paper_id, codes, scale in page:
                yield paper_id, bytes(codes), float(scale)
            after = page[-1][0]

    def count(self, model: str) -> int:
        with self.db.session() as session:
            counted = select(func.count()).select_from(PaperVector).where(PaperVector.model == model)
            return int(session.scalar(counted) or 0)

    def corpus_revision(self) -> int:
        """The corpus's revision: no paper needs a vector that did not when it was last this."""
        with self.db.connection() as connection:
            return current_revision(connection)

    def papers(self) -> int:
        with self.db.session() as session:
            return int(session.scalar(select(func.count()).select_from(Paper)) or 0)


def _next_version(session: Session) -> int:
    """Move the vectors' version on and return it (an atomic increment that holds the row
    until the transaction ends, as bot.corpus.revisions.bump_revision does)."""
    ensure_state(session)
    bump = update(CorpusState).where(CorpusState.id == 1).values(vectors_version=CorpusState.vectors_version + 1)
    session.execute(bump)
    return int(session.scalars(select(CorpusState.vectors_version).where(CorpusState.id == 1)).one())

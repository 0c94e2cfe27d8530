"""The papers' stored vectors (store.models.PaperVector): which papers still need one under
a model, claiming a batch of them, writing the vectors a model made, and reading them all
back.

Several processes on one database embed (the background job of each replica with the
scheduler on, an operator's `paperclub embed`), and embedding is costly: a run first claims its batch
(store.models.EmbeddingClaim, INSERT ... ON CONFLICT DO NOTHING) and embeds only the
papers whose claim it got, skipping those another run holds. Writing the vectors deletes
their claims in the same transaction; a run that stops releases the rest, and a claim
left by a process that died is taken again after LEASE.

The text a vector is made of (`paper_text`) and its hash (`text_hash`) are defined here,
below the search, because an import stores a paper's precomputed vector with the hash of
the paper's text as stored; the models themselves are the search's business
(bot.search.embedding), and the corpus knows nothing of them.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import delete, func, literal, select, tuple_, update
from sqlalchemy.orm import Session

from bot.corpus.revisions import CHUNK, current_revision, ensure_state
from store import Database
from store.database import upsert_insert
from store.models import CorpusState, EmbeddingClaim, EmbeddingModel, Paper, PaperVector, utcnow

_VERSION = select(CorpusState.vectors_version).where(CorpusState.id == 1)  # built once: read before every search
# Papers read per query while looking for those that need a vector.
PAGE = 2000
# A claim older than this was left by a process that died, and is taken again. Far longer
# than a batch takes to embed (seconds; a minute on a slow core), since a live run whose
# claim is taken over embeds its batch twice.
LEASE = timedelta(minutes=10)


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


@dataclass(frozen=True)
class Claimed:
    """A claimed batch: the papers this run is to embed, and the id the next batch starts
    after (the last candidate's, claimed or not: candidates another run holds are passed
    over, not asked for again)."""

    papers: list[Pending]
    after: int


def _unknown() -> int | None:
    return None


@dataclass(frozen=True)
class VectorRules:
    """What an import checks a paper's precomputed vector against, and how it stores it
    (bot.search.vectors.import_rules makes them from the deployment's settings): the
    model the library's vectors are of, that model's dimension as its catalogue gives it
    (asked only when no vector is stored under it yet: None for a model it does not
    know), and the quantiser every stored vector goes through (unit values -> int8 codes
    and a scale)."""

    model: str
    quantise: Callable[[array[float]], tuple[bytes, float]]
    catalogue_dimension: Callable[[], int | None] = _unknown


@dataclass(eq=False)
class StoredVectors:
    db: Database
    _models: dict[str, int] = field(default_factory=dict, repr=False)  # name -> number, once known

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
                    .outerjoin(PaperVector, (PaperVector.paper_id == Paper.id)
                               & (PaperVector.model_id == self._model_id(model)))
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

    def claim(
        self,
        model: str,
        text_of: Callable[[str, str], str],
        hash_of: Callable[[str], str],
        owner: str,
        after: int = 0,
        limit: int = PAGE,
        now: datetime | None = None,
    ) -> Claimed | None:
        """Claim for the run `owner` the papers `pending` finds (up to `limit` after
        `after`) that no other run holds; None when no paper after `after` needs a vector.
        The batch may be empty (another run holds every candidate): go on after it."""
        candidates = self.pending(model, text_of, hash_of, after=after, limit=limit)
        if not candidates:
            return None
        model_id = self._model_id(model, make=True)  # a claim names the model by number
        with self.db.session() as session:
            won = _insert_claims(session, model_id, candidates, owner, now or utcnow())
            won -= _embedded_meanwhile(session, model_id, [c for c in candidates if c.paper_id in won], owner)
        return Claimed([c for c in candidates if c.paper_id in won], candidates[-1].paper_id)

    def release(self, model: str, owner: str) -> None:
        """Drop the claims the run `owner` still holds (papers it did not store), so the
        next run embeds them without waiting for the lease."""
        with self.db.session() as session:
            session.execute(delete(EmbeddingClaim).where(EmbeddingClaim.model_id == self._model_id(model),
                                                         EmbeddingClaim.owner == owner))

    def save(self, model: str, made: Sequence[Made]) -> None:
        """Store these vectors under `model`, replacing what the papers had, and drop
        their claims, in one transaction. A paper deleted meanwhile is skipped."""
        if not made:
            return
        model_id = self._model_id(model, make=True)
        with self.db.session() as session:
            _write(session, model_id, made)

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
                    .where(PaperVector.model_id == self._model_id(model), PaperVector.version > since)
                    .where(PaperVector.paper_id > after)
                    .order_by(PaperVector.paper_id)
                    .limit(PAGE * 10)
                ).all()
            if not page:
                return
            for paper_id, codes, scale in page:
                yield paper_id, bytes(codes), float(scale)
            after = page[-1][0]

    def dimension(self, model: str) -> int | None:
        """The dimension of the vectors stored under `model` (one read), or None: none yet."""
        with self.db.session() as session:
            codes = session.scalar(
                select(PaperVector.codes).where(PaperVector.model_id == self._model_id(model)).limit(1)
            )
        return None if codes is None else len(codes)

    def count(self, model: str) -> int:
        with self.db.session() as session:
            counted = select(func.count()).select_from(PaperVector).where(PaperVector.model_id == self._model_id(model))
            return int(session.scalar(counted) or 0)

    def _model_id(self, model: str, make: bool = False) -> int:
        """The model's number (store.models.EmbeddingModel); -1, which no vector has, for
        a model nothing was stored under, unless `make` (a write) adds it."""
        known = self._models.get(model)
        if known is not None:
            return known
        with self.db.session() as session:
            found = _model_number(session, model, make)
        if found is None:
            return -1
        self._models[model] = found
        return found

    def corpus_revision(self) -> int:
        """The corpus's revision: no paper needs a vector that did not when it was last this."""
        with self.db.connection() as connection:
            return current_revision(connection)

    def papers(self) -> int:
        with self.db.session() as session:
            return int(session.scalar(select(func.count()).select_from(Paper)) or 0)


def _insert_claims(session: Session, model_id: int, candidates: list[Pending], owner: str,
                   now: datetime) -> set[int]:
    """Claim the candidates for `owner`; the ids it got: those nobody held, and those whose
    claim was past the lease. A concurrent claim of the same paper waits for this
    transaction (PostgreSQL: the unique key; SQLite: the one writer) and finds it held."""
    ids = [c.paper_id for c in candidates]
    fresh = select(Paper.id, literal(model_id), literal(owner), literal(now, EmbeddingClaim.claimed_at.type))
    # From the papers, not as values: a paper deleted since `pending` read it is no
    # foreign-key error. In id order, so that two runs claiming the same papers lock
    # them in one order (no deadlock).
    inserted = session.scalars(
        upsert_insert(session, EmbeddingClaim)
        .from_select(["paper_id", "model_id", "owner", "claimed_at"],
                     fresh.where(Paper.id.in_(ids)).order_by(Paper.id))
        .on_conflict_do_nothing(index_elements=["paper_id", "model_id"])
        .returning(EmbeddingClaim.paper_id)
    )
    won = set(inserted)
    # A separate UPDATE, not ON CONFLICT DO UPDATE: that would lock the live claims of
    # other runs too, and their `save` would wait on this transaction.
    taken = session.scalars(
        update(EmbeddingClaim)
        .where(EmbeddingClaim.model_id == model_id, EmbeddingClaim.paper_id.in_(ids),
               EmbeddingClaim.owner != owner, EmbeddingClaim.claimed_at < now - LEASE)
        .values(owner=owner, claimed_at=now)
        .returning(EmbeddingClaim.paper_id)
    )
    return won | set(taken)


def _embedded_meanwhile(session: Session, model_id: int, won: list[Pending], owner: str) -> set[int]:
    """Of the papers just claimed, those whose vector of this text was stored after
    `pending` read them (another run's `save` deleted its claim as it stored them); their
    claims are dropped again. Read in a statement after the claims' own, so it sees any
    `save` the claims waited for."""
    if not won:
        return set()
    stored = set(session.scalars(
        select(PaperVector.paper_id)
        .where(PaperVector.model_id == model_id,
               tuple_(PaperVector.paper_id, PaperVector.text_hash).in_([(p.paper_id, p.text_hash) for p in won]))
    ))
    if stored:
        session.execute(delete(EmbeddingClaim).where(EmbeddingClaim.model_id == model_id,
                                                     EmbeddingClaim.paper_id.in_(stored),
                                                     EmbeddingClaim.owner == owner))
    return stored


def store_given(
    session: Session,
    model: str,
    given: Mapping[int, array[float]],
    quantise: Callable[[array[float]], tuple[bytes, float]],
) -> int:
    """Store the vectors an import brought (paper id -> unit values) under `model`, in the
    import's own transaction, each with the hash of its paper's text as the import left
    it: `paperclub embed` finds them done, and a changed abstract later embeds the paper
    again. A vector stored already, for the same text, is not written again. Returns how
    many were written."""
    model_id = _model_number(session, model)
    ids = sorted(given)
    made: list[Made] = []
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        held: dict[int, tuple[str, bytes, float]] = {}
        if model_id is not None:
            rows = session.execute(
                select(PaperVector.paper_id, PaperVector.text_hash, PaperVector.codes, PaperVector.scale)
                .where(PaperVector.model_id == model_id, PaperVector.paper_id.in_(chunk))
            )
            held = {pid: (digest, bytes(codes), float(scale)) for pid, digest, codes, scale in rows}
        papers = session.execute(select(Paper.id, Paper.title, Paper.abstract).where(Paper.id.in_(chunk)))
        for paper_id, title, abstract in papers:
            digest = text_hash(paper_text(title, abstract or ""))
            codes, scale = quantise(given[paper_id])
            if held.get(paper_id) != (digest, codes, scale):
                made.append(Made(paper_id, digest, codes, scale))
    if made:
        _write(session, model_id if model_id is not None else _made_number(session, model), made)
    return len(made)


def _write(session: Session, model_id: int, made: Sequence[Made]) -> None:
    """Store `made` under the model, replacing what the papers had, at a new version of the
    vectors; a paper deleted meanwhile is skipped."""
    ids = [m.paper_id for m in made]
    version = _next_version(session)
    present: set[int] = set()
    for start in range(0, len(ids), CHUNK):
        present.update(session.scalars(select(Paper.id).where(Paper.id.in_(ids[start : start + CHUNK]))))
        pairs = [(i, model_id) for i in ids[start : start + CHUNK]]
        session.execute(delete(PaperVector).where(tuple_(PaperVector.paper_id, PaperVector.model_id).in_(pairs)))
    session.add_all(
        PaperVector(paper_id=m.paper_id, model_id=model_id, text_hash=m.text_hash, codes=m.codes,
                    scale=m.scale, version=version)
        for m in made
        if m.paper_id in present
    )
    # Whoever holds them: a paper with its vector needs no claim. (A run that took one over
    # past the lease, from a slow one, embeds it too: the same vector.)
    for start in range(0, len(ids), CHUNK):
        session.execute(delete(EmbeddingClaim).where(EmbeddingClaim.model_id == model_id,
                                                     EmbeddingClaim.paper_id.in_(ids[start : start + CHUNK])))


def _model_number(session: Session, model: str, make: bool = False) -> int | None:
    """The model's number, or None for a model nothing was stored under, unless `make`
    adds it (one row per name, whichever process adds it first)."""
    if make:
        return _made_number(session, model)
    found = session.scalar(select(EmbeddingModel.id).where(EmbeddingModel.name == model))
    return None if found is None else int(found)


def _made_number(session: Session, model: str) -> int:
    session.execute(upsert_insert(session, EmbeddingModel).values(name=model)
                    .on_conflict_do_nothing(index_elements=["name"]))
    return int(session.scalars(select(EmbeddingModel.id).where(EmbeddingModel.name == model)).one())


def _next_version(session: Session) -> int:
    """Move the vectors' version on and return it (an atomic increment that holds the row
    until the transaction ends, as bot.corpus.revisions.bump_revision does)."""
    ensure_state(session)
    bump = update(CorpusState).where(CorpusState.id == 1).values(vectors_version=CorpusState.vectors_version + 1)
    session.execute(bump)
    return int(session.scalars(select(CorpusState.vectors_version).where(CorpusState.id == 1)).one())


def paper_text(title: str, abstract: str) -> str:
    """What a paper's vector is made of: its title, then its abstract."""
    title, abstract = title.strip(), abstract.strip()
    return f"{title}. {abstract}" if abstract else title


def text_hash(text: str) -> str:
    """A short, stable digest of the embedded text (16 hex digits: enough to tell a changed
    abstract, which is embedded again)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()

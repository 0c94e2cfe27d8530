"""Several processes embedding on one database (serving replicas' background jobs, an
operator's `paperclub embed`): each claims its batches (bot.corpus.embedded), so every paper
is embedded once, and what a run stopped or died holding is embedded by the next."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import delete, select

from bot.corpus.embedded import LEASE, Made, StoredVectors
from bot.search.backfill import backlog, embed_pending
from bot.search.embedding import paper_text, text_hash
from store import Database
from store.models import EmbeddingClaim, Paper
from tests.search.test_meaning import TinyModel, ids_by_title, library_of

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def replica(db):
    """A second process's handle on the same database."""
    other = Database(db.url)
    yield other
    other.dispose()


def claim(stored: StoredVectors, owner: str, after: int = 0, limit: int = 100, now: datetime | None = None):
    return stored.claim("tiny", paper_text, text_hash, owner, after=after, limit=limit, now=now)


def claims(db: Database) -> dict[int, str]:
    """paper id -> owner of every claim held."""
    with db.session() as session:
        return dict(session.execute(select(EmbeddingClaim.paper_id, EmbeddingClaim.owner)).all())


def at_once(*calls):
    """Run the calls in threads started together; their results in order."""
    start, results = threading.Barrier(len(calls)), [None] * len(calls)

    def run(n, call):
        start.wait()
        results[n] = call()

    threads = [threading.Thread(target=run, args=(n, call)) for n, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_two_replicas_claiming_at_once_get_disjoint_batches(db, replica):
    ids = set(ids_by_title(library_of(db)).values())
    one, two = at_once(lambda: claim(StoredVectors(db), "one"), lambda: claim(StoredVectors(replica), "two"))
    got_one, got_two = {p.paper_id for p in one.papers}, {p.paper_id for p in two.papers}
    assert got_one.isdisjoint(got_two) and got_one | got_two == ids
    assert claims(db) == {**dict.fromkeys(got_one, "one"), **dict.fromkeys(got_two, "two")}


def test_a_batch_another_holds_is_passed_over(db, replica):
    ids = sorted(ids_by_title(library_of(db)).values())
    first = claim(StoredVectors(db), "one", limit=4)
    assert [p.paper_id for p in first.papers] == ids[:4]
    held = claim(StoredVectors(replica), "two", limit=4)
    assert held.papers == [] and held.after == ids[3]  # nothing for this run, and the cursor moves on
    rest = claim(StoredVectors(replica), "two", after=held.after, limit=4)
    assert [p.paper_id for p in rest.papers] == ids[4:] and rest.after == ids[-1]
    assert claim(StoredVectors(replica), "two", after=rest.after) is None  # nothing after: the run ends


def test_two_runs_at_once_embed_every_paper_once(db, replica):
    papers = [(f"Paper {n}", f"An abstract about subject {n}.") for n in range(40)]
    library_of(db, papers)
    models = [TinyModel(), TinyModel()]
    done = at_once(lambda: embed_pending(StoredVectors(db), models[0], batch=3),
                   lambda: embed_pending(StoredVectors(replica), models[1], batch=3))
    embedded = models[0].embedded + models[1].embedded
    assert sorted(embedded) == sorted(paper_text(t, a) for t, a in papers)  # each once, none left out
    assert sum(done) == 40 and backlog(StoredVectors(db), "tiny").missing == 0
    assert claims(db) == {}  # stored vectors take their claims with them


def test_a_claim_past_its_lease_is_taken_over_and_a_live_one_is_not(db, replica):
    ids = set(ids_by_title(library_of(db)).values())
    stored, other = StoredVectors(db), StoredVectors(replica)
    assert {p.paper_id for p in claim(stored, "dead", now=T0).papers} == ids
    assert claim(other, "late", now=T0 + LEASE - timedelta(seconds=1)).papers == []
    assert set(claims(db).values()) == {"dead"}
    assert {p.paper_id for p in claim(other, "late", now=T0 + LEASE + timedelta(seconds=1)).papers} == ids
    stored.release("tiny", "dead")  # a run releases only its own claims
    assert set(claims(db).values()) == {"late"}


@pytest.mark.parametrize("stopped_by", [RuntimeError, KeyboardInterrupt])  # a bug, or Ctrl-C on `paperclub embed`
def test_a_stopped_run_releases_its_claims_and_the_next_embeds_them(db, stopped_by):
    library_of(db)
    stored = StoredVectors(db)

    class Stopping(TinyModel):
        def documents(self, texts):
            raise stopped_by("the model stopped")

    with pytest.raises(stopped_by, match="the model stopped"):
        embed_pending(stored, Stopping(), batch=4)
    assert claims(db) == {}
    again = TinyModel()
    assert embed_pending(stored, again) == 6 and len(again.embedded) == 6  # no wait for the lease


def test_claims_a_dead_process_left_are_skipped_until_they_expire(db):
    ids = sorted(ids_by_title(library_of(db)).values())
    stored = StoredVectors(db)
    claim(stored, "dead", limit=2)  # never stored nor released
    model = TinyModel()
    assert embed_pending(stored, model) == 4 and claims(db) == dict.fromkeys(ids[:2], "dead")
    assert stored.pending("tiny", paper_text, text_hash) != []  # still to embed, once the lease is past
    expired = claim(stored, "next", now=datetime.now(timezone.utc) + LEASE * 2)
    assert [p.paper_id for p in expired.papers] == ids[:2]


def test_stored_vectors_take_their_claims_whoever_holds_them(db):
    ids = sorted(ids_by_title(library_of(db)).values())
    stored = StoredVectors(db)
    claim(stored, "slow", limit=3)
    claim(stored, "other", after=ids[2])
    vectors = [Made(p.paper_id, p.text_hash, bytes(8), 1.0) for p in stored.pending("tiny", paper_text, text_hash)]
    stored.save("tiny", vectors[:4])  # the slow run's three, and one of another's
    assert claims(db) == dict.fromkeys(ids[4:], "other")


def test_a_paper_stored_since_it_was_found_is_not_claimed(db, replica, monkeypatch):
    library_of(db)
    late = StoredVectors(replica)
    found = late.pending("tiny", paper_text, text_hash)  # read before another run stores them
    embed_pending(StoredVectors(db), TinyModel())
    monkeypatch.setattr(late, "pending", lambda *_args, **_kwargs: found)  # its claim goes on from that read
    batch = claim(late, "late")
    assert batch.papers == [] and batch.after == found[-1].paper_id and claims(db) == {}


def test_a_paper_deleted_since_it_was_found_is_not_claimed(db, monkeypatch):
    library_of(db)
    stored = StoredVectors(db)
    found = stored.pending("tiny", paper_text, text_hash)
    with db.session() as session:
        session.execute(delete(Paper).where(Paper.id == found[0].paper_id))
    monkeypatch.setattr(stored, "pending", lambda *_args, **_kwargs: found)
    batch = claim(stored, "one")  # no foreign-key error
    assert [p.paper_id for p in batch.papers] == [p.paper_id for p in found[1:]]
    assert sorted(claims(db)) == [p.paper_id for p in found[1:]]

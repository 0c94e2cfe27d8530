"""A reading group linked to a Zotero group collection on the fake API: papers of every
item type, posted, queued, added and annotated the way the other features record them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import select

from adapters.console import ConsoleSession
from adapters.fakes.zotero import FakeZotero
from bot.app import Services, build_services
from bot.services.models import Addition, Post, QueueItem
from store.models import Paper
from tests.clock import Clock

UTC = timezone.utc
NOW = datetime(2026, 11, 26, 9, tzinfo=UTC)
KEY = "GoodKey0123456789abcdef"
READ_ONLY_KEY = "ReadOnlyKey0123456789ab"
GROUP, COLLECTION = 4242, "RDNG2345"
SECRET = "a-long-random-secret-for-the-tests-0123456789"
PAPERS = [
    {"title": "Sparse Coding of Zebrafish Retinas", "authors": ["Ada Lovelace", "Turing, Alan"],
     "abstract": "Zebrafish retina regeneration as sparse coding.", "year": 2021, "venue": "arXiv",
     "url": "https://arxiv.org/abs/2101.00001", "external_ids": {"arxiv": "2101.00001"}},
    {"title": "Marmot Transformers", "authors": ["Edsger Dijkstra"], "abstract": "Alpine weather.",
     "year": 2022, "venue": "ICLR 2022", "external_ids": {"doi": "10.5555/marmot.2022"}},
    {"title": "Pangolin Scales in Nature", "authors": ["Barbara Liskov"], "abstract": "Scales.",
     "year": 2023, "venue": "Journal of Pangolin Studies", "external_ids": {"doi": "10.5555/pangolin"}},
    {"title": "Quokka Descent Held Already", "authors": ["Grace Hopper"], "abstract": "Quokkas.",
     "year": 2020, "external_ids": {"doi": "10.5555/quokka"}},
    {"title": "Okapi Never Touched", "authors": ["Nobody"], "abstract": "Not posted anywhere.", "year": 2019},
]
NAMES = ["Sparse", "Marmot", "Pangolin", "Quokka", "Okapi"]


@dataclass
class Scene:
    services: Services
    clock: Clock
    zotero: FakeZotero
    ids: dict[str, int]

    def member(self, user: str = "ann", manager: bool = False, channel: str = "reading") -> ConsoleSession:
        return ConsoleSession(self.services.core, channel=channel, user=user, manager=manager)

    def tick(self, minutes: int = 1):
        self.clock.now += timedelta(minutes=minutes)
        return self.services.core.tick(self.clock.now, lambda ref, reply: "ref", ["console"])

    def channel_id(self, channel: str = "reading") -> int:
        return self.services.channels.get(self.member(channel=channel).channel).id


def fake_zotero() -> FakeZotero:
    fake = FakeZotero()
    fake.add_key(KEY, {GROUP: True})
    fake.add_key(READ_ONLY_KEY, {GROUP: False})
    fake.add_group(GROUP, "Lab Library", {COLLECTION: "Reading group", "OTHR2345": "Other"})
    return fake


def environment(monkeypatch, fake: FakeZotero, env_key: str | None = None, secret: str | None = SECRET) -> None:
    monkeypatch.setenv("PAPERCLUB_ZOTERO_API_URL", fake.url)
    for name, value in (("PAPERCLUB_ZOTERO_API_KEY", env_key), ("PAPERCLUB_SECRET_KEY", secret)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)


def build(url: str, tmp_path: Path, fake: FakeZotero) -> Scene:
    clock = Clock(NOW)
    services = build_services(url, clock=clock)
    corpus = tmp_path / "zotero-corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n")
    services.library.import_file(corpus, "zotest")
    with services.db.session() as session:
        titles = dict(session.execute(select(Paper.title, Paper.id)).all())
    ids = {name: titles[p["title"]] for name, p in zip(NAMES, PAPERS, strict=True)}
    return Scene(services, clock, fake, ids)


def touch(scene: Scene) -> None:
    """Sparse posted (two up votes, one read, a note), Marmot queued, Pangolin added by a
    member, Quokka posted (the collection holds it already); Okapi nowhere."""
    services, ids = scene.services, scene.ids
    channel_id = scene.channel_id()
    with services.db.session() as session:
        for name, days in (("Sparse", 5), ("Quokka", 4)):
            session.add(Post(channel_id=channel_id, paper_id=ids[name], kind="daily", state="sent",
                             local_date=(NOW - timedelta(days=days)).date(), posted_at=NOW - timedelta(days=days)))
        session.add(QueueItem(channel_id=channel_id, paper_id=ids["Marmot"], added_at=NOW - timedelta(days=3)))
        session.add(Addition(platform="console", workspace="local", channel_id=channel_id, user_id="cat",
                             asked="https://doi.org/10.5555/pangolin", paper_id=ids["Pangolin"], outcome="added",
                             created_at=NOW - timedelta(days=2)))
    for user, vote in (("ann", "up"), ("ben", "up"), ("cat", "read")):
        assert scene.member(user).send(f"vote {ids['Sparse']} {vote}").ok
    assert scene.member("ann").send(f"notes {ids['Sparse']} the <ablation> & section 4 matter").ok

"""A small reading group's history, made the way members make it (commands), plus posts
written as the scheduler writes them: two channels with distinctive titles and notes, so
a page can be checked for what it must hold and for what it must never show."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import select

from adapters.console import ConsoleSession
from bot.app import Services, build_services
from bot.corpus.records import PaperRecord
from bot.services.models import Post
from store.models import Paper
from tests.clock import Clock

UTC = timezone.utc
PUBLIC_URL = "https://paperclub.example.org"
XSS_TITLE = "<script>alert(1)</script> Adversarial Titles in Reading Groups"
PAPERS = [
    {"title": "Zebrafish Retina Regeneration as Sparse Coding", "authors": ["Ada Lovelace", "Alan Turing"],
     "abstract": "We model zebrafish retina regeneration with sparse coding and attention.", "year": 2021,
     "url": "https://arxiv.org/abs/2101.00001", "external_ids": {"arxiv": "2101.00001"}},
    {"title": XSS_TITLE, "authors": ["Mallory Example"], "abstract": "Titles that try to run code & 50% more.",
     "year": 2022, "url": "https://example.org/xss"},
    {"title": "Quokka Gradient Descent Never Converges", "authors": ["Grace Hopper"],
     "abstract": "A private paper of the theory channel about quokka optimisation.", "year": 2020},
    {"title": "Marmot Transformers for Alpine Weather", "authors": ["Edsger Dijkstra"],
     "abstract": "Attention layers forecast alpine weather from marmot burrow sensors.", "year": 2023},
    {"title": "Pangolin Scales and Contrastive Learning", "authors": ["Barbara Liskov"],
     "abstract": "Contrastive learning of pangolin scale patterns.", "year": 2024},
]
NAMES = ["Zebrafish", "script", "Quokka", "Marmot", "Pangolin"]
# A name no BibTeX name parser accepts (issue 45: its unmatched brace broke every CSL-JSON export).
MALLORY_TITLE = "Unbalanced Braces in Author Names"
MALLORY_NOTE = "an unmatched } brace, a { and a \\ in a note"
READING_NOTE = "the okapi ablation in section four is what we should replicate"
THEORY_NOTE = "narwhal secret: the theory channel's private remark"


@dataclass
class Scene:
    services: Services
    clock: Clock
    ids: dict[str, int]  # first word of the title -> paper id

    def member(self, user: str = "ann", channel: str = "reading", manager: bool = False) -> ConsoleSession:
        return ConsoleSession(self.services.core, channel=channel, user=user, manager=manager)


def services_for(url: str, clock: Clock, tmp_path: Path, public_url: str | None = PUBLIC_URL) -> Services:
    services = build_services(url, clock=clock, public_url=public_url)
    corpus = tmp_path / "memory-corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n")
    services.library.import_file(corpus, "memtest")
    return services


def paper_ids(services: Services) -> dict[str, int]:
    """Ids by name: the title's first word (the <script> one is "script")."""
    with services.db.session() as session:
        titles = dict(session.execute(select(Paper.title, Paper.id)).all())
    return {name: titles[p["title"]] for name, p in zip(NAMES, PAPERS, strict=True)}


def post(services: Services, channel: str, paper_id: int, when: datetime, message_ref: str | None = None) -> int:
    """A paper of the day, as the scheduler records one that went out."""
    ref = ConsoleSession(services.core, channel=channel).channel
    channel_id = services.channels.get(ref).id
    with services.db.session() as session:
        row = Post(channel_id=channel_id, paper_id=paper_id, kind="daily", state="sent",
                   local_date=when.date(), posted_at=when, message_ref=message_ref)
        session.add(row)
        session.flush()
        return row.id


def build_scene(url: str, tmp_path: Path, now: datetime, public_url: str | None = PUBLIC_URL) -> Scene:
    clock = Clock(now)
    services = services_for(url, clock, tmp_path, public_url)
    ids = paper_ids(services)
    scene = Scene(services, clock, ids)
    ann, ben = scene.member("ann"), scene.member("ben")
    post(services, "reading", ids["Zebrafish"], now - timedelta(days=20))
    post(services, "reading", ids["script"], now - timedelta(days=6))
    post(services, "theory", ids["Quokka"], now - timedelta(days=3))
    for member, paper, vote in ((ann, "Zebrafish", "up"), (ben, "Zebrafish", "up"), (ann, "script", "down")):
        assert member.send(f"vote {ids[paper]} {vote}").ok
    assert ann.send(f"notes {ids['Zebrafish']} {READING_NOTE}").ok
    assert ben.send(f"notes {ids['script']} <b>bold</b> & <img src=x onerror=alert(2)>").ok
    theory = scene.member("tess", channel="theory")
    assert theory.send(f"notes {ids['Quokka']} {THEORY_NOTE}").ok
    return scene


def note_mallory(scene: Scene, channel: str = "reading") -> int:
    """The paper with the unsplittable author stored as an added page is (its
    citation_author "Mallory }") and noted in `channel` by a member; its id."""
    record = PaperRecord(title=MALLORY_TITLE, authors=["Mallory }", "Ada Lovelace"], year=2025,
                         venue="Journal of {Unbalanced Results", abstract="A 50% {brace} & a \\ backslash.")
    scene.services.library.import_records([record], collection="added", source="page", fmt="page")
    with scene.services.db.session() as session:
        paper_id = session.scalar(select(Paper.id).where(Paper.title == MALLORY_TITLE))
    assert scene.member("ann", channel=channel).send(f"notes {paper_id} {MALLORY_NOTE}").ok
    return paper_id

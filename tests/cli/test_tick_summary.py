"""`paperclub tick`'s summary names everything the minute did (issue 46): a digest posted, a
follow fetched and what it brought, a Zotero sync's writes, beside the papers of the day.
On SQLite and PostgreSQL, against the fakes of arXiv and Zotero on 127.0.0.1."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from adapters.cli.main import main
from adapters.console import ConsoleSession
from adapters.fakes.arxiv import ArxivPaper, FakeArxiv
from adapters.fakes.zotero import (
    SAMPLE_COLLECTION,
    SAMPLE_GROUP,
    SAMPLE_ITEMS,
    SAMPLE_KEY,
    sample_zotero,
)
from bot.app import build_services
from tests.conftest import SEED_FILES

SET_UP = datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)  # a Monday
AT = "2026-11-30T09:00:30Z"  # the digest's time, `digest mon 09:00`
PAPER = ArxivPaper("2611.90001", "Sandbox: A Paper Submitted Yesterday", "An abstract.",
                   SET_UP - timedelta(days=1), ["cs.LG"])


def test_the_tick_summary_names_the_digest_the_follow_and_the_zotero_sync(db, database_url, monkeypatch,
                                                                         capsys):
    with FakeArxiv([PAPER]) as arxiv, sample_zotero() as zotero:
        for name, value in (("PAPERCLUB_ARXIV_API_URL", arxiv.url), ("PAPERCLUB_ZOTERO_API_URL", zotero.url),
                            ("PAPERCLUB_ZOTERO_API_KEY", SAMPLE_KEY)):
            monkeypatch.setenv(name, value)
        services = build_services(database_url, clock=lambda: SET_UP)
        services.library.import_file(SEED_FILES["trending"])
        boss = ConsoleSession(services.core, channel="lab", user="boss", manager=True)
        for line in ("next", "follow arxiv cs.LG", "digest mon 09:00",
                     f"zotero link {SAMPLE_GROUP} {SAMPLE_COLLECTION[1]}"):
            reply = boss.send(line)
            assert reply.ok, (line, reply.text)
        services.db.dispose()

        assert main(["--database-url", database_url, "tick", "--at", AT]) == 0
    out, err = capsys.readouterr()
    summary = err.strip().splitlines()[-1]
    assert summary.startswith("tick at 2026-11-30T09:00:30Z: 0 posted, 0 with nothing left, 0 failed, 0 skipped, "
                              "0 polls closed, "), summary
    parts = summary.split("polls closed, ", 1)[1].split(", ")
    assert sorted(parts) == ["1 digests", "1 follows fetched", "1 papers arrived", "1 zotero written"], summary
    assert re.search(r"^Weekly digest: ", out, re.M)  # the console channel's digest, printed
    assert len(zotero.top_items(SAMPLE_GROUP, SAMPLE_COLLECTION[0])) == len(SAMPLE_ITEMS) + 1  # the post

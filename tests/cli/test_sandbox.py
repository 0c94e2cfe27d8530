"""`paperclub sandbox` as a newcomer runs it (issue 46): fakes of arXiv, OpenAlex, Zotero and
Slack on 127.0.0.1, a follow of each kind fetched by `tick`, what they brought in `following`
and in the digest's preview, and the channel's posts synced to the sample Zotero collection,
with no account and no internet."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from io import StringIO

from adapters.bench.slack import post_signed
from adapters.cli.sandbox import _services as sandbox_services
from adapters.cli.sandbox import run, running_fakes
from adapters.fakes.slack_api import BOT_TOKEN, signed_headers, slash_command
from adapters.fakes.zotero import (
    FIELDS,
    SAMPLE_COLLECTION,
    SAMPLE_GROUP,
    SAMPLE_ITEMS,
    SAMPLE_KEY,
)
from bot.zotero.imports import import_collection
from bot.zotero.sync import ZoteroConfig
from tests.conftest import SEED_FILES
from tests.processes import ServeProcess, free_port, get_json, paperclub

LINK = f"zotero link {SAMPLE_GROUP} {SAMPLE_COLLECTION[1]}"
LINES = ["follow arxiv cs.LG", 'follow author "Ada Lovelace"', "tick", "following", "digest preview", "tick",
         "next", LINK, "tick", "zotero"]


def test_the_sandbox_follows_previews_the_digest_and_syncs_a_zotero_collection(tmp_path):
    done = paperclub("sandbox", "--dir", str(tmp_path), cwd=tmp_path, stdin="\n".join(LINES) + "\n")
    out = done.stdout
    assert done.returncode == 0, done.stderr
    # What points a real serve at the same fakes: each provider's address, Zotero's key, Slack's.
    urls = re.findall(r"^  PAPERCLUB_(?:ARXIV|OPENALEX|ZOTERO)_API_URL=http://127\.0\.0\.1:\d+", out, re.M)
    assert len(urls) == 3, out
    assert f"  PAPERCLUB_ZOTERO_API_KEY={SAMPLE_KEY}\n" in out
    assert re.search(r"^  SLACK_API_URL=http://127\.0\.0\.1:\d+/api/$", out, re.M)
    assert f"  SLACK_BOT_TOKEN={BOT_TOKEN}\n" in out
    assert "Following cs.LG (Machine Learning)" in out and "Following Ada Lovelace" in out
    ticks = re.findall(r"^tick: .*$", out, re.M)
    assert ticks[0] == "tick: 2 follows fetched, 5 papers arrived", out
    assert "1. cs.LG (Machine Learning): 3 new papers this week" in out
    assert "2. Ada Lovelace" in out and "2 new papers this week" in out
    preview = out[out.index("Preview, for you only"):]
    assert "New from your follows" in preview and "Sandbox: Sparse Mixtures of Experts" in preview
    assert ticks[1] == "tick: nothing was due"  # fetched once a day: the second tick has nothing
    # The paper `next` posted goes to the sample collection at the next tick.
    posted = re.search(r"^Next paper\n\n\[(\d+)\] (.+)$", out, re.M)
    assert posted, out
    assert "Linked this channel to Zotero collection Reading group of group Sandbox Lab." in out
    assert ticks[2] == "tick: 1 zotero written", out
    status = out[out.rindex("Zotero: group Sandbox Lab"):]
    assert status.startswith(f"Zotero: group Sandbox Lab ({SAMPLE_GROUP}), collection Reading group; "
                             "key: the operator's.\n1 paper in Zotero; last sync ")
    assert (tmp_path / "sandbox.db").exists()


def test_the_sandbox_console_writes_what_the_channel_posted_to_the_sample_collection(db, database_url):
    """In one process, on SQLite and PostgreSQL: the collection holds the samples and, after
    `tick`, the paper posted; a second tick writes nothing again."""
    with running_fakes(datetime.now(timezone.utc)) as fakes:
        services = sandbox_services(database_url, fakes)
        try:
            services.library.import_file(SEED_FILES["trending"])
            out = StringIO()
            run(services, [LINK, "next", "tick", "tick", "zotero"], out)
            text = out.getvalue()
            titles = [o["data"]["title"] for o in fakes.zotero.top_items(SAMPLE_GROUP, SAMPLE_COLLECTION[0])]
            posted = re.search(r"^\[\d+\] (.+)$", text, re.M).group(1)
            assert sorted(titles) == sorted([item["title"] for item in SAMPLE_ITEMS] + [posted]), text
            assert re.findall(r"^tick: .*$", text, re.M) == ["tick: 1 zotero written", "tick: nothing was due"]
            assert "1 paper in Zotero; last sync" in text
        finally:
            services.db.dispose()


def test_the_sample_library_is_valid_zotero_items_that_an_import_reads(db, tmp_path):
    """The samples have only their item types' fields (the fake refuses others when written),
    and `paperclub import zotero:GROUP/Reading group` with the sandbox's key reads them all."""
    from bot.corpus.library import Library

    for item in SAMPLE_ITEMS:
        assert set(item) <= FIELDS[item["itemType"]] and item["title"].startswith("Sandbox: ")
    with running_fakes(datetime.now(timezone.utc)) as fakes:
        config = ZoteroConfig(fakes.zotero.url, SAMPLE_KEY)
        summary = import_collection(Library(db), config, f"zotero:{SAMPLE_GROUP}/{SAMPLE_COLLECTION[1]}", None)
        assert (summary.added, summary.collection) == (len(SAMPLE_ITEMS), "zotero-1000001-reading-group")


def test_a_serve_given_the_printed_variables_runs_on_the_fake_slack(tmp_path):
    """What the banner promises: `paperclub serve` with those variables starts as on a Slack
    workspace, says it is healthy and answers a signed `/paper zotero`."""
    port = free_port()
    with running_fakes(datetime.now(timezone.utc)) as fakes:
        env = {**fakes.env(), "PAPERCLUB_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.db'}", "PORT": str(port)}
        server = ServeProcess([], env, tmp_path / "serve.log").start()
        try:
            server.wait_until_listening(port)
            code, health = get_json(f"http://127.0.0.1:{port}/healthz")
            body = slash_command("zotero", fakes.slack.response_url())
            status, _ = post_signed(port, body, signed_headers(body))
            [answer] = fakes.slack.wait_for("response_url")
        finally:
            server.terminate()
            server.kill()
    assert code == 200 and status == 200, (health, server.log())
    assert fakes.slack.calls[0].method == "auth.test" and fakes.slack.calls[0].token == BOT_TOKEN
    assert "This channel is not linked to a Zotero group library" in json.dumps(answer.params)

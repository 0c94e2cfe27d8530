"""Issue 45 item 8: a short-lived `paperclub tick` whose index update makes a merge due
finishes that merge before it exits (it used to start it on a daemon thread and exit: the
merge was lost, or logged "merging segments failed: cannot schedule new futures after
interpreter shutdown"). The merge is made slow on purpose, so that a process that does
not wait for it loses it every time, not by the luck of timing."""

from __future__ import annotations

import os
import subprocess
import sys

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.search.builtin import service
from bot.search.builtin.files import IndexStore, default_index_dir
from bot.search.builtin.service import SearchService
from tests.conftest import SEED_COUNTS, SEED_FILES

# The tick as `paperclub` runs it (adapters.cli.main.run), with every merge a second long.
SLOW_TICK = """
import sys, time
from bot.search.builtin import service
merge_parts = service.SearchService._merge_parts
def slow(self, *args):
    time.sleep(1.0)
    return merge_parts(self, *args)
service.SearchService._merge_parts = slow
from adapters.cli.main import run
sys.argv = ["paperclub", "tick", "--at", "2026-11-23T08:00:30Z"]
run()
"""


def segments(url: str) -> list[str]:
    directory = default_index_dir(url)
    assert directory is not None
    stored = IndexStore(directory).current()
    assert stored is not None
    return list(stored.segments)


def test_a_short_lived_tick_finishes_the_merge_it_started(tmp_path):
    url = f"sqlite:///{tmp_path / 'paperclub.db'}"
    services = build_services(url)
    services.library.import_file(SEED_FILES["topic-abstracts"], collection="topics")
    services.search.current()  # the stored index: one segment of 17 papers
    services.library.import_file(SEED_FILES["blog-review"], collection="blogs")  # 21 more, not indexed yet
    # A channel posting daily at 09:00 Berlin: the tick picks its paper with search.
    assert ConsoleSession(services.core, channel="a", user="alice", manager=True).send(
        "schedule 09:00 Europe/Berlin daily").ok
    services.db.dispose()
    assert len(segments(url)) == 1

    env = {**os.environ, "PAPERCLUB_DATABASE_URL": url, "PAPERCLUB_EMBEDDINGS": "off"}
    done = subprocess.run([sys.executable, "-c", SLOW_TICK], check=False, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 posted" in done.stderr and "merging segments failed" not in done.stderr
    # The tick added the 21 papers as a segment, which made a merge with the first due:
    # it was done, and saved, before the process ended.
    assert len(segments(url)) == 1
    again = build_services(url)
    index = again.search.current()
    assert index.live_count() == SEED_COUNTS["topic-abstracts"] + SEED_COUNTS["blog-review"]
    assert len(segments(url)) == 1 and not list(default_index_dir(url).glob("tmp-*"))
    again.db.dispose()


def test_a_closed_service_starts_no_merge_and_waits_for_the_one_under_way(tmp_path):
    url = f"sqlite:///{tmp_path / 'paperclub.db'}"
    services = build_services(url)
    library = services.library
    library.import_file(SEED_FILES["topic-abstracts"], collection="topics")
    first = SearchService(library)
    first.current()
    library.import_file(SEED_FILES["blog-review"], collection="blogs")
    first.close()  # as finish_merges does for every service of an ending process
    first.current()  # a new segment, and a merge due: not started by a closed service
    assert first._merger is None and len(segments(url)) == 2
    second = SearchService(library)
    second.current()  # the next one merges
    second.close()  # ... and has finished when close returns
    assert len(segments(url)) == 1
    services.db.dispose()


def test_finishing_a_commands_merges_closes_only_the_services_it_made(tmp_path):
    """Tests (and tools) run many commands in one process (adapters.cli.main): a
    command's end closes the search services made since it began, not the process's
    others. (A service nobody holds is gone already: a merge under way holds its own.)"""
    url = f"sqlite:///{tmp_path / 'paperclub.db'}"
    services = build_services(url)
    before = SearchService(services.library)
    made = service.services_made()
    during = SearchService(services.library)
    service.finish_merges(after=made)
    assert during._closed and not before._closed
    services.db.dispose()

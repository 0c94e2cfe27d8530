"""`paperclub backup` and `paperclub restore` (issue 46): a group's whole state, not only its
papers, comes back in a new database: three channels' history, schedule, votes, polls,
meetings, notes, follows and Zotero link read the same before and after, on SQLite and on
PostgreSQL; the Zotero key opens under the same PAPERCLUB_SECRET_KEY and is refused with a
clear reply under another. Bad input is one line, exit 1, and changes nothing."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url

from adapters.cli.main import main
from adapters.console import ConsoleSession
from adapters.fakes.arxiv import FakeArxiv
from adapters.fakes.openalex import FakeOpenAlex
from bot.app import Services, build_services
from bot.follows.clients import FollowClients
from bot.zotero.keys import KeyBox
from bot.zotero.models import ZoteroLink
from store import Database
from store.backups import contents
from tests.clock import Clock
from tests.conftest import scratch_postgres
from tests.follows.conftest import clients
from tests.zotero.scene import COLLECTION, GROUP, KEY, NOW, SECRET, environment, fake_zotero

CHANNELS = {  # channel: (its schedule, its topic, the meeting's day)
    "reading": ("09:00 Europe/Berlin weekdays", "diffusion", "thu"),
    "theory": ("08:30 America/New_York daily", "graph neural networks", "tue"),
    "vision": ("12:00 UTC weekends", "vision transformers", "fri"),
}
TRANSCRIPT = ("settings", "history", "top", "poll", "sessions", "following", "zotero", "queue", "show {posted}")
LATER = NOW + timedelta(days=3)  # the transcript's instant: after the first meetings
OTHER_SECRET = "another-long-random-secret-0123456789abcdef"
BOTH = pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                               indirect=True)


@pytest.fixture
def outside(monkeypatch) -> Iterator[FollowClients]:
    """Zotero, arXiv and OpenAlex on 127.0.0.1: the follow clients the services are given."""
    with fake_zotero() as zotero, FakeArxiv() as arxiv, FakeOpenAlex() as openalex:
        environment(monkeypatch, zotero, env_key=None, secret=SECRET)
        yield clients(arxiv, openalex)


def services_at(url: str, clock: Clock, follows: FollowClients) -> Services:
    return build_services(url, clock=clock, given=[follows])


def say(services: Services, channel: str, user: str, line: str, manager: bool = False):
    reply = ConsoleSession(services.core, channel=channel, user=user, manager=manager).send(line)
    assert reply.ok, (channel, line, reply.text)
    return reply


def populate(url: str, follows: FollowClients) -> None:
    """Through the commands a group types: each channel gets a schedule, a paper posted and
    voted on with a note, a poll with a vote, a meeting held, a follow; one a Zotero link."""
    clock = Clock(NOW)
    services = services_at(url, clock, follows)
    for channel, (schedule, topic, day) in CHANNELS.items():
        say(services, channel, "boss", f"schedule {schedule}", manager=True)
        say(services, channel, "boss", f"topics add {topic}", manager=True)
        posted = say(services, channel, "boss", "next", manager=True).cards[0].paper_id
        say(services, channel, "ann", f"vote {posted} up")
        say(services, channel, "ben", f"vote {posted} read")
        say(services, channel, "ann", f"notes {posted} section 4 matters in {channel}")
        say(services, channel, "ann", "nominate diffusion probabilistic fields")
        say(services, channel, "ben", "nominate denoising diffusion implicit models")
        poll = say(services, channel, "boss", "poll 2 1h", manager=True)
        say(services, channel, "ann", f"vote {poll.poll_id} 1")
        say(services, channel, "boss", f"session every {day} 17:00 Europe/Berlin 90m at Room 4.12", manager=True)
        say(services, channel, "ben", "volunteer")
        say(services, channel, "boss", "follow arxiv cs.LG", manager=True)
    say(services, "reading", "boss", f"zotero key {KEY}", manager=True)
    say(services, "reading", "boss", f"zotero link {GROUP} {COLLECTION}", manager=True)
    for _ in range(2):  # the polls close, the first meetings are held (and the Zotero sync runs)
        clock.now += timedelta(days=1, hours=12)
        services.core.tick(clock.now, lambda ref, reply: "ref", ["console"])
    for channel in CHANNELS:  # a second poll, open when the transcript is read
        say(services, channel, "ann", "nominate graph edit networks")
        say(services, channel, "ben", "nominate an image is worth 16x16 words")
        poll = say(services, channel, "boss", "poll 2 7d", manager=True)
        say(services, channel, "ben", f"vote {poll.poll_id} 2")
    services.db.dispose()


def transcript(url: str, follows: FollowClients) -> list[str]:
    """What a member reads in each channel, the posted paper's card (and its notes) included."""
    services = services_at(url, Clock(LATER), follows)
    try:
        said = []
        for channel in CHANNELS:
            posted = re.findall(r"\[(\d+)\]", say(services, channel, "ann", "history").text)[-1]  # the first
            for line in TRANSCRIPT:
                reply = say(services, channel, "ann", line.format(posted=posted))
                said.append(f"{channel}> {line}\n{reply.text}\n{reply.cards!r}")
        return said
    finally:
        services.db.dispose()


def sealed_key(url: str) -> str | None:
    db = Database(url)
    try:
        with db.session() as session:
            return session.scalar(select(ZoteroLink.api_key))
    finally:
        db.dispose()


@pytest.fixture
def new_database(seeded_db_url, request, tmp_path) -> Iterator[str]:
    """A database that does not exist yet (SQLite) or is empty (PostgreSQL), of the source's kind."""
    if make_url(seeded_db_url).get_backend_name() == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.db'}"
        return
    with scratch_postgres(request.getfixturevalue("postgres_admin")) as url:
        yield url


def paperclub(*argv: str) -> int:
    return main(list(argv))


@BOTH
def test_a_restored_backup_brings_back_every_channels_state(seeded_db_url, new_database, outside, tmp_path,
                                                            capsys, monkeypatch):
    populate(seeded_db_url, outside)
    before = transcript(seeded_db_url, outside)
    assert "presented by @ben" in before[TRANSCRIPT.index("sessions")]  # a meeting held, not only planned
    assert "section 4 matters in theory" in "\n".join(before)
    assert "Poll 4, open until" in before[TRANSCRIPT.index("poll")]  # and poll 1's winner is queued
    backup = tmp_path / "group.backup"
    assert paperclub("--database-url", seeded_db_url, "backup", str(backup)) == 0
    assert "PAPERCLUB_SECRET_KEY" in capsys.readouterr().out
    if make_url(new_database).get_backend_name() == "sqlite":  # a stale index beside the new file
        (Path(make_url(new_database).database + ".index") / "vectors").mkdir(parents=True)

    assert paperclub("--database-url", new_database, "restore", str(backup)) == 0
    said = capsys.readouterr().out
    assert f"Restored {backup}" in said and ("Deleted the search index" in said or "No search index" in said)
    assert not Path(str(make_url(new_database).database) + ".index").exists()
    assert transcript(new_database, outside) == before
    assert KeyBox(SECRET).open(sealed_key(new_database)) == KEY
    relinked = ConsoleSession(services_at(new_database, Clock(LATER), outside).core, channel="reading",
                              user="boss", manager=True).send(f"zotero link {GROUP} {COLLECTION}")
    assert relinked.ok, relinked.text  # the key given in chat, opened with the same secret


@BOTH
def test_under_another_secret_the_restored_zotero_key_is_refused_clearly(seeded_db_url, new_database, outside,
                                                                          tmp_path, monkeypatch):
    populate(seeded_db_url, outside)
    backup = tmp_path / "group.backup"
    assert paperclub("--database-url", seeded_db_url, "backup", str(backup)) == 0
    assert paperclub("--database-url", new_database, "restore", str(backup)) == 0
    monkeypatch.setenv("PAPERCLUB_SECRET_KEY", OTHER_SECRET)
    assert KeyBox(OTHER_SECRET).open(sealed_key(new_database)) is None
    refused = ConsoleSession(services_at(new_database, Clock(LATER), outside).core, channel="reading",
                             user="boss", manager=True).send(f"zotero link {GROUP} {COLLECTION}")
    assert not refused.ok
    assert "cannot be decrypted (PAPERCLUB_SECRET_KEY changed or is not set)" in refused.text
    assert "zotero key KEY" in refused.text


@BOTH
def test_restore_over_a_database_with_data_needs_force_and_says_what_it_replaces(seeded_db_url, outside, tmp_path,
                                                                                 capsys):
    backup = tmp_path / "library.backup"
    assert paperclub("--database-url", seeded_db_url, "backup", str(backup)) == 0
    populate(seeded_db_url, outside)
    before = transcript(seeded_db_url, outside)
    capsys.readouterr()
    assert paperclub("--database-url", seeded_db_url, "restore", str(backup)) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "is not empty (rows in" in err and "--force" in err
    assert "Nothing was changed" in err
    assert transcript(seeded_db_url, outside) == before

    assert paperclub("--database-url", seeded_db_url, "restore", "--force", str(backup)) == 0
    assert "replacing rows in" in capsys.readouterr().out
    db = Database(seeded_db_url)
    assert "channels" not in contents(db) and contents(db)["papers"] > 0  # the backup's library, no group yet
    db.dispose()


def _one_line_refusal(capsys, url: str, *argv: str) -> str:
    db = Database(url)
    held = contents(db)
    db.dispose()
    assert paperclub("--database-url", url, *argv) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    db = Database(url)
    assert contents(db) == held
    db.dispose()
    return err


@BOTH
def test_a_file_that_is_not_a_backup_is_refused_in_one_line_and_changes_nothing(seeded_db_url, tmp_path, capsys):
    export = tmp_path / "papers.jsonl"
    export.write_text('{"title": "A paper"}\n')
    foreign = tmp_path / "notes.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE notes (x)").connection.close()
    empty = tmp_path / "empty.backup"
    empty.touch()
    for argv, says in [
        (("restore", "--force", str(tmp_path / "missing.backup")), "no such file"),
        (("restore", "--force", str(tmp_path)), "is a directory"),
        (("restore", "--force", str(export)), "is not a paperclub backup"),
        (("restore", "--force", str(empty)), "is not a paperclub backup"),
    ]:
        assert says in _one_line_refusal(capsys, seeded_db_url, *argv)
    kind = make_url(seeded_db_url).get_backend_name()
    if kind == "sqlite":
        assert "not paperclub's" in _one_line_refusal(capsys, seeded_db_url, "restore", "--force", str(foreign))
    else:  # a SQLite backup into PostgreSQL says where it goes instead
        says = _one_line_refusal(capsys, seeded_db_url, "restore", "--force", str(foreign))
        assert "is a SQLite backup" in says and "restore it into a SQLite file" in says
    assert "is a directory" in _one_line_refusal(capsys, seeded_db_url, "backup", str(tmp_path))


def test_a_pg_dump_archive_into_sqlite_is_refused(seeded_copy, tmp_path, capsys):
    archive = tmp_path / "group.dump"
    archive.write_bytes(b"PGDMP\x01\x0e\x00" + b"\x00" * 64)
    says = _one_line_refusal(capsys, seeded_copy, "restore", "--force", str(archive))
    assert "is a PostgreSQL backup (pg_dump archive)" in says and "restore it into a PostgreSQL database" in says


def test_without_pg_dump_the_backup_says_what_to_install(postgres_url, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no PostgreSQL client programs here
    assert paperclub("--database-url", postgres_url, "backup", str(tmp_path / "x.dump")) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: pg_dump is not installed") and "postgresql-client" in err
    assert not (tmp_path / "x.dump").exists()


def test_the_password_reaches_pg_dump_by_environment_not_its_command_line():
    from store.backups import _connection, _password_env

    url = "postgresql+psycopg://lab:s3cret@db.example:5433/paperclub?sslmode=require"
    assert _connection(url) == ["--dbname=postgresql://lab@db.example:5433/paperclub?sslmode=require"]
    assert _password_env(url) == {"PGPASSWORD": "s3cret"}


def test_a_backup_while_another_connection_writes_is_one_consistent_snapshot(seeded_copy, tmp_path):
    """A writer adds two rows a transaction (a ledger whose amounts sum to zero) without
    pause while the backup runs: the copy holds whole transactions only, and passes
    SQLite's integrity check."""
    path = make_url(seeded_copy).database
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE ledger (amount INTEGER NOT NULL)")
    started, stop = threading.Event(), threading.Event()
    written = [0]

    def write() -> None:
        writer = sqlite3.connect(path, timeout=30)
        writer.execute("PRAGMA journal_mode=WAL")
        while not stop.is_set():
            with writer:
                writer.executemany("INSERT INTO ledger VALUES (?)", [(written[0] + 1,), (-(written[0] + 1),)])
            written[0] += 1
            if written[0] == 50:
                started.set()
        writer.close()

    thread = threading.Thread(target=write)
    thread.start()
    try:
        assert started.wait(timeout=60)
        before = written[0]
        assert paperclub("--database-url", seeded_copy, "backup", str(tmp_path / "snapshot.db")) == 0
    finally:
        stop.set()
        thread.join()
    copy = sqlite3.connect(tmp_path / "snapshot.db")
    rows, total = copy.execute("SELECT count(*), coalesce(sum(amount), 0) FROM ledger").fetchone()
    assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # one file, no -wal beside it
    copy.close()
    assert total == 0 and rows % 2 == 0 and rows >= 2 * before
    assert not (tmp_path / "snapshot.db-wal").exists()


@pytest.mark.postgres
def test_a_cut_pg_dump_archive_changes_nothing_even_with_force(postgres_admin, seeded_postgres, outside, tmp_path,
                                                                capsys):
    """The archive's table of contents reads, its data stops short: the restore fails in one
    line before dropping anything, and the database keeps every channel's state."""
    with scratch_postgres(postgres_admin, template=seeded_postgres) as source, \
            scratch_postgres(postgres_admin, template=seeded_postgres) as target:
        populate(source, outside)
        populate(target, outside)
        whole = tmp_path / "group.dump"
        assert paperclub("--database-url", source, "backup", str(whole)) == 0
        cut = tmp_path / "cut.dump"
        cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 9 // 10])
        listed = subprocess.run(["pg_restore", "--list", str(cut)], capture_output=True, check=False)
        assert listed.returncode == 0  # its table of contents reads: only the data is cut
        before = transcript(target, outside)
        says = _one_line_refusal(capsys, target, "restore", "--force", str(cut))
        assert f"reading {cut} failed" in says
        assert transcript(target, outside) == before

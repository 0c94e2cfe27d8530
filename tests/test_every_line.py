"""Every line a member types gets exactly one reply: no exception, nothing of our insides
in it, and no change to the channel's state when it is refused (or when a member tries a
manager's command). Driven with hypothesis-generated lines on SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import re
import socket
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from sqlalchemy import MetaData, Table, event, select

from bot.app import build_services, schema
from bot.core import NOT_OUR_BUTTON, OUR_FAULT
from bot.corpus import fetch
from bot.follows import clients as follow_clients
from bot.grammar import clean_line, split_command
from bot.messages import ChannelRef, Incoming, Reply, UserRef
from bot.services.models import PaperNote
from store.models import Channel
from tests.clock import Clock

UTC = timezone.utc
START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
CHANNELS = ("reading", "theory")
LINES_PER_EXAMPLE = 50
EXAMPLES = 20  # 20 x 50 = 1,000 lines per part
PARTS = 4  # 4,000 lines on each database, in parts that parallel workers share out
# Whatever a member typed may come back quoted; these come only from our insides.
INTERNALS = ("Traceback (most recent call last)", "[SQL:", "sqlalchemy.", "psycopg", "site-packages",
             'File "', "OperationalError", "IntegrityError", "DataError", "/work/", "/tmp/")


def channel_tables(metadata: MetaData) -> tuple[Table, ...]:
    """The tables that hold channels' state, from the schema: `channels`, each table with
    a channel_id, and each that points by a foreign key at one of those (a poll's options,
    a post's votes); not the corpus, and not a table that records requests rather than
    state (`info={"audit": True}`: who asked for what, written for a refusal too)."""
    held = {"channels"}
    grew = True
    while grew:
        before = len(held)
        for table in metadata.tables.values():
            if "channel_id" in table.columns or any(fk.column.table.name in held for fk in table.foreign_keys):
                held.add(table.name)
        grew = len(held) > before
    return tuple(metadata.tables[name] for name in sorted(held) if not metadata.tables[name].info.get("audit"))


STATE = channel_tables(schema())


def state(db, tables=STATE, previous: dict | None = None) -> dict:
    """Every row a command can change, as plain values (the corpus is left out), by
    table: `tables` read again, the others as `previous` holds them."""
    now = dict(previous or {})
    with db.connection() as connection:
        for table in tables:
            now[table.name] = tuple(sorted(
                tuple(str(value) for value in row) for row in connection.execute(select(table))
            ))
    return now


def test_the_watched_tables_are_the_channels_state():
    """Derived from the schema: a feature's new table is watched without an edit here."""
    names = {table.name for table in STATE}
    assert {"channels", "posts", "post_votes", "poll_options", "meetings", "digests", "digest_plans",
            "follows", "zotero_links", "channel_links"} <= names
    assert not names & {"papers", "paper_sources", "corpus_state", "feeds", "heartbeats", "additions"}


# What an INSERT, UPDATE or DELETE (an upsert, a statement after a WITH) names as its table.
_WRITTEN = re.compile(r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+\"?(\w+)", re.IGNORECASE)


class Written:
    """The tables of STATE that statements wrote to since the last `taken()`: a line that
    wrote to none changed none, so only the tables written are read again to compare (each
    line reading every table made the fuzz quadratic in the rows it had made). A write to
    any other table (its ON DELETE CASCADE may reach ours) or a COPY: every table again."""

    def __init__(self, engine):
        self.names = {table.name: table for table in STATE}
        self.tables: set[str] = set()
        self.everything = False
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, conn, cursor, statement, parameters, context, executemany):
        for name in _WRITTEN.findall(statement):
            if name in self.names:
                self.tables.add(name)
            else:
                self.everything = True
        if statement.lstrip().upper().startswith("COPY"):
            self.everything = True

    def taken(self) -> list:
        tables = STATE if self.everything else [self.names[name] for name in sorted(self.tables)]
        self.tables.clear()
        self.everything = False
        return list(tables)


# --- the lines ------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.sampled_from(["1", "2", "3", "0", "-1", "#2", "007", "²", "①", "٣", "12²", "1.5", "1e9", "0x10",
                     "2147483647", "2147483648", "3000000000", "99999999999999999999999", "9" * 400]),
    st.integers(-(10**25), 10**25).map(str),
    st.text(alphabet=st.characters(categories=["Nd", "No"]), min_size=1, max_size=4),
)
VALUES = st.sampled_from([
    "09:00", "9:00", "24:00", "25:99", "٠٩:٠٠", "UTC", "Europe/Berlin", "europe/berlin", "Mars/Olympus", "/",
    "2027-01-01", "2020-01-01", "2026-13-45", "2026-11-24", "٢٠٢٧-٠١-٠١", "daily", "weekdays", "mon,wed",
    "mon,,", ",", "tue", "48h", "0h", "90m", "99999d", "15d", "until", "in:nosuch", "in:trending", "track:bogus",
    "author:", "tag:", "author:bengio", '"', "'", "\\", "%", "*", "📄", "@alice", "@bob", "<@U123>",
    "<@!42|x>", "@" + "x" * 150, "a\x00b", "\x00", "\u202e", "none", "up", "down", "read", "all", "close",
    "done", "remove", "add", "clear", "every", "off", "on", "skip", "pause", "resume", "x" * 20_000,
])
ANY_TEXT = st.text(max_size=40)


# Every command's grammar, with slots filled by good and wrong values alike.
TEMPLATES = (
    "show {ID}", "similar {ID}", "notes {ID} {TEXT}", "vote {ID} {VOTE}", "nominate {ID}", "nominate {TEXT}",
    "queue done {ID}", "queue remove {ID}", "queue", "poll {N} {DURATION}", "poll close", "poll {N}",
    "history {N}", "top {N}", "stats {N}", "sessions {N}", "search {TEXT}", "search {TEXT} {FILTER}",
    "schedule {TIME} {ZONE} {DAYS}", "schedule {TIME}", "schedule pause until {DATE}", "schedule resume",
    "schedule off", "schedule on", "topics add {TEXT}", "topics remove {TEXT}", "topics clear", "use {TEXT}",
    "use all", "today", "next", "session every {DAY} {TIME} {ZONE}", "session skip {DATE}", "session off",
    "presenters add {MEMBER}", "presenters remove {MEMBER}", "volunteer", "swap {MEMBER}", "help {TEXT}",
    "settings", "settings {TEXT}", "vote {N}", "poll", "vote post:{ID} {VOTE}",
    "add {TEXT}", "add {ID}", "add arXiv:{ID}", "discuss {ID}",
    "digest {DAY} {TIME}", "digest {TIME}", "digest {DAY}", "digest off", "digest on", "digest preview", "digest",
    "session {LENGTH}", "session at {PLACE}", "session every {DAY} {TIME} {ZONE} {LENGTH} at {PLACE}",
    "follow arxiv {TEXT}", "follow arxiv cs.LG {TEXT}", "follow author {TEXT}", "follow citations", "unfollow {N}",
    "following", "fresh {DURATION}", "fresh off",
)
TEXT = st.one_of(ANY_TEXT, VALUES, st.text(alphabet=st.sampled_from("ab \x00\u202e²"), max_size=8))
SLOTS = {
    "ID": st.one_of(st.integers(1, 1100).map(str), st.integers(1, 20).map(str), NUMBERS),
    "N": st.one_of(st.integers(0, 60).map(str), NUMBERS),
    "TEXT": TEXT,
    "VOTE": st.one_of(st.sampled_from(["up", "down", "read", "none", "1", "2", "4", "11"]), NUMBERS, TEXT),
    "DURATION": st.one_of(st.sampled_from(["10m", "48h", "2d", "1w", "3w", "15d", "9m", "0h", "99999d"]),
                          NUMBERS, TEXT),
    "FILTER": st.one_of(st.sampled_from(["in:trending", "in:nosuch", "track:oral", "track:bogus", "author:x",
                                         "tag:", "in:", 'author:"a b"']), TEXT),
    "TIME": st.one_of(st.sampled_from(["09:00", "23:59", "00:00", "24:00", "9", "٠٩:٠٠"]), TEXT),
    "ZONE": st.one_of(st.sampled_from(["UTC", "Europe/Berlin", "europe/berlin", "America/New_York",
                                       "Mars/Olympus", "weekdays"]), TEXT),
    "DAYS": st.one_of(st.sampled_from(["daily", "weekdays", "weekends", "mon,wed,fri", "mon,,", "funday"]), TEXT),
    "DAY": st.one_of(st.sampled_from(["mon", "tue", "Friday", "sun", "someday"]), TEXT),
    "DATE": st.one_of(st.dates(date(2020, 1, 1), date(2030, 1, 1)).map(str), VALUES, TEXT),
    "LENGTH": st.one_of(st.sampled_from(["90m", "1h30m", "2h", "4m", "8h", "9h", "0m", "1h30", "99999h"]), TEXT),
    "PLACE": st.one_of(st.sampled_from(["Room 4.12", "-", "https://meet.example/abc", "ftp://x", "javascript:x",
                                        "https://", "Hall https://meet.example/a https://meet.example/b",
                                        "x" * 201]), TEXT),
    "MEMBER": st.one_of(st.sampled_from(["@ann", "@bob", "@cy", "<@U123>", "<@!42|x>", "@", "@" + "x" * 150]),
                        TEXT),
}


def command_lines(core) -> st.SearchStrategy[str]:
    names = sorted(core.commands)
    literal = sorted({w for c in core.commands.values() for w in _usage_words(c.usage)})
    argument = st.one_of(NUMBERS, VALUES, st.sampled_from(literal), ANY_TEXT)
    loose = st.builds(lambda name, args: " ".join([name, *args]), st.sampled_from(names),
                      st.lists(argument, max_size=4))
    shaped = st.sampled_from(TEMPLATES).flatmap(_filled)
    return st.one_of(shaped, shaped, shaped, loose, loose, ANY_TEXT, st.text(max_size=300))


def _filled(template: str) -> st.SearchStrategy[str]:
    slots = [part[1:-1] for part in template.split() if part.startswith("{")]
    return st.tuples(*(SLOTS[s] for s in slots)).map(lambda values: _fill(template, values))


def _fill(template: str, values: tuple[str, ...]) -> str:
    out, queue = [], list(values)
    for part in template.split():
        out.append(queue.pop(0) if part.startswith("{") else part)
    return " ".join(out)


def _usage_words(usage: str) -> list[str]:
    for mark in "·|[],.":
        usage = usage.replace(mark, " ")
    return [w for w in usage.split() if w.isalpha() and w.islower()]


# A member typing these asks for a manager's change: always refused for a member.
def manager_action(line: str) -> bool:
    words = clean_line(line).split()  # as the core reads it: control characters dropped
    if not words:
        return False
    name, rest = words[0].lower(), [w.lower() for w in words[1:]]
    return ((name in ("schedule", "use", "session", "presenters", "topics", "digest") and bool(rest))
            or (name in ("next", "poll") and (bool(rest) or name == "next"))
            or (name == "queue" and rest[:1] == ["remove"])
            or name == "discuss")


# --- the property -----------------------------------------------------------------------------


def closed_port() -> int:
    """A local port nothing listens on: `add` is refused at once, never reaching the network."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def services(seeded_db_url, monkeypatch):
    clock = Clock(START)
    built = fuzzed_services(seeded_db_url, clock, monkeypatch)
    yield built, clock
    built.db.dispose()


def fuzzed_services(url: str, clock: Clock, monkeypatch: pytest.MonkeyPatch):
    """The services over `url` with every outside service nowhere (answered at once), and
    the fuzz's channels known."""
    nowhere = f"http://127.0.0.1:{closed_port()}"
    # `add`, `zotero link` and `follow` fetch from nowhere.
    for name in ("ARXIV", "CROSSREF", "OPENREVIEW", "ZOTERO", "OPENALEX"):
        monkeypatch.setenv(f"PAPERCLUB_{name}_API_URL", nowhere)
    monkeypatch.setenv("PAPERCLUB_ZOTERO_API_KEY", "FuzzKey0123456789")  # so `zotero link` asks (nowhere)
    monkeypatch.setenv("PAPERCLUB_SECRET_KEY", "fuzz-secret-" + "x" * 32)  # so `zotero key` is checked too
    monkeypatch.delenv("PAPERCLUB_FETCH_ALLOW_PRIVATE", raising=False)
    # Nowhere answers at once: no spacing between requests to it and no retry of the author
    # lookup (a member's `follow author` would otherwise wait ~5 s on each, a minute a part).
    monkeypatch.setattr(fetch.DEFAULT_LIMITER, "interval", 0.0)
    monkeypatch.setattr(follow_clients, "LOOKUP_POLICY", replace(follow_clients.LOOKUP_POLICY, max_attempts=1))
    built = build_services(url, clock=clock)
    for channel in CHANNELS:  # first contact happened: a refusal must not even create a row
        built.channels.get(ChannelRef("console", "local", channel))
    return built


def answer(core, line: str, channel: str, manager: bool) -> Reply:
    user = UserRef("console", "ann" if manager else "bob", is_manager=manager)
    return core.handle(Incoming(ChannelRef("console", "local", channel), user, line))


@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_every_line_gets_one_clean_reply_and_refusals_change_nothing(services, seeded_db_url, part, caplog):
    built, clock = services
    lines_seen = []
    written = Written(built.db.engine)
    step = st.tuples(command_lines(built.core), st.booleans(), st.sampled_from(CHANNELS),
                     st.integers(0, 30 * 60))

    # A fixed seed per part: each part its own lines, the same on every run.
    @seed(20261128 + part)
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(step, min_size=LINES_PER_EXAMPLE, max_size=LINES_PER_EXAMPLE))
    def session(steps):
        before = state(built.db)
        written.taken()
        for line, manager, channel, minutes in steps:
            clock.now += timedelta(minutes=minutes)
            reply = answer(built.core, line, channel, manager)
            lines_seen.append(line)
            assert isinstance(reply, Reply), line
            assert reply.text != OUR_FAULT, f"{line!r} met a bug: see the log"
            shown = reply.text.replace(line, "")
            leaked = [marker for marker in INTERNALS if marker in shown]
            assert not leaked, f"{line!r} -> {reply.text!r}"
            after = state(built.db, written.taken(), before)
            if not reply.ok:
                assert after == before, f"{line!r} was refused but changed the state"
            if not manager and manager_action(line):
                assert not reply.ok and after == before, f"a member's {line!r} was not refused"
            if not manager and reply.text.startswith("Only") and not reply.ok:  # grammar.NotAllowed
                # Adapters ask a platform for rights only when the command says it may
                # need them (Slack's users.info): a refusal for rights must be foreseen.
                name, args = split_command(clean_line(line))
                assert built.core.commands[name].manager_rights(args), f"{line!r} needed rights unforeseen"
            before = after
        # The tables read again line by line are the tables as they are.
        assert state(built.db) == before

    with caplog.at_level(logging.ERROR, logger="bot"):
        session()
    assert len(lines_seen) == EXAMPLES * LINES_PER_EXAMPLE  # hypothesis ran every example
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[:2000]


# --- the cases a red-team pass found, by name --------------------------------------------------


@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
@pytest.mark.parametrize("line", [
    "top ²", "history ²", "vote ² up", "vote 1 ²", "poll ①", "show ²", "similar ①", "sessions ٣", "stats ²",
    "show 99999999999999999999999", "show 3000000000", "similar 3000000000", "vote 3000000000 up",
    "vote 99999999999999999999999 1", "notes 3000000000 fine", "queue done 3000000000", "nominate 3000000000",
    "notes 99999999999999999999999 fine", "presenters add @" + "x" * 150, "search " + "x" * 20_000,
])
def test_red_team_lines_get_a_clean_refusal_on_both_databases(services, line):
    built, _ = services
    before = state(built.db)
    for manager in (True, False):
        reply = answer(built.core, line, "reading", manager)
        assert not reply.ok and reply.text != OUR_FAULT, reply.text
    assert state(built.db) == before


@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_a_nul_in_a_note_is_dropped_not_an_error(services):
    built, _ = services
    reply = answer(built.core, "notes 1 a\x00b", "reading", False)
    assert reply.ok, reply.text
    with built.db.session() as session:
        assert session.scalars(select(PaperNote.text)).all() == ["ab"]


def test_a_pause_beyond_two_weeks_still_tells_when_the_next_paper_comes(services):
    built, _ = services
    for line in ("schedule 09:00 UTC", "schedule pause until 2027-01-01"):
        assert answer(built.core, line, "reading", True).ok
    today = answer(built.core, "today", "reading", False)
    assert today.ok and "Saturday 02 January" in today.text


def test_a_pause_until_a_past_date_is_refused(services):
    built, _ = services
    answer(built.core, "schedule 09:00 UTC", "reading", True)
    reply = answer(built.core, "schedule pause until 2020-01-01", "reading", True)
    assert not reply.ok and "has passed" in reply.text


def test_a_click_runs_only_a_rendered_vote(services):
    built, _ = services
    answer(built.core, "schedule 09:00 UTC", "reading", True)
    click = Incoming(ChannelRef("console", "local", "reading"), UserRef("console", "ann", is_manager=True),
                     "schedule off")
    assert built.core.click(click).text == NOT_OUR_BUTTON
    with built.db.session() as session:
        assert session.scalars(select(Channel.enabled).where(Channel.channel == "reading")).one()


def test_a_bug_meets_the_member_as_one_apology_and_the_operator_as_a_traceback(services, caplog):
    built, _ = services

    def broken(_incoming, _args):
        raise KeyError("a bug of ours")

    built.core.commands["show"] = built.core.commands["show"].__class__(
        "show", "show ID", "x", "show 1", broken)
    with caplog.at_level(logging.ERROR, logger="bot.core"):
        reply = answer(built.core, "show 1", "reading", False)
    assert reply.text == OUR_FAULT and not reply.ok and reply.ephemeral
    assert "Traceback" in caplog.text and "KeyError" in caplog.text

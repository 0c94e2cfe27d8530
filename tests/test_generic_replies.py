"""Issue 45's "done when": 2,000 generated lines of the newer commands (follow, unfollow,
digest, zotero, session) and not one generic reply. A refusal says what was wrong: never
the apology for a bug (core.OUR_FAULT), never the bare usage with no reason before it.
And a meeting's place is never a time (`session every wed at 5pm` once stored "5pm").
On SQLite, as CI runs it; tests/test_every_line.py holds every command to the rest."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from bot.channels.times import clock_time, joined_halves
from bot.core import OUR_FAULT
from bot.messages import ChannelRef
from tests.clock import Clock
from tests.test_every_line import CHANNELS, START, answer, fuzzed_services

LINES_PER_EXAMPLE = 50
EXAMPLES = 40  # 40 x 50 = 2,000 lines

WORDS = st.sampled_from([
    "on", "off", "every", "at", "in", "for", "skip", "calendar", "reset", "preview", "link", "key", "unlink",
    "arxiv", "author", "citations", "-", "", '"', '""', "'", "\\", "%", "📄", "\x00", "\u202e", "²", "①", "٣",
    "x" * 300, "https://meet.example/abc", "ftp://x", "javascript:alert(1)", "@ann", "<@U1>", "#3",
])
ANY_TEXT = st.text(max_size=30)
TEXT = st.one_of(ANY_TEXT, WORDS, st.text(alphabet=st.sampled_from("ab5pm: \x00\u202e²h"), max_size=8))
SLOTS = {
    "DAY": st.one_of(st.sampled_from(["mon", "wed", "Wednesday", "thursdays", "sun", "daily", "weekdays",
                                      "mon,wed", "someday"]), TEXT),
    "TIME": st.one_of(st.sampled_from(["5pm", "5 pm", "5:30pm", "5:30 p.m.", "17:30", "9:00", "17h", "17h30",
                                       "noon", "midnight", "12am", "12pm", "13pm", "0am", "25:00", "24:00",
                                       "17", "5", "1h30", "9h", "2h", "٠٩:٠٠", "17.30", "at 5pm"]), TEXT),
    "ZONE": st.one_of(st.sampled_from(["UTC", "Europe/Berlin", "europe/berlin", "America/New_York",
                                       "Mars/Olympus", "in Europe/Berlin", "/"]), TEXT),
    "LENGTH": st.one_of(st.sampled_from(["90m", "1h30m", "2h", "4m", "8h", "9h", "0m", "45min", "99999h",
                                         "for 90m"]), TEXT),
    "PLACE": st.one_of(st.sampled_from(["Room 4.12", "-", "https://meet.example/abc", "Room 1 at 5pm",
                                        "Hall https://meet.example/a https://meet.example/b", "5", "x" * 201,
                                        "Hörsaal 1 in Gebäude B", "at", "in"]), TEXT),
    "DATE": st.one_of(st.sampled_from(["2026-12-02", "2026-12-03", "2020-01-01", "2026-13-45", "tomorrow"]),
                      TEXT),
    "N": st.one_of(st.integers(0, 30).map(str), st.sampled_from(["-1", "²", "3000000000", "9" * 40, "1.5"]),
                   TEXT),
    "CATEGORY": st.one_of(st.sampled_from(["cs.LG", "cs.CL", "math.OC", "stat.ML", "cs.lg", "cs.nosuch",
                                           "physics", "cs"]), TEXT),
    "NAME": st.one_of(st.sampled_from(['"Yann LeCun"', '"Ada Lovelace"', "A5023888391", '"', "LeCun"]), TEXT),
    "KEY": st.one_of(st.sampled_from(["FuzzKey0123456789", "short", "x" * 80, "bad key!"]), TEXT),
}
TEMPLATES = (
    "session", "session every {DAY} {TIME}", "session every {DAY} at {TIME}", "session {DAY} {TIME} {ZONE}",
    "session {TIME}", "session at {TIME}", "session at {PLACE}", "session in {PLACE}", "session {LENGTH}",
    "session every {DAY} {TIME} {ZONE} {LENGTH} at {PLACE}", "session at {PLACE} at {TIME}",
    "session on", "session off", "session {TEXT}", "session skip {DATE}", "session calendar", "session on {TEXT}",
    "digest", "digest {DAY} {TIME}", "digest {TIME}", "digest {DAY}", "digest on", "digest off",
    "digest preview", "digest {TEXT}", "digest {TEXT} {TEXT}",
    "follow arxiv {CATEGORY}", 'follow arxiv {CATEGORY} "{TEXT}"', "follow author {NAME}", "follow citations",
    "follow", "follow {TEXT}", "follow {TEXT} {TEXT}", "unfollow {N}", "unfollow", "unfollow {TEXT}",
    "zotero", "zotero link {N} {TEXT}", "zotero link {N}", "zotero key {KEY}", "zotero unlink", "zotero {TEXT}",
)
COMMANDS = ("session", "digest", "follow", "unfollow", "zotero")


def _filled(template: str) -> st.SearchStrategy[str]:
    slots = [part.strip('"{}') for part in template.split() if "{" in part]
    return st.tuples(*(SLOTS.get(s, TEXT) for s in slots)).map(lambda values: _fill(template, values))


def _fill(template: str, values: tuple[str, ...]) -> str:
    queue = list(values)
    return " ".join(_slot(part, queue) if "{" in part else part for part in template.split())


def _slot(part: str, queue: list[str]) -> str:
    start, end = part.index("{"), part.index("}")
    return part[:start] + queue.pop(0) + part[end + 1:]


LINES = st.one_of(
    st.sampled_from(TEMPLATES).flatmap(_filled), st.sampled_from(TEMPLATES).flatmap(_filled),
    st.builds(lambda name, words: " ".join([name, *words]), st.sampled_from(COMMANDS),
              st.lists(st.one_of(WORDS, *SLOTS.values()), max_size=5)),
)


def generic(reply_text: str, ok: bool) -> bool:
    """The apology for a bug, or a refusal that is only the usage: nothing says what was wrong."""
    return reply_text == OUR_FAULT or (not ok and reply_text.startswith("Usage:"))


def placed(built, channel: str) -> str | None:
    """The channel's meeting place, as stored."""
    plan = built.meetings.plan(built.channels.get(ChannelRef("console", "local", channel)).id)
    return plan.place if plan else None


def _time_or_none(word: str):
    try:
        return clock_time(word)
    except ValueError:  # written as a time, but none (25:00): not a time either
        return None


@pytest.fixture
def services(seeded_copy, monkeypatch):
    clock = Clock(START)
    built = fuzzed_services(seeded_copy, clock, monkeypatch)
    # One channel as the lab had it (a Berlin schedule, a meeting, a digest), one bare.
    for line in ("schedule 09:00 Europe/Berlin", "session every thu 16:00", "digest mon 09:00"):
        assert answer(built.core, line, CHANNELS[0], True).ok, line
    yield built, clock
    built.db.dispose()


def test_two_thousand_lines_of_the_newer_commands_get_no_generic_reply(services, caplog):
    built, clock = services
    seen: list[str] = []
    found: list[tuple[str, str]] = []
    step = st.tuples(LINES, st.booleans(), st.sampled_from(CHANNELS), st.integers(0, 6 * 60))

    @seed(20261245)
    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(step, min_size=LINES_PER_EXAMPLE, max_size=LINES_PER_EXAMPLE))
    def lines(steps):
        for line, manager, channel, minutes in steps:
            clock.now += timedelta(minutes=minutes)
            reply = answer(built.core, line, channel, manager)
            seen.append(line)
            if generic(reply.text, reply.ok):
                found.append((line, reply.text.splitlines()[0]))
            if reply.ok and line.startswith("session ") and manager:
                place = placed(built, channel)
                if place and any(_time_or_none(w) for w in joined_halves(place.split())[:1]):
                    found.append((line, f"the place became {place!r}"))

    with caplog.at_level(logging.ERROR, logger="bot"):
        lines()
    assert len(seen) == EXAMPLES * LINES_PER_EXAMPLE  # hypothesis ran every example
    assert {line.split(" ", 1)[0] for line in seen} >= set(COMMANDS)
    assert not found, "\n".join(f"{line!r} -> {said!r}" for line, said in sorted(set(found))[:30])
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[:2000]

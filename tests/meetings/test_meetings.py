"""Reading sessions: the weekly meeting, a fair rota, reminders exactly once, notes."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.services.meetings import member_id
from bot.services.models import MeetingPlan, MeetingSkip, PaperNote, Presenter
from tests.clock import Clock

UTC = timezone.utc
START = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday


def session_for(services, user: str, manager: bool = False, channel: str = "club") -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user=user, manager=manager)


def _fill_queue(boss: ConsoleSession, queries: list[str]) -> None:
    """Papers reach the queue the way members put them there: nominate, poll, vote, close."""
    for query in queries:
        assert boss.send(f"nominate {query}").ok
        poll = boss.send("poll 2 1h")
        assert boss.send(f"vote {poll.poll_id} 1").ok
        assert "now in the reading queue" in boss.send("poll close").text


def test_six_weeks_of_meetings_with_a_fair_rota_a_volunteer_and_a_skip(seeded_copy):
    clock = Clock(START)
    services = build_services(seeded_copy, clock=clock)
    boss = session_for(services, "ana", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin").ok
    assert boss.send("presenters add @ana @ben @cy").ok
    _fill_queue(boss, ["graph biconnectivity", "neural tangent kernel backdoor", "denoising diffusion implicit",
                       "lottery ticket mask", "image to sphere pose", "quantum annealing couplings"])
    skipped = date(2026, 12, 29)
    assert boss.send("session skip 2026-12-29").ok
    assert not boss.send("session skip 2026-12-30").ok  # a Wednesday: refused
    sent: list[tuple[datetime, str]] = []
    deliver = lambda channel, reply: sent.append((clock.now, reply.text)) or "ref"  # noqa: E731
    for step in range(6 * 7 * 24 * 2):  # a tick every half hour: each reminder's window has several
        clock.now = START + timedelta(minutes=30 * step)
        if clock.now == datetime(2026, 12, 14, 12, 0, tzinfo=UTC):
            assert session_for(services, "ana").send("volunteer").ok  # week 3: ana volunteers again
        services.core.tick(clock.now, deliver, ["console"])

    meeting_days = [date(2026, 12, 1) + timedelta(weeks=n) for n in range(6)]
    held = [d for d in meeting_days if d != skipped]
    for day in meeting_days:
        label = f"{day:%A %d %B}"
        tomorrow = [t for _, t in sent if t.startswith("Tomorrow") and label in t]
        hour = [t for _, t in sent if t.startswith("In one hour") and label in t]
        expected = 0 if day == skipped else 1
        assert (len(tomorrow), len(hour)) == (expected, expected), day
    assert len(sent) == 2 * len(held)
    presenters = [re.search(r"presented by @(\w+)", t).group(1) for _, t in sent if t.startswith("Tomorrow")]
    assert len(presenters) == 5
    assert presenters[2] == "ana"  # the volunteer week, though ana's turn was not due
    assert presenters == ["ana", "ben", "ana", "cy", "ben"]
    assert all(a != b for a, b in pairwise(presenters))  # never twice in a row
    # Volunteers aside, nobody presents twice before every member presented once.
    rota = presenters[:2] + presenters[3:]
    for i, who in enumerate(rota):
        if who in rota[:i]:
            assert set(rota[:i]) == {"ana", "ben", "cy"}, rota
    history = boss.send("sessions 10").text
    assert history.count("presented by @") == 5 and "2026-12-29" not in history


def test_notes_stay_in_their_channel_and_survive_a_restart(seeded_copy):
    services = build_services(seeded_copy)
    ana = session_for(services, "ana")
    ana.send("notes 12 first thought")
    session_for(services, "ben").send("notes 12 second thought")
    session_for(services, "eve", channel="elsewhere").send("notes 12 other channel")
    services.db.dispose()
    restarted = build_services(seeded_copy)  # a new process, the same database
    card = session_for(restarted, "ana").send("show 12").cards[0]
    assert [line.split(": ", 1)[1] for line in card.discussion] == ["first thought", "second thought"]
    assert card.discussion[0].startswith("@ana, ")
    other = session_for(restarted, "eve", channel="elsewhere").send("show 12").cards[0]
    assert [line.split(": ", 1)[1] for line in other.discussion] == ["other channel"]


def test_swap_hands_over_and_queue_done_keeps_the_presenter(seeded_copy):
    clock = Clock(START)
    services = build_services(seeded_copy, clock=clock)
    boss = session_for(services, "ana", manager=True)
    boss.send("session every tue 17:00 UTC")
    boss.send("presenters add @ben")
    _fill_queue(boss, ["graph biconnectivity"])
    clock.now = datetime(2026, 11, 30, 17, 0, tzinfo=UTC)
    services.core.tick(clock.now, lambda c, r: "ref", ["console"])
    assert "presented by @ben" in boss.send("session").text
    assert not session_for(services, "cy").send("swap @cy").ok  # only the presenter (or a manager)
    assert "@dan now presents" in session_for(services, "ben").send("swap @dan").text
    clock.now = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
    paper = re.search(r"\[(\d+)\]", boss.send("queue").text).group(1)
    assert "presented by @dan" in boss.send(f"queue done {paper}").text


def test_member_mentions():
    assert member_id("@ana") == "ana"
    assert member_id("<@U123ABC>") == "U123ABC"
    assert member_id("<@!4242>") == "4242"
    assert member_id("<@U1|ana>") == "U1"
    assert member_id("not a member!") is None


def _state(services) -> tuple:
    with services.db.session() as s:
        return (
            tuple(s.execute(select(MeetingPlan.weekday, MeetingPlan.local_time, MeetingPlan.timezone,
                                   MeetingPlan.enabled)).all()),
            tuple(s.execute(select(Presenter.user_id, Presenter.active, Presenter.volunteered_at)
                            .order_by(Presenter.id)).all()),
            s.scalar(select(func.count(MeetingSkip.id))),
            s.scalar(select(func.count(PaperNote.id))),
        )


WORDS = st.sampled_from(["session", "every", "off", "skip", "presenters", "add", "remove", "volunteer", "swap",
                         "notes", "sessions", "tue", "fryday", "mon,wed", "17:00", "25:00", "Europe/Berlin",
                         "Mars/Olympus", "2026-12-01", "2026-12-02", "2026-13-01", "@ana", "<@U1>", "@", "!!",
                         "12", "999999", "0", "51", "x"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.one_of(st.lists(WORDS, min_size=1, max_size=5).map(" ".join),
                      st.text(max_size=30).map(lambda t: "session " + t),
                      st.text(max_size=30).map(lambda t: "presenters " + t)),
       is_manager=st.booleans())
def test_fuzzed_session_and_presenter_commands(seeded_copy, line, is_manager):
    services = build_services(seeded_copy, clock=Clock(START))
    boss = session_for(services, "ana", manager=True)
    if services.meetings.plan(services.channels.get(boss.channel).id) is None:
        boss.send("session every tue 17:00 UTC")
        boss.send("presenters add @ana @ben")
    before = _state(services)
    reply = session_for(services, "f", is_manager).send(line)  # never raises
    if not reply.ok:
        assert _state(services) == before, line
    services.db.dispose()


def test_a_failed_reminder_is_sent_again_by_a_later_tick(seeded_copy):
    clock = Clock(START)
    services = build_services(seeded_copy, clock=clock)
    boss = session_for(services, "ana", manager=True)
    boss.send("session every tue 17:00 UTC")
    sent, failures = [], [1]

    def deliver(channel, reply):
        if failures:
            failures.pop()
            raise ConnectionError("platform down")
        sent.append(reply.text)
        return "ref"

    for minute in (0, 15, 30):
        services.core.tick(datetime(2026, 11, 30, 17, minute, tzinfo=UTC), deliver, ["console"])
    assert len(sent) == 1 and sent[0].startswith("Tomorrow")
    assert "queue is empty" in sent[0] and "poll" in sent[0]


def test_skipping_the_next_meeting_is_confirmed_and_the_one_after_is_shown(seeded_copy):
    clock = Clock(datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc))  # a Monday
    services = build_services(seeded_copy, clock=clock)
    boss = session_for(services, "ann", manager=True)
    boss.send("session every thu 17:00 Europe/Berlin")
    skipped = boss.send("session skip 2026-11-26")
    assert skipped.ok and skipped.text.startswith("Skipped the meeting on Thursday 26 November 2026.")
    assert "Next: Thursday 03 December 17:00" in skipped.text
    # A holiday break of several weeks: the next meeting is still found.
    for day in ("2026-12-03", "2026-12-10", "2026-12-17"):
        boss.send(f"session skip {day}")
    assert "Next: Thursday 24 December 17:00" in boss.send("session").text
    assert boss.send("session skip 2026-12-10").text.startswith("Already skipped: the meeting on Thursday 10")
    refused = boss.send("session skip 2026-11-19")
    assert not refused.ok and "already begun or passed" in refused.text


def test_settings_shows_the_channel_in_one_reply(seeded_copy):
    services = build_services(seeded_copy, clock=Clock(datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)))
    boss, bob = session_for(services, "ann", manager=True), session_for(services, "bob")
    for line in ("schedule 09:00 europe/berlin weekdays", "topics add graphs", "use trending",
                 "session every thu 17:00 Europe/Berlin", "session skip 2026-12-03", "presenters add @ana",
                 "poll 2 1w"):
        assert boss.send(line).ok, line
    bob.send("vote 2")
    shown = bob.send("settings")
    assert shown.ok and shown.ephemeral
    for part in ("09:00 Europe/Berlin, weekdays", "Topics: graphs", "Collections: trending",
                 "every Thu at 17:00 Europe/Berlin", "Skipped: Thu 03 Dec", "Presenters: @ana",
                 "2. [", "1 vote", "Vote with `vote OPTION`"):
        assert part in shown.text, (part, shown.text)


def test_changing_one_part_of_the_meeting_keeps_the_others(seeded_copy):
    """Issue 28, finding 7, for `session`: a day, a time or a zone alone changes only that."""
    services = build_services(seeded_copy, clock=Clock(START))
    boss = session_for(services, "ann", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin").ok
    steps = [
        ("session every wed", "every Wed at 17:00 Europe/Berlin"),
        ("session 18:30", "every Wed at 18:30 Europe/Berlin"),
        ("session every europe/paris", "every Wed at 18:30 Europe/Paris"),
        ("session off", None),
        ("session thursday 9:00", "every Thu at 09:00 Europe/Paris"),  # setting a part switches it on
    ]
    for command, whole in steps:
        reply = boss.send(command)
        assert reply.ok, (command, reply.text)
        if whole:
            assert reply.text.startswith(f"Done. The group meets {whole} for 1 hour. Next: "), (command, reply.text)
    assert services.meetings.plan(services.channels.get(boss.channel).id).enabled


def test_a_meeting_part_without_a_meeting_asks_for_day_and_time(seeded_copy):
    services = build_services(seeded_copy, clock=Clock(START))
    boss = session_for(services, "ann", manager=True)
    for command in ("session every wed", "session 18:00", "session Europe/Berlin", "session every tue wed 17:00",
                    "session every 17:00 18:00", "session every mon,wed 17:00"):
        reply = boss.send(command)
        assert not reply.ok and "Usage:" in reply.text, (command, reply.text)
    assert "no meeting yet" in boss.send("session every wed").text
    assert services.meetings.plan(services.channels.get(boss.channel).id) is None


def test_a_volunteer_is_the_next_presenter_at_once_and_can_swap(seeded_copy):
    """Issue 28, finding 10: `volunteer` said "you present at the next meeting", then the
    same member's `swap @alice` said "No presenter is assigned yet"."""
    clock = Clock(START)  # Monday; the meeting is on Wednesday, no reminder has run yet
    services = build_services(seeded_copy, clock=clock)
    boss, ben = session_for(services, "ana", manager=True), session_for(services, "ben")
    assert boss.send("session every wed 17:00 UTC").ok
    assert ben.send("volunteer").text == "Thanks @ben: you present at the next meeting, Wednesday 02 December."
    assert "@ben: presented 0 times (presents Wednesday 02 December)" in boss.send("presenters").text
    assert ben.send("swap @alice").text == "@alice now presents on Wednesday 02 December."
    # A second volunteer takes the meeting after, and says which.
    assert session_for(services, "cy").send("volunteer").text == (
        "Thanks @cy: @alice presents on Wednesday 02 December, so you present at the one after, "
        "Wednesday 09 December.")
    _fill_queue(boss, ["graph biconnectivity"])
    sent: list[str] = []
    clock.now = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)
    services.core.tick(clock.now, lambda channel, reply: sent.append(reply.text) or "ref", ["console"])
    assert len(sent) == 1 and "presented by @alice" in sent[0]

"""Channel settings commands: managers only, usage on bad input, nothing changed on refusal."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.console import ConsoleSession
from bot.app import build_services


def test_members_cannot_change_settings_and_nothing_changes(seeded_copy):
    services = build_services(seeded_copy)
    member = ConsoleSession(services.core, channel="c", user="bob", manager=False)
    before = services.channels.get(member.channel)
    for command, what in [
        ("schedule 09:00 Europe/Berlin weekdays", "change the schedule"),
        ("topics add diffusion", "change the topics"),
        ("use trending", "choose the collections"),
        ("next", "post an extra pick"),
    ]:
        reply = member.send(command)
        assert not reply.ok and reply.text == f"Only channel managers can {what}."
    assert services.channels.get(member.channel) == before
    # Reading is for everyone.
    assert member.send("schedule").ok and member.send("topics").ok and member.send("today").ok


def test_manager_settings_round_trip(seeded_copy):
    services = build_services(seeded_copy)
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    assert "09:00 Europe/Berlin, weekdays; schedule on" in boss.send("schedule 09:00 Europe/Berlin weekdays").text
    assert "Paused until 2026-12-31" in boss.send("schedule pause until 2026-12-31").text
    assert "Paused" not in boss.send("schedule resume").text
    assert "schedule off" in boss.send("schedule off").text
    assert "schedule on" in boss.send("schedule on").text
    assert boss.send("topics add reinforcement learning, world models").text == (
        "Topics: reinforcement learning; world models"
    )
    assert boss.send("topics remove World Models").text == "Topics: reinforcement learning"
    assert not boss.send("topics remove nonsense").ok
    assert "none" in boss.send("topics clear").text
    assert "picks from trending" in boss.send("use trending").text
    assert "* trending" in boss.send("collections").text
    assert "all collections" in boss.send("use all").text


def test_bad_input_prints_usage_with_an_example(seeded_copy):
    services = build_services(seeded_copy)
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    for command in ["schedule 25:00", "schedule 09:00 Mars/Olympus", "schedule 09:00 UTC fryday",
                    "schedule pause until someday", "topics frobnicate", "history -3", "use nosuch"]:
        reply = boss.send(command)
        assert not reply.ok and "Usage:" in reply.text and "Example:" in reply.text, command
    assert services.channels.get(boss.channel).schedule is None


WORDS = st.sampled_from([
    "schedule", "topics", "use", "history", "today", "next", "collections", "add", "remove", "clear",
    "pause", "until", "resume", "on", "off", "all", "09:00", "25:00", "23:59", "Europe/Berlin",
    "Mars/Olympus", "UTC", "weekdays", "daily", "mon,wed,fri", "fryday", "2026-12-31", "2026-13-45",
    "trending", "iclr2021", ",", "", "0", "51", "5",
])
LINES = st.one_of(
    st.lists(WORDS, min_size=1, max_size=6).map(" ".join),
    st.text(max_size=40).map(lambda t: "schedule " + t),
    st.text(max_size=40).map(lambda t: "topics " + t),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=LINES, is_manager=st.booleans())
def test_fuzzed_settings_commands_never_raise_and_refusals_change_nothing(seeded_copy, line, is_manager):
    services = build_services(seeded_copy)
    session = ConsoleSession(services.core, channel="fuzz", user="f", manager=is_manager)
    before = services.channels.get(session.channel)
    reply = session.send(line)  # must not raise
    after = services.channels.get(session.channel)
    if not reply.ok:
        assert after == before, line
    if not is_manager and not line.startswith(("next",)):
        assert after == before, line
    services.db.dispose()


def test_changing_one_part_of_the_schedule_keeps_the_others(seeded_copy):
    """Issue 28, finding 7: `schedule 9:00` used to answer "09:00 UTC, daily"."""
    services = build_services(seeded_copy)
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    assert boss.send("schedule 09:00 Europe/Berlin weekdays").ok
    steps = [
        ("schedule 9:30", "09:30 Europe/Berlin, weekdays"),
        ("schedule weekends", "09:30 Europe/Berlin, weekends"),
        ("schedule europe/paris", "09:30 Europe/Paris, weekends"),
        ("schedule mon,wed 7:15", "07:15 Europe/Paris, mon,wed"),
        ("schedule UTC daily 18:00", "18:00 UTC, daily"),
    ]
    for command, whole in steps:
        assert boss.send(command).text == f"Done. Paper of the day at {whole}; schedule on.", command
        assert boss.send("schedule").text == f"Paper of the day at {whole}; schedule on.", command


def test_a_part_without_a_schedule_asks_for_a_time_and_changes_nothing(seeded_copy):
    services = build_services(seeded_copy)
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    for command in ("schedule weekends", "schedule Europe/Berlin", "schedule 09:00 10:00",
                    "schedule weekdays weekends"):
        reply = boss.send(command)
        assert not reply.ok and "Usage:" in reply.text, command
    assert "there is no schedule yet" in boss.send("schedule weekends").text
    assert services.channels.get(boss.channel).schedule is None


class _Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


NOON = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)  # a Monday


def test_today_right_after_next_shows_the_paper_next_posted(seeded_copy):
    """Issue 28, finding 10: `today` right after `next` said "No paper yet today"."""
    services = build_services(seeded_copy, clock=_Clock(NOON))
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    for schedule in (None, "schedule 09:00 Europe/Berlin weekdays"):  # with no schedule, and before 09:00 ...
        if schedule:
            assert boss.send(schedule).ok
        posted = boss.send("next")
        today = boss.send("today")
        assert "No paper yet" not in today.text, today.text
        assert today.cards[0].paper_id == posted.cards[0].paper_id
    assert [c.paper_id for c in today.cards[1:]] != []  # both of today's picks, newest first


def test_a_paused_schedule_says_paused_and_how_to_resume_not_a_countdown(seeded_copy):
    """Issue 28, finding 10: a paused schedule said "in 686h 30m"."""
    services = build_services(seeded_copy, clock=_Clock(NOON))
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    assert boss.send("schedule 09:00 Europe/Berlin weekdays").ok
    assert "(in 20h 00m)" in boss.send("today").text  # not paused: the countdown is useful
    assert boss.send("schedule pause until 2026-12-28").ok
    text = boss.send("today").text
    assert text == ("No paper today: the schedule is paused until 2026-12-28; the next is due Tuesday 29 December "
                    "09:00 Europe/Berlin. `schedule resume` ends the pause now.")


def test_discuss_is_headed_for_discussion_not_next_paper(seeded_copy):
    """Issue 28, finding 10: `discuss 612` was headed "Next paper:"."""
    services = build_services(seeded_copy, clock=_Clock(NOON))
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    title = services.library.get_many([612])[612].title
    posted = boss.send("discuss 612")
    assert posted.text == "For discussion" and posted.cards[0].title == title  # the title once, on the card
    _ref, again = services.posts.rerender(posted.post_id, "👍 1")  # as a vote redraws it
    assert again.text == "For discussion\n👍 1"
    assert boss.send("next").text == "Next paper"


def test_counts_of_one_are_singular():
    """Issue 28, finding 10: "1 posts", "1 papers"."""
    from bot.messages import counted

    assert [counted(n, "paper") for n in (0, 1, 2, 1094)] == ["0 papers", "1 paper", "2 papers", "1,094 papers"]
    assert counted(1, "entry", "entries") == "1 entry" and counted(3, "entry", "entries") == "3 entries"


def test_stats_collections_and_search_say_one_paper_post_vote(seeded_copy):
    services = build_services(seeded_copy, clock=_Clock(NOON))
    boss = ConsoleSession(services.core, channel="c", user="ann", manager=True)
    posted = boss.send("next")
    assert boss.send(f"vote {posted.cards[0].paper_id} up").ok
    stats = boss.send("stats 1").text
    assert stats.startswith("Last 1 day: 1 post, 1 vote from 1 member.") and "Reading queue: 0 papers." in stats
    assert "Most wanted in the last 1 day:" in boss.send("top 1").text
    assert "topic-abstracts: 17 papers" in boss.send("collections").text
    assert boss.send('search denoising author:"Jiaming Song" author:Meng author:Ermon').text.startswith(
        "Top 1 of 2 papers for ")  # the two the filters leave, one matching


def test_an_empty_library_says_how_to_fill_it_instead_of_try_fewer_words(database_url, db):
    """Before any paper: `search` and `next` say the library is empty and how to add papers,
    not "try fewer words" or "everything was posted"."""
    from adapters.console import ConsoleSession
    from bot.app import build_services
    from bot.services.replies import EMPTY_LIBRARY

    services = build_services(database_url)
    session = ConsoleSession(services.core, channel="empty", user="alice", manager=True)
    assert session.send("search diffusion robustness").text == EMPTY_LIBRARY
    assert session.send("next").text == EMPTY_LIBRARY
    services.db.dispose()

"""Reactions that vote (bot/reactions/commands.py): emoji in every platform's spelling, the
`reactions` command, and `PaperClub.react` on SQLite and PostgreSQL; and the debounced
redraw shared by the adapters (adapters/debounce.py)."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import pytest
from sqlalchemy import select

from adapters.console import ConsoleSession
from adapters.debounce import Debouncer
from bot.app import build_services
from bot.messages import Reaction, UserRef
from bot.reactions.commands import emoji_key, reaction_key, split_emoji
from bot.services.models import PostVote
from store.models import Channel

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)
BOTH = pytest.mark.parametrize(
    "seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)


@pytest.mark.parametrize("spelling, key", [
    ("👍", "👍"), ("👍🏽", "👍"), ("👍\ufe0f", "👍"), (":+1:", "👍"), (":thumbsup:", "👍"),
    (":+1::skin-tone-3:", "👍"), (":-1:", "👎"), (":white_check_mark:", "✅"), ("✔️", "✔"), ("✔", "✔"),
    ("<:partyparrot:1100000000000000999>", ":partyparrot:"), ("<a:PartyParrot:12>", ":partyparrot:"),
    (":partyparrot:", ":partyparrot:"), (":up:", "🆙"),
])
def test_every_spelling_of_an_emoji_has_one_key(spelling, key):
    assert emoji_key(spelling) == key


@pytest.mark.parametrize("word", ["up", "x", "@alice", "<@U123>", "", "read", "👍x", ":a b:"])
def test_words_are_not_emoji(word):
    assert emoji_key(word) is None


@pytest.mark.parametrize("name, key", [
    ("+1", "👍"), ("thumbsup", "👍"), ("+1::skin-tone-2", "👍"), ("-1", "👎"), ("white_check_mark", "✅"),
    ("partyparrot", ":partyparrot:"), ("👍🏿", "👍"), ("<:partyparrot:5>", ":partyparrot:"),
])
def test_reaction_events_name_emoji_as_slack_and_discord_do(name, key):
    assert reaction_key(name) == key


def test_emoji_typed_without_spaces_are_split():
    assert split_emoji("👍👎✅") == ["👍", "👎", "✅"]
    assert split_emoji("🔥 🙈 📖") == ["🔥", "🙈", "📖"]


def posted(services, channel: str = "reading") -> tuple[ConsoleSession, int, str]:
    """A `next` post in a console channel with a message reference, as an adapter keeps it."""
    boss = ConsoleSession(services.core, channel=channel, user="boss", manager=True)
    post = boss.send("next")
    assert post.post_id is not None, post.text
    services.core.remember_message(post, f"ts-{post.post_id}")
    return boss, post.post_id, f"ts-{post.post_id}"


def react(services, boss: ConsoleSession, ref: str, user: str, emoji: str, added: bool = True,
          order: int | None = None) -> int | None:
    return services.core.react(Reaction(boss.channel, UserRef("console", user), ref, emoji, added, order))


def votes(services, post_id: int) -> set[tuple[str, str]]:
    with services.db.session() as session:
        return set(session.execute(select(PostVote.user_id, PostVote.value).where(PostVote.post_id == post_id)))


@BOTH
def test_reactions_vote_like_the_buttons_and_removing_one_withdraws_only_its_own_vote(seeded_db_url):
    services = build_services(seeded_db_url, clock=lambda: NOW)
    boss, post_id, ref = posted(services)
    assert react(services, boss, ref, "bob", "+1") == post_id  # Slack's name
    assert react(services, boss, ref, "cy", "👍🏽") == post_id  # Discord's Unicode, a skin tone
    assert react(services, boss, ref, "bob", "✅") == post_id  # read is a vote of its own
    assert votes(services, post_id) == {("bob", "up"), ("cy", "up"), ("bob", "read")}
    assert react(services, boss, ref, "bob", "thumbsup") is None  # the same vote again: nothing changed
    assert services.core.render_post(post_id)[1].text.splitlines()[-1].endswith("👍 2 · 👎 0 · read 1")
    # 👎 replaces bob's 👍; taking the 👍 off afterwards leaves his 👎.
    assert react(services, boss, ref, "bob", "-1") == post_id
    assert react(services, boss, ref, "bob", "+1", added=False) is None
    assert votes(services, post_id) == {("bob", "down"), ("cy", "up"), ("bob", "read")}
    assert react(services, boss, ref, "bob", "-1", added=False) == post_id
    assert react(services, boss, ref, "cy", "👍", added=False) == post_id
    assert votes(services, post_id) == {("bob", "read")}
    services.db.dispose()


@BOTH
def test_a_reaction_taken_off_before_its_adding_is_handled_leaves_no_vote(seeded_db_url):
    """Twenty quick add/remove pairs whose remove is handled first: no vote stays, and the
    late add changes nothing (no redraw). In the order they happened, they count as ever."""
    services = build_services(seeded_db_url, clock=lambda: NOW)
    boss, post_id, ref = posted(services)
    start = 1_764_000_000_000_000  # microseconds since the epoch, as adapters give them
    for n in range(20):
        assert react(services, boss, ref, f"late{n}", "+1", added=False, order=start + 2 * n + 1) is None
        assert react(services, boss, ref, f"late{n}", "+1", order=start + 2 * n) is None
    assert votes(services, post_id) == set()
    for n in range(20):
        assert react(services, boss, ref, f"inorder{n}", "+1", order=start + 2 * n) == post_id
        assert react(services, boss, ref, f"inorder{n}", "+1", added=False, order=start + 2 * n + 1) == post_id
    assert votes(services, post_id) == set()
    assert react(services, boss, ref, "kept", "+1", order=start) == post_id
    assert react(services, boss, ref, "kept", "+1", added=False, order=start) is None  # not newer: ignored
    assert votes(services, post_id) == {("kept", "up")}
    services.db.dispose()


@BOTH
def test_the_emoji_put_on_last_is_the_vote_whatever_the_order_of_handling(seeded_db_url):
    services = build_services(seeded_db_url, clock=lambda: NOW)
    boss, post_id, ref = posted(services)
    # bob put 👍 on, then 👎: handled the other way round, 👎 still wins.
    assert react(services, boss, ref, "bob", "-1", order=20) == post_id
    assert react(services, boss, ref, "bob", "+1", order=10) is None
    assert votes(services, post_id) == {("bob", "down")}
    # He takes 👎 off: his 👍 is still on, so that is his vote.
    assert react(services, boss, ref, "bob", "-1", added=False, order=30) == post_id
    assert votes(services, post_id) == {("bob", "up")}
    # A retried event (the same order) changes nothing.
    assert react(services, boss, ref, "bob", "-1", order=20) is None
    assert votes(services, post_id) == {("bob", "up")}
    services.db.dispose()


@BOTH
def test_reaction_events_handled_at_once_on_many_threads_end_as_the_reactions_do(seeded_db_url):
    """Ninety reactions at once, and thirty members' add, remove, add of 👍 (the
    third for even members only) handled in a shuffled order on 16 threads: every vote is
    counted once, and only the members whose last event was an add keep one."""
    services = build_services(seeded_db_url, clock=lambda: NOW)
    boss, post_id, ref = posted(services)
    events = [(f"crowd{n}", "+1", True, 1) for n in range(90)]
    for n in range(30):
        events += [(f"m{n}", "+1", True, 1), (f"m{n}", "+1", False, 2)]
        if n % 2 == 0:
            events.append((f"m{n}", "+1", True, 3))
    random.Random(28).shuffle(events)
    start = threading.Barrier(16)

    def handle(chunk: list) -> None:
        start.wait()
        for user, emoji, added, order in chunk:
            react(services, boss, ref, user, emoji, added, order)

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(handle, [events[i::16] for i in range(16)]))
    assert services.votes.tallies([post_id])[post_id].up == 90 + 15
    assert {u for u, _ in votes(services, post_id) if u.startswith("m")} == {f"m{n}" for n in range(0, 30, 2)}
    services.db.dispose()


@BOTH
def test_reactions_elsewhere_change_nothing(seeded_db_url):
    services = build_services(seeded_db_url, clock=lambda: NOW)
    boss, post_id, ref = posted(services)
    other = ConsoleSession(services.core, channel="other", user="boss", manager=True)
    assert react(services, boss, "ts-not-a-post", "bob", "👍") is None  # any other message
    assert react(services, other, ref, "bob", "👍") is None  # the same ts in another channel
    assert react(services, boss, ref, "bob", "🎉") is None  # not one of the channel's emoji
    assert react(services, boss, ref, "bob", "not an emoji at all") is None
    assert votes(services, post_id) == set()
    services.db.dispose()


@BOTH
def test_a_channel_chooses_its_own_three_emoji(seeded_db_url):
    services = build_services(seeded_db_url, clock=lambda: NOW)
    boss, post_id, ref = posted(services)
    member = ConsoleSession(services.core, channel="reading", user="bob")
    assert member.send("reactions").text == "Reactions: 👍 want to discuss · 👎 not for us · ✅ read (the default)"
    refused = member.send("reactions 🔥 🙈 📖")
    assert not refused.ok and refused.text.startswith("Only channel managers")
    chosen = boss.send("reactions :fire: 🙈 <:paper:1100000000000000999>")  # Slack, Unicode, Discord custom
    assert chosen.ok and chosen.text == "Reactions: 🔥 want to discuss · 🙈 not for us · :paper: read"
    assert "Reactions: 🔥 want to discuss" in boss.send("settings").text
    assert react(services, boss, ref, "bob", "👍") is None  # no longer one of the channel's
    assert react(services, boss, ref, "bob", "fire") == post_id  # Slack names it
    assert react(services, boss, ref, "cy", "paper") == post_id  # a custom emoji, by name
    assert votes(services, post_id) == {("bob", "up"), ("cy", "read")}
    assert boss.send("reactions reset").text.endswith("(the default)")
    with services.db.session() as session:
        assert session.scalar(select(Channel.reactions).where(Channel.channel == "reading")) is None
    services.db.dispose()


@pytest.mark.parametrize("args, problem", [
    ("👍 👎", "Give three emoji"), ("👍 👎 ✅ 🎉", "Give three emoji"), ("👍 👍🏽 ✅", "must differ"),
    ("up down read", "is not an emoji"), ("👍 👎 @alice", "is not an emoji"),
])
def test_wrong_emoji_are_refused_and_change_nothing(seeded_copy, args, problem):
    services = build_services(seeded_copy, clock=lambda: NOW)
    boss = ConsoleSession(services.core, channel="reading", user="boss", manager=True)
    reply = boss.send(f"reactions {args}")
    assert not reply.ok and problem in reply.text and "Usage: reactions" in reply.text
    assert services.channels.get(boss.channel).reactions is None
    services.db.dispose()


# --- the debounced redraw ---------------------------------------------------------------------------


class HeldTimer:
    """A timer that fires only when the test says so."""

    def __init__(self, delay, callback):
        self.delay, self.callback, self.cancelled = delay, callback, False
        STARTED.append(self)

    def cancel(self):
        self.cancelled = True


STARTED: list[HeldTimer] = []


def test_a_burst_of_touches_is_one_run_with_the_latest_action():
    STARTED.clear()
    runs: list[str] = []
    redraws = Debouncer(2.0, HeldTimer)
    for n in range(5):
        redraws.touch(7, lambda n=n: runs.append(f"post 7 after {n}"))
    redraws.touch(8, lambda: runs.append("post 8"))
    assert [t.delay for t in STARTED] == [2.0, 2.0] and runs == []  # one timer per post
    STARTED[0].callback()
    assert runs == ["post 7 after 4"] and redraws.pending() == [8]
    redraws.touch(7, lambda: runs.append("post 7 again"))  # after the run: a new burst
    assert len(STARTED) == 3
    redraws.flush()
    assert runs == ["post 7 after 4", "post 8", "post 7 again"] and redraws.pending() == []
    assert STARTED[1].cancelled and STARTED[2].cancelled
    STARTED[1].callback()  # a timer that fires after its flush runs nothing twice
    assert len(runs) == 3


def test_a_failing_redraw_does_not_stop_the_next():
    runs: list[str] = []
    redraws = Debouncer(0.0, HeldTimer)

    def broken():
        raise RuntimeError("message deleted")

    redraws.touch(1, broken)
    redraws.touch(2, lambda: runs.append("2"))
    redraws.flush()
    assert runs == ["2"]


def test_the_default_timer_fires_by_itself():
    import threading

    done = threading.Event()
    Debouncer(0.01).touch(1, done.set)
    assert done.wait(5.0)

"""Votes on posts, reading polls, the reading queue, and picks that learn from votes."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.messages import ChannelRef, Incoming, UserRef
from bot.services.models import Nomination, Poll, PollVote, PostVote, QueueItem
from store.models import PaperExternalId
from tests.clock import Clock

UTC = timezone.utc
NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def member(services, channel: str, user: str, manager: bool = False) -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user=user, manager=manager)


def test_post_votes_are_one_per_member_and_kind_and_per_channel(seeded_copy):
    services = build_services(seeded_copy)
    boss_a, boss_b = member(services, "a", "ann", True), member(services, "b", "ann", True)
    post = boss_a.send("next")
    paper = post.cards[0].paper_id  # the one number members see and type
    assert [a.value for a in post.actions] == [f"vote {post.post_id} up", f"vote {post.post_id} down",
                                               f"vote {post.post_id} read"]
    bob = member(services, "a", "bob")
    assert bob.send(f"vote {paper} up").text.endswith("👍 1 · 👎 0 · read 0")
    assert bob.send(f"vote {paper} up").text.endswith("👍 1 · 👎 0 · read 0")  # delivered twice: once
    assert bob.send(f"vote {paper} down").text.endswith("👍 0 · 👎 1 · read 0")  # up and down exclude
    assert bob.send(f"vote {paper} read").text == f"Marked as read. Paper {paper}: 👍 0 · 👎 1 · read 1"
    assert member(services, "a", "cy").send(f"vote {paper} up").text.endswith("👍 1 · 👎 1 · read 1")
    assert bob.send(f"vote {paper} none").text.endswith("👍 1 · 👎 0 · read 0")  # withdrawn
    # A click sends the button's value, which names the post: the same tally.
    click = Incoming(ChannelRef("console", "local", "a"), UserRef("console", "dan"), post.actions[0].value)
    assert services.core.click(click).text.endswith("👍 2 · 👎 0 · read 0")
    # The same paper posted in another channel keeps its own tally; votes don't cross channels.
    services.core.channels.update(boss_b.channel, lambda row: None)
    _post_paper_in(services, "b", paper)
    assert member(services, "b", "bob").send(f"vote {paper} up").text.endswith("👍 1 · 👎 0 · read 0")
    refused = member(services, "c", "bob").send(f"vote {paper} up")
    assert not refused.ok and f"Paper {paper} has not been posted in this channel" in refused.text
    # A post's own number in a button from another channel is refused there.
    stray = Incoming(ChannelRef("console", "local", "c"), UserRef("console", "dan"), post.actions[0].value)
    assert not services.core.click(stray).ok


def _post_paper_in(services, channel: str, paper_id: int) -> int:
    """Post a given paper in a console channel (as the tick would) and return the post id."""
    from bot.services.models import Post

    settings_ = services.channels.get(member(services, channel, "x").channel)
    with services.db.session() as session:
        post = Post(channel_id=settings_.id, paper_id=paper_id, kind="daily", state="sent", reason="", matched=[])
        session.add(post)
        session.flush()
        return post.id


def test_poll_from_nominations_then_picks_with_votes_tie_break_and_queue(seeded_copy):
    clock = Clock(NOW)
    services = build_services(seeded_copy, clock=clock)
    boss, bob, cy = member(services, "p", "ann", True), member(services, "p", "bob"), member(services, "p", "cy")
    first = bob.send("nominate graph biconnectivity")
    assert "Nominated “Rethinking the Expressive Power of GNNs via Graph Biconnectivity”" in first.text
    assert "best match" in first.text
    clock.now += timedelta(minutes=1)
    second = cy.send("nominate few-shot backdoor attacks neural tangent kernels")
    assert "Few-shot Backdoor Attacks" in second.text
    assert "already nominated" in bob.send("nominate graph biconnectivity").text
    assert not bob.send("poll 3").ok  # members cannot start polls
    poll = boss.send("poll 4 48h")
    assert poll.ok and poll.poll_id and len(poll.cards) == 4 and len(poll.actions) == 4
    assert [c.option for c in poll.cards[:2]] == ["Option 1", "Option 2"]
    assert [c.reason for c in poll.cards[:2]] == ["Nominated by a member.", "Nominated by a member."]
    assert poll.cards[0].title.startswith("Rethinking the Expressive Power")
    pid = poll.poll_id
    assert bob.send(f"vote {pid} 2").ok
    assert cy.send(f"vote {pid} 1").ok
    assert bob.send(f"vote {pid} 1").ok and bob.send(f"vote {pid} 2").ok  # changeable: back to 2
    dan = member(services, "p", "dan")
    assert dan.send(f"vote {pid} 1").ok
    assert not dan.send(f"vote {pid} 7").ok  # no such option
    assert not dan.send("vote 9999 1").ok  # no such poll
    assert not boss.send("poll 3").ok  # one open poll at a time
    result = boss.send("poll close")
    assert "1. Rethinking the Expressive Power of GNNs via Graph Biconnectivity: 2 votes" in result.text
    assert "Winner: “Rethinking the Expressive Power" in result.text
    refused = member(services, "p", "eve").send(f"vote {pid} 3")
    assert not refused.ok and "closed" in refused.text
    assert "Rethinking the Expressive Power" in bob.send("queue").text
    # A tie goes to the earliest nomination.
    bob.send("nominate diffusion probabilistic fields")
    clock.now += timedelta(minutes=1)
    cy.send("nominate denoising diffusion implicit models")
    tie = boss.send("poll 2 1h")
    bob.send(f"vote {tie.poll_id} 2")
    cy.send(f"vote {tie.poll_id} 1")
    assert "Winner: “Diffusion Probabilistic Fields”" in boss.send("poll close").text
    queued = bob.send("queue").text
    assert "Diffusion Probabilistic Fields" in queued
    paper_id = int(re.search(r"\[(\d+)\] Diffusion Probabilistic Fields", queued).group(1))
    assert not bob.send(f"queue remove {paper_id}").ok  # managers only
    refused = bob.send(f"queue done {paper_id}")  # managers, or the meeting's presenter
    assert not refused.ok and "presenter" in refused.text
    assert "Diffusion Probabilistic Fields" in bob.send("queue").text
    assert boss.send(f"queue done {paper_id}").ok
    assert "Diffusion Probabilistic Fields" not in bob.send("queue").text


def test_the_tick_closes_a_poll_at_its_deadline_and_posts_the_result_in_its_thread(seeded_copy):
    clock = Clock(NOW)
    services = build_services(seeded_copy, clock=clock)
    boss = member(services, "d", "ann", True)
    poll = boss.send("poll 3 2h")
    services.polls.set_message(poll.poll_id, "console:d:7")
    member(services, "d", "bob").send(f"vote {poll.poll_id} 3")
    delivered = []
    deliver = lambda channel, reply: delivered.append((channel, reply)) or "ref"  # noqa: E731
    assert services.core.tick(NOW + timedelta(hours=1), deliver, ["console"])["polls_closed"] == 0
    report = services.core.tick(NOW + timedelta(hours=2), deliver, ["console"])
    assert report["polls_closed"] == 1
    (channel, reply), = delivered
    assert channel.channel == "d" and reply.in_thread and reply.reply_to == "console:d:7"
    assert "3. " in reply.text and ": 1 vote" in reply.text
    assert services.core.tick(NOW + timedelta(hours=3), deliver, ["console"])["polls_closed"] == 0
    assert len(delivered) == 1


def _about_rl(paper) -> bool:
    text = f"{paper.title} {paper.abstract}"
    return "reinforcement learning" in text.lower() or re.search(r"\bRL\b", text) is not None


def test_picks_learn_from_votes(seeded_copy):
    services = build_services(seeded_copy)
    papers = list(services.library.iter_papers())
    assert 0.10 < sum(map(_about_rl, papers)) / len(papers) < 0.14  # "about 12%" of the seeds
    late_share = []
    for n in range(5):
        session = member(services, f"sim{n}", f"member{n}", True)
        flags = []
        for _ in range(30):
            post = session.send("next")
            paper = services.library.get_many([post.cards[0].paper_id])[post.cards[0].paper_id]
            flags.append(_about_rl(paper))
            assert session.send(f"vote {paper.id} {'up' if flags[-1] else 'down'}").ok
        late_share.append(sum(flags[20:]) / 10)
    assert sum(late_share) / 5 >= 0.5, late_share
    # The reason names the liked papers a pick resembles.
    session = member(services, "sim0", "member0", True)
    assert "Like papers this channel voted up: “" in session.send("next").cards[0].reason


def test_top_and_stats(seeded_copy):
    services = build_services(seeded_copy)
    boss = member(services, "t", "ann", True)
    first, second = boss.send("next"), boss.send("next")
    for user in ("u1", "u2"):
        member(services, "t", user).send(f"vote {second.cards[0].paper_id} up")
    member(services, "t", "u3").send(f"vote {first.cards[0].paper_id} read")
    top = boss.send("top 7").text.splitlines()
    assert top[1].startswith(f"1. [{second.cards[0].paper_id}]") and "👍 2" in top[1]
    assert "3 votes from 3 members" in boss.send("stats").text


@pytest.mark.postgres
def test_fifty_members_voting_at_once_on_postgres(postgres_url):
    services = build_services(postgres_url, ensure_schema=False)
    services.db.upgrade()
    from tests.conftest import SEED_FILES

    services.library.import_file(SEED_FILES["trending"])
    poll = member(services, "pg", "ann", True).send("poll 4 48h")
    assert poll.ok

    def vote(user: int) -> bool:
        return member(services, "pg", f"user{user}").send(f"vote {poll.poll_id} {1 + user % 4}").ok

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(vote, list(range(50)) + list(range(0, 50, 3))))
    assert all(results)
    with services.db.session() as session:
        assert session.scalar(select(func.count(PollVote.id)).where(PollVote.poll_id == poll.poll_id)) == 50
    closed = services.polls.close(poll.poll_id, NOW)
    assert sum(closed.result.values()) == 50
    services.db.dispose()


@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_a_poll_closing_while_votes_arrive_counts_or_refuses_every_vote(seeded_db_url):
    services = build_services(seeded_db_url, ensure_schema=False)
    poll = member(services, "race", "ann", True).send("poll 4 48h")
    replies: dict[str, list[bool]] = {}
    problems: list[str] = []  # an assert inside a thread would vanish; collect instead
    lock = threading.Lock()
    enough_landed = threading.Event()
    start = threading.Barrier(9)

    def voter(n: int) -> None:
        start.wait()
        # Vote until the poll refuses (the cap only guards against a poll that never closes),
        # so every voter sees the close however the threads are scheduled.
        for round_ in range(2000):
            reply = member(services, "race", f"v{n}").send(f"vote {poll.poll_id} {1 + (n + round_) % 4}")
            with lock:
                if not (reply.ok or "closed" in reply.text):
                    problems.append(reply.text)
                replies.setdefault(f"v{n}", []).append(reply.ok)
                if sum(len(oks) for oks in replies.values()) >= 16:
                    enough_landed.set()
            if not reply.ok:
                return

    def closer() -> None:
        start.wait()
        # Close mid-stream: after some votes landed, while the voters keep voting.
        enough_landed.wait(timeout=60)
        services.polls.close(poll.poll_id, NOW)

    threads = [threading.Thread(target=voter, args=(n,)) for n in range(8)] + [threading.Thread(target=closer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not problems, problems
    counted = sum(services.polls.get(poll.poll_id).result.values())
    # Each member who got at least one "counted" reply is in the result, exactly once.
    assert counted == sum(1 for oks in replies.values() if any(oks))
    # Once refused, never accepted again; and the race really happened.
    for oks in replies.values():
        assert oks == sorted(oks, reverse=True)
    assert counted > 0 and any(not ok for oks in replies.values() for ok in oks)
    services.db.dispose()


def _state(services) -> tuple:
    with services.db.session() as s:
        return tuple(
            s.scalar(select(func.count(model.id))) for model in (PostVote, PollVote, Poll, Nomination, QueueItem)
        ) + (tuple(s.scalars(select(Poll.state).order_by(Poll.id))),
             tuple(s.scalars(select(PollVote.position).order_by(PollVote.id))),
             tuple(s.scalars(select(QueueItem.state).order_by(QueueItem.id))))


VOTE_WORDS = st.sampled_from(["vote", "nominate", "poll", "queue", "top", "stats", "close", "done", "remove",
                              "up", "down", "read", "none", "sideways", "1", "2", "3", "4", "0", "99", "-1",
                              "#1", "48h", "0m", "15d", "2h", "x", "graph", "diffusion", ""])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(st.lists(VOTE_WORDS, min_size=1, max_size=4).map(" ".join),
                                st.text(max_size=30).map(lambda t: "vote " + t)), min_size=1, max_size=4),
       is_manager=st.booleans())
def test_fuzzed_vote_and_poll_commands(seeded_copy, lines, is_manager):
    services = build_services(seeded_copy)
    boss = member(services, "fz", "ann", True)
    if not services.polls.open_poll(services.channels.get(boss.channel).id):
        boss.send("next")
        boss.send("poll 3 2h")
    session = member(services, "fz", "f", is_manager)
    for line in lines:
        before = _state(services)
        reply = session.send(line)  # never raises
        if not reply.ok:
            assert _state(services) == before, line
    services.db.dispose()


def test_a_post_rerenders_with_its_tally_for_adapters_to_update(seeded_copy):
    services = build_services(seeded_copy)
    boss = member(services, "r", "ann", True)
    post = boss.send("next")
    services.core.remember_message(post, "msg-42")
    member(services, "r", "bob").send(f"vote {post.cards[0].paper_id} up")
    ref, updated = services.core.render_post(post.post_id)
    assert ref == "msg-42"
    assert updated.text.endswith("👍 1 · 👎 0 · read 0")
    assert updated.cards[0].paper_id == post.cards[0].paper_id and updated.cards[0].reason == post.cards[0].reason
    assert [a.value for a in updated.actions] == [a.value for a in post.actions]
    poll = boss.send("poll 2 1h")
    services.core.remember_message(poll, "msg-43")
    assert services.polls.get(poll.poll_id).message_ref == "msg-43"


def test_one_failing_result_delivery_does_not_stop_the_others(seeded_copy):
    services = build_services(seeded_copy)
    for name in ("one", "two"):
        assert member(services, name, "ann", True).send("poll 2 1h").ok
    delivered = []

    def deliver(channel, reply):
        if channel.channel == "one":
            raise ConnectionError("gone")
        delivered.append(channel.channel)
        return "ref"

    later = datetime.now(UTC) + timedelta(hours=2)
    assert services.core.tick(later, deliver, ["console"])["polls_closed"] == 2
    assert delivered == ["two"]


def test_withdrawing_an_unposted_next_or_poll_uses_nothing_up(seeded_copy):
    services = build_services(seeded_copy)
    boss = member(services, "w", "ann", True)
    assert boss.send("use topic-abstracts").ok
    failed = boss.send("next")
    services.core.withdraw(failed)  # the platform refused the message
    assert "Nothing posted here yet" in boss.send("history").text
    titles = {boss.send("next").cards[0].title for _ in range(17)}
    assert failed.cards[0].title in titles  # the paper went back to the pool
    boss.send("use all")
    boss.send("nominate graph biconnectivity")
    poll = boss.send("poll 2 1h")
    services.core.withdraw(poll)
    assert services.polls.get(poll.poll_id) is None
    again = boss.send("poll 2 1h")  # not blocked by the withdrawn poll
    assert again.ok and again.cards[0].title.startswith("Rethinking the Expressive Power")  # nomination reopened


def test_an_open_poll_is_shown_to_anyone_and_voted_by_its_option_alone(seeded_copy):
    services = build_services(seeded_copy, clock=Clock(NOW))
    boss, bob = member(services, "q", "ann", True), member(services, "q", "bob")
    assert not bob.send("vote 1").ok  # no poll open: says how to vote on a paper instead
    nothing = bob.send("poll")
    assert "No poll is open here" in nothing.text and nothing.ephemeral
    started = boss.send("poll 3 1w")  # weeks too
    assert started.ok and "Mon 30 Nov" in started.text
    assert bob.send("vote 2").ok
    assert not bob.send("vote 4").ok  # three options only
    shown = bob.send("poll")
    assert shown.ok and shown.poll_id == started.poll_id and not shown.cards  # shown, not a new poll
    lines = shown.text.splitlines()
    assert lines[0].startswith(f"Poll {started.poll_id}, open until")
    assert lines[2].startswith("2. [") and lines[2].endswith(": 1 vote")
    assert boss.send("poll").poll_id == started.poll_id  # a manager sees the open one too


def test_a_vote_and_the_queue_take_any_id_the_library_knows(seeded_copy):
    services = build_services(seeded_copy)
    boss, bob = member(services, "ids", "ann", True), member(services, "ids", "bob")
    post = boss.send("next")
    paper = services.library.get_many([post.cards[0].paper_id])[post.cards[0].paper_id]
    with services.db.session() as session:  # give the posted paper an arXiv id, as a source would
        session.add(PaperExternalId(paper_id=paper.id, scheme="arxiv", value="2106.01345"))
    assert bob.send("vote arXiv:2106.01345 up").text.endswith("👍 1 · 👎 0 · read 0")
    assert bob.send("vote https://arxiv.org/abs/2106.01345v2 read").text.endswith("👍 1 · 👎 0 · read 1")
    assert not bob.send("vote arXiv:9999.99999 up").ok
    assert not bob.send("vote arXiv:2106.01345 sideways").ok  # still a usage error
    nominated = bob.send("nominate arXiv:2106.01345")
    assert nominated.ok and f"[{paper.id}]" in nominated.text


@pytest.mark.parametrize("setup, shown", [
    ("schedule 09:00 Europe/Berlin", "Wed 25 Nov 10:00 CET"),  # the paper of the day's zone
    ("session every thu 17:00 America/New_York", "Wed 25 Nov 04:00 EST"),  # else the meeting's
    ("", "Wed 25 Nov 09:00 UTC"),  # else UTC
])
def test_a_polls_deadline_is_shown_in_the_channels_zone(seeded_copy, setup, shown):
    """Issue 45: poll deadlines were shown in UTC in a Europe/Berlin channel."""
    services = build_services(seeded_copy, clock=Clock(NOW))
    boss, bob = member(services, "q", "ann", True), member(services, "q", "bob")
    if setup:
        assert boss.send(setup).ok
    started = boss.send("poll 3 48h")
    assert f"until {shown}." in started.text, started.text
    assert bob.send("poll").text.splitlines()[0] == f"Poll {started.poll_id}, open until {shown}:"
    assert f"Poll {started.poll_id}, open until {shown}:" in bob.send("settings").text
    preview = boss.send("digest preview") if boss.send("digest mon 09:00").ok else None
    assert preview is not None and f"Open until {shown}: vote" in preview.text + str(preview.sections)

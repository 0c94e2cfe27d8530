"""A reply's kind is derived in one place (bot.messages.Reply.kind), and what every platform
does with it is written once (adapters/replies.py): a post is remembered, or withdrawn when
it did not go out; a thread reply goes to its thread; an answer to a vote redraws the
post; answers after the ack run on their own pool. Sync and async senders see the same
calls."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from adapters.replies import Later, redraw, send, send_async
from bot.app import build_services
from bot.messages import Action, ChannelRef, Incoming, Kind, Reply, UserRef

VOTES = [Action("👍", "vote 1 up")]
POST = Reply(text="Paper of the day", actions=VOTES, post_id=1, open_thread="Paper")
POLL = Reply(text="Poll 3", actions=VOTES, poll_id=3)
VOTED = Reply(text="You want to discuss it", ephemeral=True, post_id=1)
RESULT = Reply(text="Poll 3 closed.", in_thread=True, reply_to="1700.01", poll_id=3)
SEARCH = Reply(text="2 papers", actions=[Action("Show", "show 2")])
PRIVATE_CARD = Reply(text="Added", actions=VOTES, post_id=1, ephemeral=True)
REDRAWN = Reply(text="Paper of the day\n👍 1", actions=VOTES, post_id=1)


@pytest.mark.parametrize("reply, kind, redraws", [
    (POST, Kind.POST, None),
    (POLL, Kind.POST, None),
    (VOTED, Kind.ANSWER, 1),
    (RESULT, Kind.THREAD_REPLY, None),
    (SEARCH, Kind.ANSWER, None),  # buttons, but no post or poll to vote on
    (PRIVATE_CARD, Kind.ANSWER, 1),  # private replies are answers, whatever they carry
    (Reply(text="ok"), Kind.ANSWER, None),
])
def test_a_replys_kind_follows_from_what_the_feature_set(reply, kind, redraws):
    assert (reply.kind, reply.redraws) == (kind, redraws)
    assert "kind" not in reply.to_dict() and "redraws" not in reply.to_dict()  # the console's JSON as it was


def test_the_features_replies_have_the_kinds_adapters_need(seeded_copy):
    services = build_services(seeded_copy)
    channel = ChannelRef("console", "local", "general")
    boss = UserRef("console", "boss", is_manager=True)

    def say(line: str) -> Reply:
        return services.core.handle(Incoming(channel, boss, line))

    posted = say("next")
    assert posted.kind is Kind.POST and posted.post_id is not None
    vote = say(f"vote {posted.cards[0].paper_id} up")
    assert vote.kind is Kind.ANSWER and vote.redraws == posted.post_id
    poll = say("poll 2")
    assert poll.kind is Kind.POST and poll.poll_id is not None
    services.core.remember_message(poll, "poll-message")
    closed = say("poll close")
    assert closed.kind is Kind.THREAD_REPLY and closed.reply_to == "poll-message"
    assert say("search graph").kind is Kind.ANSWER
    services.db.dispose()


class FakeCore:
    """The core's side of sending: what was remembered, withdrawn, rendered."""

    def __init__(self, rendered=("1700.01", REDRAWN)):
        self.calls: list[tuple] = []
        self.rendered = rendered

    def remember_message(self, reply: Reply, ref: str) -> None:
        self.calls.append(("remember", reply.text, ref))

    def withdraw(self, reply: Reply) -> None:
        self.calls.append(("withdraw", reply.text))

    def render_post(self, post_id: int):
        self.calls.append(("render", post_id))
        return self.rendered


class Refused(Exception):
    pass


class Recorder:
    """A platform's translation that records what it was asked; `fail` names a method that raises."""

    def __init__(self, calls: list[tuple], fail: str = ""):
        self.calls = calls
        self.fail = fail

    def _did(self, what: str, *args) -> None:
        self.calls.append((what, *args))
        if what == self.fail:
            raise Refused(what)

    def post(self, reply: Reply) -> str:
        self._did("post", reply.text)
        return "ref-1"

    def post_in_thread(self, reply: Reply) -> None:
        self._did("post_in_thread", reply.text, reply.reply_to)

    def answer(self, reply: Reply) -> None:
        self._did("answer", reply.text)

    def edit(self, ref: str, reply: Reply) -> None:
        self._did("edit", ref, reply.text)

    def posted(self, reply: Reply, ref: str) -> None:
        self._did("posted", ref)


class AsyncRecorder(Recorder):
    async def post(self, reply: Reply) -> str:  # type: ignore[override]
        return Recorder.post(self, reply)

    async def post_in_thread(self, reply: Reply) -> None:  # type: ignore[override]
        Recorder.post_in_thread(self, reply)

    async def answer(self, reply: Reply) -> None:  # type: ignore[override]
        Recorder.answer(self, reply)

    async def edit(self, ref: str, reply: Reply) -> None:  # type: ignore[override]
        Recorder.edit(self, ref, reply)

    async def posted(self, reply: Reply, ref: str) -> None:  # type: ignore[override]
        Recorder.posted(self, reply, ref)


CASES = [
    # A post: out, then its reference kept, then what the platform owes after it.
    (POST, "", [("post", POST.text), ("remember", POST.text, "ref-1"), ("posted", "ref-1")]),
    # Refused: taken back (the paper returns to the pool), and the refusal goes on up.
    (POLL, "post", [("post", POLL.text), ("withdraw", POLL.text)]),
    # Out but what follows failed: the post stays remembered.
    (POST, "posted", [("post", POST.text), ("remember", POST.text, "ref-1"), ("posted", "ref-1")]),
    (RESULT, "", [("post_in_thread", RESULT.text, "1700.01")]),
    (SEARCH, "", [("answer", SEARCH.text)]),
    # A vote: the answer, then the voted post redrawn where it was posted.
    (VOTED, "", [("answer", VOTED.text), ("render", 1), ("edit", "1700.01", REDRAWN.text)]),
    # The answer did not go out: no redraw either.
    (VOTED, "answer", [("answer", VOTED.text)]),
]


@pytest.mark.parametrize("reply, fail, expected", CASES)
def test_a_reply_goes_out_by_its_kind_the_same_from_sync_and_async_senders(reply, fail, expected):
    core = FakeCore()
    if fail:
        with pytest.raises(Refused):
            send(core, reply, Recorder(core.calls, fail))
    else:
        send(core, reply, Recorder(core.calls))
    assert core.calls == expected

    on_loop = FakeCore()
    sender = AsyncRecorder(on_loop.calls, fail)
    if fail:
        with pytest.raises(Refused):
            asyncio.run(send_async(on_loop, reply, sender))
    else:
        asyncio.run(send_async(on_loop, reply, sender))
    assert on_loop.calls == expected


@pytest.mark.parametrize("rendered", [None, (None, REDRAWN)])
def test_a_post_not_posted_here_is_not_redrawn(rendered):
    core = FakeCore(rendered)
    redraw(core, 1, Recorder(core.calls))
    assert core.calls == [("render", 1)]


def test_answers_after_the_ack_run_on_their_own_pool_and_failures_are_logged(caplog):
    later = Later(threads=2, name="test-later")
    ran: list[str] = []
    done = threading.Event()

    def answer(text: str) -> None:
        ran.append(threading.current_thread().name)
        if text == "boom":
            raise RuntimeError("a bug")
        done.set()

    with caplog.at_level(logging.WARNING, logger="adapters.replies"):
        later.hand_off("answering a command", answer, "boom")
        later.hand_off("answering a command", answer, "fine")
        assert done.wait(5)
        later.shutdown(wait=True)
        later.hand_off("answering a command", answer, "fine")  # stopping: dropped, said so
    assert len(ran) == 2 and all(name.startswith("test-later") for name in ran)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "answering a command after the ack failed",
        "answering a command: not answered, paperclub is stopping",
    ]


def test_an_answer_after_the_ack_can_be_awaited_from_an_event_loop():
    with ThreadPoolExecutor(1, "awaited") as pool:
        later = Later(pool)

        async def scenario() -> str:
            return await later.run(lambda: threading.current_thread().name)

        assert asyncio.run(scenario()).startswith("awaited")

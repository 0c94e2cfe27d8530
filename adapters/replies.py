"""What every platform does with the core's replies, written once.

A platform's adapter turns its payloads into `Incoming`s for the core and writes a
`Sender`: how one reply becomes its messages (post in the channel, post in a thread,
answer the member, edit a message). The rest is here and is the same everywhere:

- `send(core, reply, sender)`: the reply goes out by its kind (bot.messages.Kind); a
  post's reference is kept (core.remember_message) so votes redraw it and results reach
  its thread, and a post that did not go out is taken back (core.withdraw) so its paper
  or poll is not used up; an answer to a vote redraws the voted post after it.
- `redraw(core, post_id, sender)`: a post again with its current tally
  (core.render_post), after a vote by command, button or reaction.
- `Later`: acknowledge now, answer after, on a pool of the platform's own, for the
  commands the core routes as `later` (`core.route(text).later`).

Whether a line is answered privately, later, or needs the member's rights is the core's
`route`; what a reply is, is its `kind`. A platform re-derives neither.

`send_async` and `redraw_async` are the same steps for a platform whose client lives on an
event loop (Discord): the sender's methods are coroutines and the core's calls, which
wait on the database, run in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from bot.core import PaperClub
from bot.messages import Kind, Reply

log = logging.getLogger(__name__)

LATER_THREADS = 16  # answers after the ack (an `add` waits up to its budget on pages)
T = TypeVar("T")


class Editor(Protocol):
    """What redrawing a post needs of a platform."""

    def edit(self, ref: str, reply: Reply) -> None:
        """`reply` in place of the message at `ref` (a post with its new tally)."""
        ...


class Sender(Editor, Protocol):
    """How one reply becomes a platform's messages: the translation a platform writes.
    Each method raises what its platform raises when the message did not go out."""

    def post(self, reply: Reply) -> str:
        """A message of its own in the channel; its reference as the core keeps it
        (Slack's ts, Discord's "channel_id/message_id")."""
        ...

    def post_in_thread(self, reply: Reply) -> None:
        """Into the thread of the message `reply.reply_to` names."""
        ...

    def answer(self, reply: Reply) -> None:
        """Back to the member who asked: to them alone when `reply.ephemeral`."""
        ...

    def posted(self, reply: Reply, ref: str) -> None:
        """The post is out and its reference kept: what the platform still owes after it
        (Discord: the thread under it, or telling a clicker it went out). A failure here
        does not take the post back."""


class AsyncEditor(Protocol):
    async def edit(self, ref: str, reply: Reply) -> None: ...


class AsyncSender(AsyncEditor, Protocol):
    """`Sender` for a platform whose client lives on an event loop."""

    async def post(self, reply: Reply) -> str: ...

    async def post_in_thread(self, reply: Reply) -> None: ...

    async def answer(self, reply: Reply) -> None: ...

    async def posted(self, reply: Reply, ref: str) -> None:
        """As `Sender.posted`."""


def send(core: PaperClub, reply: Reply, sender: Sender) -> None:
    """Send the core's reply as its kind says; raises what the sender raised (a post
    that failed is withdrawn first)."""
    kind = reply.kind
    if kind is Kind.POST:
        post(core, reply, sender)
    elif kind is Kind.THREAD_REPLY:
        sender.post_in_thread(reply)
    else:
        sender.answer(reply)
    if reply.redraws is not None:
        redraw(core, reply.redraws, sender)


def post(core: PaperClub, reply: Reply, sender: Sender) -> str:
    """Post `reply` and keep its reference; when it did not go out, withdraw it (the
    paper goes back to the pool, the poll does not block the next one) and re-raise."""
    try:
        ref = sender.post(reply)
    except Exception:
        core.withdraw(reply)
        raise
    core.remember_message(reply, ref)
    sender.posted(reply, ref)
    return ref


def redraw(core: PaperClub, post_id: int, sender: Editor) -> None:
    """The post's message again, with its current tally. Nothing to do for a post this
    platform has not posted (yet): it has no reference."""
    rendered = core.render_post(post_id)
    if rendered is not None and rendered[0] is not None:
        sender.edit(*rendered)


async def send_async(core: PaperClub, reply: Reply, sender: AsyncSender) -> None:
    """`send` on an event loop."""
    kind = reply.kind
    if kind is Kind.POST:
        await post_async(core, reply, sender)
    elif kind is Kind.THREAD_REPLY:
        await sender.post_in_thread(reply)
    else:
        await sender.answer(reply)
    if reply.redraws is not None:
        await redraw_async(core, reply.redraws, sender)


async def post_async(core: PaperClub, reply: Reply, sender: AsyncSender) -> str:
    """`post` on an event loop."""
    try:
        ref = await sender.post(reply)
    except Exception:
        await asyncio.to_thread(core.withdraw, reply)
        raise
    await asyncio.to_thread(core.remember_message, reply, ref)
    await sender.posted(reply, ref)
    return ref


async def redraw_async(core: PaperClub, post_id: int, sender: AsyncEditor) -> None:
    """`redraw` on an event loop."""
    rendered = await asyncio.to_thread(core.render_post, post_id)
    if rendered is not None and rendered[0] is not None:
        await sender.edit(*rendered)


class Later:
    """Answers after the acknowledgement, on a pool of their own: never the threads a
    platform acknowledges requests on (bolt's listener pool), nor the few threads every
    other answer shares (asyncio's default executor), so a slow answer holds up no one."""

    def __init__(self, pool: Executor | None = None, threads: int = LATER_THREADS, name: str = "later"):
        self.pool = pool or ThreadPoolExecutor(threads, name)

    def hand_off(self, what: str, answer: Callable[..., Any], *args: Any) -> None:
        """Run `answer(*args)` after the ack. Nobody waits for it, so a failure is logged
        here (a pool would keep it to itself), and an answer handed off while the process
        stops is logged and dropped."""

        def run() -> None:
            try:
                answer(*args)
            except Exception:
                log.exception("%s after the ack failed", what)

        try:
            self.pool.submit(run)
        except RuntimeError:  # the pool is shut: the process is stopping
            log.warning("%s: not answered, paperclub is stopping", what)

    async def run(self, answer: Callable[..., T], *args: Any) -> T:
        """`answer(*args)` on this pool, awaited from an event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, answer, *args)

    def shutdown(self, wait: bool) -> None:
        self.pool.shutdown(wait=wait)

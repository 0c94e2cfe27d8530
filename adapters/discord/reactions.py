"""Reactions that vote on Discord: raw reaction events (guild reactions come with the
default intents; no message content is needed) become `Reaction`s for the core, and a
post whose tally changed is redrawn once per burst (adapters/debounce.py).

Raw reaction events carry no time, and each is counted on a worker thread, so a remove
could be counted before its add. The gateway delivers one shard's events in order, and
discord.py starts their handlers in that order on the loop: each event is stamped there,
before anything waits (`ReceiptOrder`), and the core applies a member's events on a post
by that stamp. A guild's events all come through one shard, so one process.

A post's reference is "channel_id/message_id" (adapters/discord/messages.py), where the
channel is the one the message is in: a `next` answered inside a thread lives in that
thread, while the post belongs to the thread's parent channel, as the command did.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import discord

from adapters.debounce import Debouncer, Timer
from adapters.discord.messages import ChannelLookup, Messenger, is_thread
from bot.core import DATABASE_UNAVAILABLE, PaperClub
from bot.messages import ChannelRef, Reaction, UserRef

log = logging.getLogger(__name__)


def loop_timer(delay: float, callback: Any) -> Timer:
    """The Debouncer's timer on the running event loop (where discord.py's HTTP lives)."""
    return asyncio.get_running_loop().call_later(delay, callback)


class ReceiptOrder:
    """The time an event came, in microseconds since the epoch, each stamp later than the
    one before (a clock step back, or two events in one microsecond). Used on the event
    loop only. Microseconds of wall time, as Slack's event_ts: stamps stay ordered across
    a restart of the process."""

    def __init__(self, clock: Callable[[], int] = time.time_ns):
        self.clock = clock
        self.last = 0

    def stamp(self) -> int:
        self.last = max(self.last + 1, self.clock() // 1000)
        return self.last


class ReactionVotes:
    """`on_raw_reaction_add` / `on_raw_reaction_remove` as votes."""

    def __init__(self, core: PaperClub, client: discord.Client, messenger: Messenger, redraws: Debouncer,
                 channels: ChannelLookup | None = None):
        self.core = core
        self.client = client
        self.messenger = messenger
        self.redraws = redraws
        self.channels = channels or client
        self._redrawing: set[asyncio.Task] = set()  # kept until done (the loop holds tasks weakly)
        self.order = ReceiptOrder()

    async def __call__(self, payload: discord.RawReactionActionEvent) -> None:
        order = self.order.stamp()  # before any await: the gateway's order
        me = self.client.user
        if payload.guild_id is None or me is None or payload.user_id == me.id:
            return
        if payload.message_author_id is not None and payload.message_author_id != me.id:
            return  # someone else's message (Discord names the author on adds): not a post
        channel_id = await self._post_channel(payload.channel_id)
        reaction = Reaction(
            ChannelRef("discord", str(payload.guild_id), str(channel_id)),
            UserRef("discord", str(payload.user_id)),
            f"{payload.channel_id}/{payload.message_id}",
            str(payload.emoji),  # Unicode, or <:name:id> for a custom emoji
            payload.event_type == "REACTION_ADD",
            order,
        )
        try:
            post_id = await asyncio.to_thread(self.core.react, reaction)
        except DATABASE_UNAVAILABLE as problem:  # the reaction stays on the message; the vote is lost
            log.warning("a Discord reaction in %s was not counted: database unreachable (%s)",
                        payload.channel_id, type(problem).__name__)
            return
        if post_id is not None:
            self.redraws.touch(post_id, lambda: self._redraw(post_id))

    async def _post_channel(self, channel_id: int) -> int:
        """The channel a post there belongs to: a thread's parent, else the channel."""
        channel = self.channels.get_channel(channel_id)
        if channel is None:
            try:
                channel = await self.channels.fetch_channel(channel_id)
            except discord.HTTPException:
                return channel_id
        return channel.parent_id if is_thread(channel) else channel_id

    def _redraw(self, post_id: int) -> None:
        task = asyncio.get_running_loop().create_task(self.messenger.refresh_post(post_id))
        self._redrawing.add(task)
        task.add_done_callback(self._redrawn)

    def _redrawn(self, task: asyncio.Task) -> None:
        self._redrawing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # e.g. the post was deleted: the votes still count.
            log.warning("redrawing a post after reactions failed: %s", task.exception())

    async def settled(self) -> None:
        """Wait for the redraws under way (tests; shutting down)."""
        while self._redrawing:
            await asyncio.gather(*self._redrawing, return_exceptions=True)

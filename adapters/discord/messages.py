"""Posting the core's replies in Discord channels and threads, and updating posts.

A message reference, as the core stores it, is "channel_id/message_id". A thread
started from a message has that message's id, so a reply meant for a post's or a
poll's thread (`Reply.reply_to`) finds it from the reference alone.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any, Protocol

import aiohttp
import discord

from adapters.discord.embeds import outgoing, thread_name
from adapters.replies import redraw_async
from bot.core import PaperClub
from bot.messages import ChannelRef, DeliveryRefused, Reply

log = logging.getLogger(__name__)

THREAD_ARCHIVE_MINUTES = 1440  # a day of quiet before Discord archives a discussion thread
THREAD_TYPES = (discord.ChannelType.public_thread, discord.ChannelType.private_thread,
                discord.ChannelType.news_thread)
DELIVERY_TIMEOUT_SECONDS = 300.0
# Refusals that pass by themselves: Discord's rate limit (429) and a request timeout
# (408). Every other 4xx (403 Missing Access / Missing Permissions, 404 Unknown Channel,
# 401 a revoked token, 400 a message Discord will refuse again) stays until someone
# changes something, and retrying it every minute only adds invalid-request strikes
# toward Discord's ban (10,000 in 10 minutes). 5xx is Discord's trouble: transient.
TRANSIENT_4XX = frozenset({408, 429})


class ChannelLookup(Protocol):
    """Where channels come from: a discord.Client (its cache, else the REST API)."""

    def get_channel(self, id: int, /) -> Any: ...

    async def fetch_channel(self, channel_id: int, /) -> Any: ...


def message_ref(message: discord.Message) -> str:
    return f"{message.channel.id}/{message.id}"


def split_ref(ref: str) -> tuple[int, int]:
    channel_id, _, message_id = ref.partition("/")
    return int(channel_id), int(message_id)


def jump_url(channel: Any, ref: str) -> str:
    """A link to the message at `ref`, which Discord shows as a jump to it (and its thread)."""
    channel_id, message_id = split_ref(ref)
    return f"https://discord.com/channels/{channel.guild.id}/{channel_id}/{message_id}"


def is_thread(channel: Any) -> bool:
    return getattr(channel, "type", None) in THREAD_TYPES


class Messenger:
    """Sends replies as messages, opens their threads, and redraws a post after votes."""

    def __init__(self, core: PaperClub, channels: ChannelLookup):
        self.core = core
        self.channels = channels

    async def channel(self, channel_id: int) -> Any:
        # The cache knows the guilds of this process's shards; any other channel (the
        # scheduler may run beside other shards) comes from the REST API.
        return self.channels.get_channel(channel_id) or await self.channels.fetch_channel(channel_id)

    async def post(self, channel_id: int, reply: Reply) -> str:
        """Post `reply` in the channel, or in the thread of the message it answers."""
        target = await self._thread(reply.reply_to, reply) if reply.reply_to else await self.channel(channel_id)
        if reply.link_to:
            reply = replace(reply, text=f"{reply.text}\nDiscussion: {jump_url(target, reply.link_to)}")
        sent = [await target.send(**message.kwargs()) for message in outgoing(reply)]
        await self.open_thread(sent[-1], reply, target)
        return message_ref(sent[-1])

    async def open_thread(self, message: discord.Message, reply: Reply, channel: Any) -> None:
        """The discussion thread under a posted message, if the reply asks for one. The post
        is out by now: a refusal is logged, never raised, or the tick would post it again."""
        if not reply.open_thread or is_thread(channel):  # no threads inside threads
            return
        try:
            await message.create_thread(name=thread_name(reply), auto_archive_duration=THREAD_ARCHIVE_MINUTES)
        except discord.HTTPException as problem:
            log.warning("no thread under message %s (can the bot create public threads there?): %s",
                        message_ref(message), problem)

    async def _thread(self, ref: str, reply: Reply) -> Any:
        """The thread of the message at `ref`, opened now if nobody has; where there can be
        none (the message is in a thread itself, or deleted), the message's channel."""
        channel_id, message_id = split_ref(ref)
        try:
            return await self.channel(message_id)
        except discord.NotFound:
            parent = await self.channel(channel_id)
        if is_thread(parent):
            return parent
        try:
            return await parent.get_partial_message(message_id).create_thread(
                name=thread_name(reply), auto_archive_duration=THREAD_ARCHIVE_MINUTES
            )
        except discord.NotFound:
            return parent

    async def refresh_post(self, post_id: int) -> None:
        """Redraw a post with its current tally (after a vote, by click or by command)."""
        await redraw_async(self.core, post_id, self)

    async def edit(self, ref: str, reply: Reply) -> None:
        """`reply` in place of the message at `ref` (adapters/replies.py's AsyncEditor)."""
        channel_id, message_id = split_ref(ref)
        channel = await self.channel(channel_id)
        await channel.get_partial_message(message_id).edit(**outgoing(reply)[-1].kwargs())


class DiscordDelivery:
    """The scheduler's `deliver(channel, reply) -> message ref`, called from its thread:
    each post runs on the client's event loop, where discord.py's HTTP session lives."""

    def __init__(self, messenger: Messenger, loop: asyncio.AbstractEventLoop):
        self.messenger = messenger
        self.loop = loop

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        future = asyncio.run_coroutine_threadsafe(self.messenger.post(int(channel.channel), reply), self.loop)
        try:
            return future.result(timeout=DELIVERY_TIMEOUT_SECONDS)
        except discord.HTTPException as problem:
            raise refusal(problem) from problem
        except TimeoutError:
            if future.done():  # discord.py's own request timed out: Discord did not answer
                raise DeliveryRefused("could not reach Discord: the request timed out") from None
            # A loop that stopped answering: give up so the tick can record a failure
            # instead of hanging the scheduler thread.
            future.cancel()
            log.error("posting to %s took over %ss; gave up", channel.key(), DELIVERY_TIMEOUT_SECONDS)
            raise
        except (aiohttp.ClientError, OSError) as problem:
            # Discord not reached (a network cut, DNS, a reset connection): a later tick retries.
            raise DeliveryRefused(f"could not reach Discord: {problem or type(problem).__name__}") from problem


def refusal(problem: discord.HTTPException) -> DeliveryRefused:
    """Discord's answer as a DeliveryRefused, permanent when it will not pass by itself."""
    permanent = 400 <= problem.status < 500 and problem.status not in TRANSIENT_4XX
    return DeliveryRefused(f"Discord refused: {problem}", permanent=permanent)

"""Answering Discord interactions: a /paper command or a button click becomes an
`Incoming` for the core, and the core's `Reply` goes back as interaction messages.

Discord drops an interaction not answered within 3 seconds, and the core (a database,
a search index) may take longer, so every interaction is deferred first: the member
sees "paperclub is thinking…" until the answer replaces it (`edit_original_response`;
further messages of a long answer are followups). The core is synchronous: it runs in
a worker thread, never on the event loop that keeps the gateway alive.

Whether the answer is private has to be decided at the deferral, before the core runs:
a public "thinking…" cannot become private. Commands whose answers are always private
(help, a vote, a click) are deferred privately; the others publicly, and when their
reply turns out private after all (a usage error, a refusal) the public placeholder is
deleted and the member alone gets the answer. Whatever fails after the deferral, the
member gets an answer saying so, never a "thinking…" left until the token expires.

The commands the core routes as later (an `add` waits on pages for up to its budget)
run on a pool of their own (`later`): on asyncio's default executor, which every other
command shares (a handful of threads), a few slow adds would hold everyone's answers.
The reply goes out by its kind through adapters/replies.py (`InteractionReplies`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import replace

import discord

from adapters.discord.embeds import Outgoing, outgoing
from adapters.discord.messages import Messenger, is_thread, message_ref
from adapters.replies import AsyncSender, Later, send_async
from bot.core import PaperClub
from bot.messages import ChannelRef, Incoming, Reply, UserRef

log = logging.getLogger(__name__)

NOT_IN_A_SERVER = Reply(text="paperclub works in server channels, not in direct messages.", ephemeral=True, ok=False)
FAILED = "Something went wrong on our side, so this did not go through (it is logged). Please try again in a minute."


class Answers:
    def __init__(self, core: PaperClub, messenger: Messenger, later: Executor | None = None):
        self.core = core
        self.messenger = messenger
        self.later = Later(later, name="discord-later")

    async def command(self, interaction: discord.Interaction, text: str) -> None:
        """A /paper subcommand, as the command text it stands for. The core's route says
        how to defer it: privately when every answer to it is private."""
        route = self.core.route(text)
        private = interaction.guild_id is None or route.private
        await interaction.response.defer(ephemeral=private, thinking=True)
        await self._answer(Response(interaction, private), text, self.core.handle, route.word or "help", route.later)

    async def click(self, interaction: discord.Interaction, value: str) -> None:
        """A button: its value is an action the core rendered; the answer is for the
        clicker alone (a paper posted for discussion goes to the channel as a message of
        its own). `core.click` runs only such actions (a crafted custom_id naming another
        command is refused there)."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self._answer(Response(interaction, private=True), value, self.core.click,
                           self.core.route(value).word or "help")

    async def add_from_message(self, interaction: discord.Interaction, text: str) -> None:
        """The message menu "Add to paperclub": the papers linked in the message (`text`,
        its content and embed links) are added; the member alone sees the cards."""
        await interaction.response.defer(ephemeral=True, thinking=True)

        def add(incoming: Incoming) -> Reply:
            return replace(self.core.add_from_message(incoming), ephemeral=True)

        await self._answer(Response(interaction, private=True), text, add, "Add to paperclub", later=True)

    async def _answer(self, response: Response, text: str, run: Callable[[Incoming], Reply],
                      name: str, later: bool = False) -> None:
        """`name`: the command's, for the log (the rest is what a member typed)."""
        try:
            reply = await self._reply(response.interaction, text, run, later)
            await send_async(self.core, reply, InteractionReplies(response, self.messenger))
        except Exception:  # the member must get an answer, not an endless "thinking…"
            log.exception("answering %s on Discord failed", name)
            await response.apologise()

    async def _reply(self, interaction: discord.Interaction, text: str, run: Callable[[Incoming], Reply],
                     later: bool) -> Reply:
        if interaction.guild_id is None:
            return NOT_IN_A_SERVER
        if later:
            return await self.later.run(run, incoming(interaction, text))
        return await asyncio.to_thread(run, incoming(interaction, text))


class InteractionReplies(AsyncSender):
    """How a reply to one interaction reaches Discord (the Sender of adapters/replies.py).
    Deferred publicly, the answer replaces "thinking…" (a post is that message, with its
    thread under it); deferred privately, a post is a channel message of its own and the
    member is told it went out."""

    def __init__(self, response: Response, messenger: Messenger):
        self.response = response
        self.messenger = messenger
        self.message: discord.Message | None = None  # a post sent as the interaction's answer

    async def post(self, reply: Reply) -> str:
        if self.response.private:  # e.g. a `discuss` button under a card only the clicker sees
            return await self.messenger.post(self.response.interaction.channel_id, reply)
        self.message = await self.response.send(outgoing(reply), ephemeral=False)
        return message_ref(self.message)

    async def posted(self, reply: Reply, ref: str) -> None:
        if self.response.private:
            await self.response.send([Outgoing(content="Posted in the channel.")], ephemeral=True)
        else:
            await self.messenger.open_thread(self.message, reply, self.response.interaction.channel)

    async def post_in_thread(self, reply: Reply) -> None:
        # As an answer in the channel: the interaction's answer cannot go elsewhere.
        await self.answer(reply)

    async def answer(self, reply: Reply) -> None:
        message = await self.response.send(outgoing(reply), ephemeral=reply.ephemeral)
        if not reply.ephemeral:
            await self.messenger.open_thread(message, reply, self.response.interaction.channel)

    async def edit(self, ref: str, reply: Reply) -> None:
        await self.messenger.edit(ref, reply)


class Response:
    """One interaction's answer after its deferral: the "thinking…" placeholder is
    replaced by the answer's first message; later messages are followups."""

    def __init__(self, interaction: discord.Interaction, private: bool):
        self.interaction = interaction
        self.private = private  # how it was deferred
        self.thinking = True  # the placeholder still shows
        self.delivered = False  # the whole answer went out

    async def send(self, messages: list[Outgoing], ephemeral: bool) -> discord.Message:
        """Send the answer; returns its last message (the one cards and buttons are on)."""
        if not ephemeral and self.private:
            # Decided at the deferral and cannot change: the answer stays the member's.
            log.warning("a public reply to a command deferred as private was shown privately")
        if ephemeral and not self.private and self.thinking:
            # A public placeholder cannot become private: remove it, answer the member alone.
            await self.interaction.delete_original_response()
            self.thinking = False
        sent = [await self._send_one(message, ephemeral or self.private) for message in messages]
        self.delivered = True
        return sent[-1]

    async def _send_one(self, message: Outgoing, ephemeral: bool) -> discord.Message:
        if self.thinking:
            edited = await self.interaction.edit_original_response(**message.kwargs())
            self.thinking = False
            return edited
        return await self.interaction.followup.send(**message.kwargs(), ephemeral=ephemeral, wait=True)

    async def apologise(self) -> None:
        """Tell the member something went wrong, unless their answer is out already (a
        failure after it, say redrawing a post, needs no retry from them)."""
        if self.delivered:
            return
        try:
            await self.send([Outgoing(content=FAILED)], ephemeral=True)
        except Exception as problem:  # noqa: BLE001 - nothing left to tell the member with
            log.warning("could not tell the member that their command failed: %s", problem)


def incoming(interaction: discord.Interaction, text: str) -> Incoming:
    """Who and where. A command in a thread acts on the thread's channel; a manager is a
    member with Manage Channels there (checked here: Discord's default_permissions on
    a command is only a hint that server admins can change)."""
    channel = interaction.channel
    channel_id = channel.parent_id if is_thread(channel) else interaction.channel_id
    user = interaction.user
    return Incoming(
        channel=ChannelRef("discord", str(interaction.guild_id), str(channel_id)),
        user=UserRef("discord", str(user.id), display_name=user.display_name,
                     is_manager=interaction.permissions.manage_channels),
        text=text,
    )

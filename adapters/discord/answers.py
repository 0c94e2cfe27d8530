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

The commands the grammar answers later (an `add` waits on pages for up to its budget)
run on a pool of their own (`later`): on asyncio's default executor, which every other
command shares (a handful of threads), a few slow adds would hold everyone's answers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import replace

import discord

from adapters.discord.embeds import Outgoing, outgoing
from adapters.discord.messages import Messenger, is_thread, message_ref
from bot.core import PaperClub
from bot.grammar import Command, split_command
from bot.messages import ChannelRef, Incoming, Reply, UserRef

log = logging.getLogger(__name__)

NOT_IN_A_SERVER = Reply(text="paperclub works in server channels, not in direct messages.", ephemeral=True, ok=False)
LATER_THREADS = 16  # answers of the commands the grammar answers later (adds waiting on pages)
FAILED = "Something went wrong on our side, so this did not go through (it is logged). Please try again in a minute."


def answers_privately(commands: Mapping[str, Command], text: str) -> bool:
    """Whether every reply to this line is for the asking member alone (the grammar's
    `private`): such a line is deferred privately from the start."""
    name, _args = split_command(text)
    return not name or (name in commands and commands[name].private)


class Answers:
    def __init__(self, core: PaperClub, messenger: Messenger, later: Executor | None = None):
        self.core = core
        self.messenger = messenger
        self.later = later or ThreadPoolExecutor(LATER_THREADS, "discord-later")

    async def command(self, interaction: discord.Interaction, text: str) -> None:
        """A /paper subcommand, as the command text it stands for."""
        private = interaction.guild_id is None or answers_privately(self.core.commands, text)
        await interaction.response.defer(ephemeral=private, thinking=True)
        name = split_command(text)[0]
        later = name in self.core.commands and self.core.commands[name].answered_later
        await self._answer(Response(interaction, private), text, self.core.handle, later=later)

    async def click(self, interaction: discord.Interaction, value: str) -> None:
        """A button: its value is an action the core rendered; the answer is for the
        clicker alone (a paper posted for discussion goes to the channel as a message of
        its own). `core.click` runs only such actions (a crafted custom_id naming another
        command is refused there)."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self._answer(Response(interaction, private=True), value, self.core.click)

    async def add_from_message(self, interaction: discord.Interaction, text: str) -> None:
        """The message menu "Add to paperclub": the papers linked in the message (`text`,
        its content and embed links) are added; the member alone sees the cards."""
        await interaction.response.defer(ephemeral=True, thinking=True)

        def add(incoming: Incoming) -> Reply:
            return replace(self.core.add_from_message(incoming), ephemeral=True)

        await self._answer(Response(interaction, private=True), text, add, name="Add to paperclub", later=True)

    async def _answer(self, response: Response, text: str, run: Callable[[Incoming], Reply],
                      name: str | None = None, later: bool = False) -> None:
        try:
            reply = await self._reply(response.interaction, text, run, later)
            await self._deliver(response, reply)
        except Exception:  # noqa: BLE001 - the member must get an answer, not an endless "thinking…"
            # The command's name only: the rest is what a member typed.
            log.exception("answering %s on Discord failed", name or split_command(text)[0] or "help")
            await response.apologise()

    async def _reply(self, interaction: discord.Interaction, text: str, run: Callable[[Incoming], Reply],
                     later: bool) -> Reply:
        if interaction.guild_id is None:
            return NOT_IN_A_SERVER
        if later:
            return await asyncio.get_running_loop().run_in_executor(self.later, run, incoming(interaction, text))
        return await asyncio.to_thread(run, incoming(interaction, text))

    async def _deliver(self, response: Response, reply: Reply) -> None:
        if reply.ephemeral:
            await response.send(outgoing(reply), ephemeral=True)
        elif response.private and is_post(reply):
            await self._post_for(response, reply)
        else:
            await self._publish(response, reply)
        if reply.post_id is not None and not reply.actions:  # a vote: redraw the post's tally
            await self.messenger.refresh_post(reply.post_id)

    async def _publish(self, response: Response, reply: Reply) -> None:
        try:
            message = await response.send(outgoing(reply), ephemeral=False)
        except Exception:
            # Nothing reached the channel: the paper or poll must not be used up.
            await asyncio.to_thread(self.core.withdraw, reply)
            raise
        await asyncio.to_thread(self.core.remember_message, reply, message_ref(message))
        await self.messenger.open_thread(message, reply, response.interaction.channel)


    async def _post_for(self, response: Response, reply: Reply) -> None:
        """A post made from a private answer (a `discuss` button under an added paper's
        card): a channel message of its own, with its thread; the clicker is told so."""
        interaction = response.interaction
        try:
            ref = await self.messenger.post(interaction.channel_id, reply)
        except Exception:
            await asyncio.to_thread(self.core.withdraw, reply)  # not posted: not used up
            raise
        await asyncio.to_thread(self.core.remember_message, reply, ref)
        await response.send([Outgoing(content="Posted in the channel.")], ephemeral=True)


def is_post(reply: Reply) -> bool:
    """A paper-of-the-day post or a poll: a channel message with buttons to vote on."""
    return bool(reply.actions) and not reply.ephemeral and (reply.post_id is not None or reply.poll_id is not None)


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

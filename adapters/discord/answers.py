"""Answering Discord interactions: a /paper command or a button click becomes an
`Incoming` for the core, and the core's `Reply` goes back as interaction messages.

Discord drops an interaction not answered within 3 seconds, and the core (a database,
a search index) may take longer, so every interaction is deferred first and answered
with followups. The core is synchronous: it runs in a worker thread, never on the
event loop that keeps the gateway alive.
"""

from __future__ import annotations

import asyncio
import logging

import discord

from adapters.discord.embeds import outgoing
from adapters.discord.messages import Messenger, is_thread, message_ref
from bot.core import PaperClub
from bot.messages import ChannelRef, Incoming, Reply, UserRef

log = logging.getLogger(__name__)

NOT_IN_A_SERVER = Reply(text="paperclub works in server channels, not in direct messages.", ephemeral=True, ok=False)
FAILED = Reply(text="Something went wrong on our side (it is logged). Try again in a minute.", ephemeral=True,
               ok=False)


class Answers:
    def __init__(self, core: PaperClub, messenger: Messenger):
        self.core = core
        self.messenger = messenger

    async def command(self, interaction: discord.Interaction, text: str) -> None:
        """A /paper subcommand, as the command text it stands for."""
        await interaction.response.defer(thinking=True)
        reply = await self._handle(interaction, text)
        if reply.ephemeral:
            # The deferral was public; its first followup would be too. Remove it and
            # answer the member alone.
            await interaction.delete_original_response()
            await self._send(interaction, reply, ephemeral=True)
        else:
            try:
                message = await self._send(interaction, reply, ephemeral=False)
            except discord.HTTPException:
                # Nothing reached the channel: the paper or poll must not be used up.
                await asyncio.to_thread(self.core.withdraw, reply)
                raise
            await asyncio.to_thread(self.core.remember_message, reply, message_ref(message))
            await self.messenger.open_thread(message, reply, interaction.channel)
        if reply.post_id is not None and not reply.actions:  # a vote typed as a command
            await self.messenger.refresh_post(reply.post_id)

    async def click(self, interaction: discord.Interaction, value: str) -> None:
        """A button: its value is the command text; the answer is for the clicker alone."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        reply = await self._handle(interaction, value)
        await self._send(interaction, reply, ephemeral=True)
        if reply.post_id is not None:
            await self.messenger.refresh_post(reply.post_id)

    async def _handle(self, interaction: discord.Interaction, text: str) -> Reply:
        if interaction.guild_id is None:
            return NOT_IN_A_SERVER
        try:
            return await asyncio.to_thread(self.core.handle, incoming(interaction, text))
        except Exception:  # noqa: BLE001 - the member must get an answer, not an endless "thinking"
            log.exception("the core failed on %r", text)
            return FAILED

    async def _send(self, interaction: discord.Interaction, reply: Reply, ephemeral: bool) -> discord.Message:
        sent = [await interaction.followup.send(**message.kwargs(), ephemeral=ephemeral, wait=True)
                for message in outgoing(reply)]
        return sent[-1]


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

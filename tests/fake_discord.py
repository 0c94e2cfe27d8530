"""Fakes of the Discord objects the adapter touches, at the edge of discord.py.

`FakeDiscord` is the server side: channels, threads and messages by id, found the way a
discord.Client finds them (`get_channel`, `fetch_channel`). `FakeInteraction` stands
for a discord.Interaction: its `response`, `edit_original_response`,
`delete_original_response` and `followup` record what the bot answered, and follow
Discord's rules where they matter: one initial response; a deferral shows "thinking…"
until the original response is edited (it then becomes the answer, with the deferral's
visibility) or deleted; a followup while it still thinks replaces it too (the deprecated
behaviour: again with the deferral's visibility, whatever the followup asked). `fail`
makes a call raise, as Discord refusing it would. A message past Discord's limits (a
malformed link, embeds over 6,000 characters, ...) is refused as tests/fake_discord_api.py
refuses it: discord.HTTPException, 400, code 50035.
Every method here has the parameter names of the discord.py method it stands for
(tests/discord/test_discord.py checks), so the adapter cannot call what discord.py lacks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import discord

from tests.fake_discord_api import INVALID_FORM_BODY, message_errors

GUILD_ID = 4242
CHANNEL_ID = 100


def not_found(what: str) -> discord.NotFound:
    return discord.NotFound(SimpleNamespace(status=404, reason="Not Found"), what)


def refuse_invalid(content: str | None, embeds: list[discord.Embed] | None, view: discord.ui.View | None) -> None:
    """Raise what discord.py raises when Discord refuses a message body (50035)."""
    payload = {"content": content or "", "embeds": [e.to_dict() for e in embeds or []],
               "components": view.to_components() if view is not None else []}
    errors = message_errors(payload)
    if errors:
        raise discord.HTTPException(SimpleNamespace(status=400, reason="Bad Request"),
                                    {"code": INVALID_FORM_BODY, "message": "Invalid Form Body", "errors": errors})


class FakeDiscord:
    """The guild's channels, threads and messages."""

    def __init__(self, guild_id: int = GUILD_ID, threads_allowed: bool = True):
        self.guild_id = guild_id
        self.threads_allowed = threads_allowed  # False: the bot lacks Create Public Threads
        self.channels: dict[int, FakeChannel] = {}
        self.messages: dict[int, FakeMessage] = {}
        self._ids = itertools.count(900_000)

    def new_id(self) -> int:
        return next(self._ids)

    def add_channel(self, channel_id: int = CHANNEL_ID, **kwargs: Any) -> FakeChannel:
        channel = FakeChannel(self, channel_id, **kwargs)
        self.channels[channel_id] = channel
        return channel

    def threads(self) -> list[FakeChannel]:
        return [c for c in self.channels.values() if c.type == discord.ChannelType.public_thread]

    # discord.Client's lookups
    def get_channel(self, id: int, /) -> FakeChannel | None:
        return self.channels.get(id)

    async def fetch_channel(self, channel_id: int, /) -> FakeChannel:
        if channel_id not in self.channels:
            raise not_found("Unknown Channel")
        return self.channels[channel_id]


class FakeChannel:
    """A text channel, or a thread (type public_thread, with parent_id)."""

    def __init__(self, world: FakeDiscord, channel_id: int, type: discord.ChannelType = discord.ChannelType.text,
                 parent_id: int | None = None, name: str = "reading-group", auto_archive_duration: int = 0):
        self.world = world
        self.id = channel_id
        self.type = type
        self.parent_id = parent_id
        self.name = name
        self.auto_archive_duration = auto_archive_duration
        self.messages: list[FakeMessage] = []
        self.guild = discord.Object(id=world.guild_id)

    async def send(self, content: str | None = None, *, embeds: list[discord.Embed] | None = None,
                   view: discord.ui.View | None = None) -> FakeMessage:
        return self.post(content, embeds or [], view)

    def post(self, content: str | None, embeds: list[discord.Embed], view: discord.ui.View | None) -> FakeMessage:
        refuse_invalid(content, embeds, view)
        message = FakeMessage(self.world, self, self.world.new_id(), content, list(embeds), view)
        self.messages.append(message)
        self.world.messages[message.id] = message
        return message

    def get_partial_message(self, message_id: int, /) -> FakeMessage:
        if message_id not in self.world.messages:  # deleted: a partial message that fails on use
            return FakeMessage(self.world, self, message_id, None, [], None, deleted=True)
        return self.world.messages[message_id]


@dataclass
class FakeMessage:
    world: FakeDiscord
    channel: FakeChannel
    id: int
    content: str | None
    embeds: list[discord.Embed]
    view: discord.ui.View | None
    ephemeral: bool = False
    edits: int = 0
    deleted: bool = False

    async def edit(self, *, content: str | None = None, embeds: list[discord.Embed] | None = None,
                   view: discord.ui.View | None = None) -> FakeMessage:
        if self.deleted:
            raise not_found("Unknown Message")
        refuse_invalid(content, embeds, view)
        self.content, self.embeds, self.view = content, list(embeds or []), view
        self.edits += 1
        return self

    async def create_thread(self, *, name: str, auto_archive_duration: int = 4320) -> FakeChannel:
        if self.deleted:
            raise not_found("Unknown Message")
        if not self.world.threads_allowed:
            raise discord.Forbidden(SimpleNamespace(status=403, reason="Forbidden"), "Missing Permissions")
        if self.id in self.world.channels:
            raise discord.HTTPException(SimpleNamespace(status=400, reason="Bad Request"),
                                        "A thread has already been created for this message")
        if not 1 <= len(name) <= 100 or auto_archive_duration not in (60, 1440, 4320, 10080):
            raise discord.HTTPException(SimpleNamespace(status=400, reason="Bad Request"), "Invalid Form Body")
        return self.world.add_channel(self.id, type=discord.ChannelType.public_thread, parent_id=self.channel.id,
                                      name=name, auto_archive_duration=auto_archive_duration)

    def custom_ids(self) -> list[str]:
        return [item.custom_id for item in self.view.children] if self.view else []


@dataclass
class FakeMember:
    id: int
    display_name: str

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"


class FakeResponse:
    """discord.InteractionResponse: one initial response per interaction."""

    def __init__(self, interaction: FakeInteraction):
        self._interaction = interaction
        self._done = False

    def is_done(self) -> bool:
        return self._done

    async def defer(self, *, ephemeral: bool = False, thinking: bool = False) -> None:
        if self._done:
            raise AssertionError("the interaction was already answered")
        self._done = True
        self._interaction.events.append(("defer", {"ephemeral": ephemeral, "thinking": thinking}))
        self._interaction.deferred_ephemeral = ephemeral
        self._interaction.original_state = "thinking"


class FakeFollowup:
    """discord.Webhook as Interaction.followup."""

    def __init__(self, interaction: FakeInteraction):
        self._interaction = interaction

    async def send(self, content: str | None = None, *, embeds: list[discord.Embed] | None = None,
                   view: discord.ui.View | None = None, ephemeral: bool = False, wait: bool = False) -> FakeMessage:
        interaction = self._interaction
        if not interaction.response.is_done():
            raise AssertionError("a followup before the initial response")
        interaction.raise_if_failing("followup.send")
        if interaction.original_state == "thinking":
            # Deprecated on Discord: the first followup after a deferral becomes the
            # deferred message itself, with the deferral's visibility.
            message = interaction.show_original(content, embeds, view)
        else:
            message = interaction.new_message(content, embeds, view, ephemeral)
        interaction.events.append(("followup", message))
        return message


class FakeInteraction:
    """discord.Interaction for a slash command or a button click."""

    def __init__(self, client: discord.Client, world: FakeDiscord, channel: FakeChannel, user_id: int = 7,
                 name: str = "bob", manager: bool = False, message: FakeMessage | None = None,
                 guild_id: int | None = GUILD_ID):
        self.client = client
        self.world = world
        self.guild_id = guild_id
        self.channel = channel
        self.channel_id = channel.id
        self.user = FakeMember(user_id, name)
        self.permissions = discord.Permissions(manage_channels=manager)
        self.message = message
        self.response = FakeResponse(self)
        self.followup = FakeFollowup(self)
        self.events: list[tuple[str, Any]] = []
        self.deferred_ephemeral = False
        # The original response: "none" before a deferral, "thinking" after it, "shown"
        # once it is the answer (`original`), "deleted".
        self.original_state = "none"
        self.original: FakeMessage | None = None
        self._failures: dict[str, list[Exception]] = {}

    def fail(self, call: str, error: Exception, times: int = 1) -> None:
        """The next `times` calls of `call` ("edit_original_response", "followup.send",
        "delete_original_response") raise `error` and change nothing."""
        self._failures.setdefault(call, []).extend([error] * times)

    def raise_if_failing(self, call: str) -> None:
        if self._failures.get(call):
            self.events.append(("failed", call))
            raise self._failures[call].pop(0)

    async def edit_original_response(self, *, content: str | None = None, embeds: list[discord.Embed] | None = None,
                                     view: discord.ui.View | None = None) -> FakeMessage:
        self.raise_if_failing("edit_original_response")
        if self.original_state == "thinking":
            message = self.show_original(content, embeds, view)
        elif self.original_state == "shown":
            message = await self.original.edit(content=content, embeds=embeds, view=view)
        else:
            raise not_found("Unknown Message")
        self.events.append(("edit_original", message))
        return message

    async def delete_original_response(self) -> None:
        self.raise_if_failing("delete_original_response")
        if self.original_state not in ("thinking", "shown"):
            raise not_found("Unknown Message")
        if self.original is not None and self.original in self.channel.messages:
            self.channel.messages.remove(self.original)
        self.original_state = "deleted"
        self.events.append(("delete_original", None))

    def show_original(self, content: str | None, embeds: list[discord.Embed] | None,
                      view: discord.ui.View | None) -> FakeMessage:
        """The "thinking…" placeholder becomes this message, as visible as the deferral."""
        self.original = self.new_message(content, embeds, view, self.deferred_ephemeral)
        self.original_state = "shown"
        return self.original

    def new_message(self, content: str | None, embeds: list[discord.Embed] | None, view: discord.ui.View | None,
                    ephemeral: bool) -> FakeMessage:
        if ephemeral:
            refuse_invalid(content, embeds, view)
            return FakeMessage(self.world, self.channel, self.world.new_id(), content, list(embeds or []), view,
                               ephemeral=True)
        return self.channel.post(content, embeds or [], view)

    # --- what the member saw -----------------------------------------------------------

    def thinking(self) -> bool:
        """Whether the member still sees "paperclub is thinking…"."""
        return self.original_state == "thinking"

    def sent(self) -> list[FakeMessage]:
        """Every message the bot answered with, once each, in order (deleted ones too)."""
        seen: list[FakeMessage] = []
        for kind, message in self.events:
            if kind in ("followup", "edit_original") and all(message is not m for m in seen):
                seen.append(message)
        return seen

    def public(self) -> list[FakeMessage]:
        return [m for m in self.sent() if not m.ephemeral]

    def private(self) -> list[FakeMessage]:
        return [m for m in self.sent() if m.ephemeral]

    def text(self) -> str:
        return "\n".join(m.content or "" for m in self.sent())

"""A fake Discord for tests: the REST API and the gateway on 127.0.0.1, port 0.

Just enough of Discord for discord.py's `Client.start(token)` to log in, connect to the
gateway and become ready, and for paperclub to post: every answer has the fields
discord.py reads, shaped as Discord's API reference shows them (sections named below).
It keeps what the bot posted, edited and opened for the test to look at. Point the bot
at it with `adapters.discord.endpoint.use_api_url(fake.api_url)` or DISCORD_API_URL.

REST, under /api/v10, with `Authorization: Bot <token>` checked (401 otherwise):
  GET   /gateway, /gateway/bot             Topics > Gateway: Get Gateway (Bot)
  GET   /users/@me                         Resources > User: Get Current User
  GET   /oauth2/applications/@me           Topics > OAuth2: Get Current Bot Application
  GET   /channels/{id}                     Resources > Channel: Get Channel (threads too)
  POST  /channels/{id}/messages            Resources > Message: Create Message
  PATCH /channels/{id}/messages/{id}       Resources > Message: Edit Message
  POST  /channels/{id}/messages/{id}/threads   Resources > Channel: Start Thread from Message
  POST  /interactions/{id}/{token}/callback    Interactions > Receiving and Responding: Create
                                               Interaction Response (with_response)
  PATCH /webhooks/{app id}/{token}/messages/@original   ... Edit Original Interaction Response
  POST  /webhooks/{app id}/{token}                      ... Create Followup Message
Anything else answers 404 and is kept in `unhandled`, so a test notices what the bot
asked that the fake does not know. A message Discord would refuse is refused the same way
(400, code 50035 Invalid Form Body, the errors by field): text over 2,000 characters, an
embed past its limits (Resources > Message: Embed Limits, the 6,000 characters over all
of a message's embeds included), a url that is not a well-formed http(s) URL, more
components than Discord takes. `refuse(channel_id, status, code)` makes a channel answer
every post with an error, as a channel the bot lost access to does.

Gateway, at /gateway (Topics > Gateway, Gateway Events): HELLO, then READY after
IDENTIFY (the guild unavailable, then its GUILD_CREATE with channels and threads),
HEARTBEAT_ACK for each HEARTBEAT, RESUMED for a RESUME of a session it knows
(INVALID_SESSION otherwise), THREAD_CREATE and CHANNEL_CREATE as things appear, and
close code 4004 for a wrong token; MESSAGE_REACTION_ADD / MESSAGE_REACTION_REMOVE when a
test says a member reacted (`react`), shaped as Gateway Events: Message Reaction Add shows;
INTERACTION_CREATE for a message command a member used (`message_command`: Interactions >
Receiving and Responding, Interaction Object, with the target message in `resolved`).
Frames are zlib-stream compressed when the client asks for it (discord.py does), as
Discord does; plain text otherwise.

The server runs on its own event loop in a background thread; the test's thread reads
what it recorded through the properties and `wait_for_*` methods, which take a lock.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from aiohttp import WSMsgType, web

TOKEN = "fake-discord-bot-token-not-a-real-one"
# Snowflakes of the right size (from 2023); a bot's user id is its application's id.
BOT_USER_ID = 1_100_000_000_000_000_001
APPLICATION_ID = BOT_USER_ID
GUILD_ID = 1_100_000_000_000_000_100
CHANNEL_ID = 1_100_000_000_000_000_200
API_PREFIX = "/api/v10"
DISCORD_EPOCH_MS = 1_420_070_400_000
HEARTBEAT_INTERVAL_MS = 41_250  # what Discord sends in HELLO

# Gateway opcodes and close codes (Topics > Opcodes and Status Codes).
DISPATCH, HEARTBEAT, IDENTIFY, RESUME, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 0, 1, 2, 6, 9, 10, 11
AUTHENTICATION_FAILED = 4004
# JSON error codes.
UNKNOWN_CHANNEL, UNKNOWN_MESSAGE, THREAD_EXISTS = 10003, 10008, 160004
MISSING_ACCESS, MISSING_PERMISSIONS, INVALID_FORM_BODY = 50001, 50013, 50035
ERROR_MESSAGES = {
    UNKNOWN_CHANNEL: "Unknown Channel", MISSING_ACCESS: "Missing Access",
    MISSING_PERMISSIONS: "Missing Permissions", 0: "",
}
# Resources > Message: Embed Limits, and Create Message's own.
CONTENT_MAX, EMBEDS_MAX, EMBEDS_TOTAL_MAX = 2000, 10, 6000
EMBED_TEXT_LIMITS = {"title": 256, "description": 4096}
FIELDS_MAX, FIELD_NAME_MAX, FIELD_VALUE_MAX, FOOTER_MAX, AUTHOR_MAX = 25, 256, 1024, 2048, 256
URL_MAX = 2048
ROWS_MAX, ROW_ITEMS_MAX, CUSTOM_ID_MAX, LABEL_MAX = 5, 5, 100, 80
# A well-formed URL as RFC 3986 has it: http(s), a host, then only unreserved characters,
# sub-delims, ":@/?#" and complete percent escapes (no space, no raw Unicode).
WELL_FORMED_URL = re.compile(
    r"https?://[A-Za-z0-9.\-]+(?::\d{1,5})?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{2})*"
    r"|https?://\[[0-9A-Fa-f:.]+\](?::\d{1,5})?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{2})*"
)
GUILD_TEXT, PUBLIC_THREAD = 0, 11
APPLICATION_COMMAND, MESSAGE_COMMAND, EPHEMERAL = 2, 3, 1 << 6
# Permissions (Topics > Permissions): what a member has in the channel, as interactions carry it.
VIEW_CHANNEL, SEND_MESSAGES, MANAGE_CHANNELS = 1 << 10, 1 << 11, 1 << 4


@dataclass
class PostedMessage:
    """A message as the channel now shows it (edits change it; `edits` lists them)."""

    channel_id: int
    id: int
    content: str
    embeds: list[dict]
    components: list[dict]
    payload: dict  # the JSON body the bot sent
    # Set once the fake has answered: a message is in the channel as soon as its POST
    # arrives, and with `post_delay` the answer comes that much later.
    answered: bool = False

    def custom_ids(self) -> list[str]:
        return [c["custom_id"] for row in self.components for c in row.get("components", []) if "custom_id" in c]


@dataclass
class Edit:
    channel_id: int
    message_id: int
    payload: dict


@dataclass
class OpenedThread:
    """A thread started from a message: Discord gives it the message's id."""

    id: int
    parent_id: int
    name: str
    auto_archive_duration: int


@dataclass
class InteractionAnswer:
    """How the bot answered one interaction: its callback (a deferral: type 5, flags 64 for
    a private one), then the original response as edited, and any followups."""

    id: int
    token: str
    callbacks: list[dict] = dataclasses.field(default_factory=list)
    original: dict | None = None
    followups: list[dict] = dataclasses.field(default_factory=list)

    @property
    def ephemeral(self) -> bool:
        return any((c.get("data") or {}).get("flags", 0) & EPHEMERAL for c in self.callbacks)


@dataclass
class _Session:
    id: str
    shard: list[int] | None
    seq: int = 0


@dataclass
class _Connection:
    """One gateway websocket; `session` once it has identified or resumed."""

    ws: web.WebSocketResponse
    zlib_stream: Any  # a zlib compressor when the client asked for compress=zlib-stream
    session: _Session | None = None

    async def send(self, payload: dict) -> None:
        text = json.dumps(payload)
        if self.zlib_stream is None:
            await self.ws.send_str(text)
        else:
            # One shared zlib context for the whole connection, each message ending in a
            # sync flush (0000ffff): what discord.py's zlib-stream decompressor expects.
            data = self.zlib_stream.compress(text.encode()) + self.zlib_stream.flush(zlib.Z_SYNC_FLUSH)
            await self.ws.send_bytes(data)

    async def dispatch(self, event: str, data: dict) -> None:
        assert self.session is not None
        self.session.seq += 1
        await self.send({"op": DISPATCH, "t": event, "s": self.session.seq, "d": data})


def _json(body: dict, status: int = 200) -> web.Response:
    # Exactly "application/json", as Discord sends it: discord.py reads any other content
    # type (even with "; charset=utf-8", which aiohttp's json_response adds) as plain text.
    return web.Response(body=json.dumps(body).encode(), status=status, headers={"Content-Type": "application/json"})


def _error(status: int, message: str, code: int = 0) -> web.Response:
    # Discord's JSON error body (Topics > Opcodes and Status Codes: JSON error codes).
    return _json({"message": message, "code": code}, status)


def _form_error(errors: dict) -> web.Response:
    # Create/Edit Message refused: Discord names each bad field in `errors`, as discord.py
    # shows it ("In embeds.0.url: Not a well formed URL.").
    return _json({"message": "Invalid Form Body", "code": INVALID_FORM_BODY, "errors": errors}, 400)


def _problem(code: str, message: str) -> dict:
    return {"_errors": [{"code": code, "message": message}]}


def _too_long(limit: int) -> dict:
    return _problem("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def message_errors(payload: dict) -> dict:
    """What Discord would refuse in a Create or Edit Message body, by field; {} if nothing."""
    errors: dict[str, Any] = {}
    if len(payload.get("content") or "") > CONTENT_MAX:
        errors["content"] = _too_long(CONTENT_MAX)
    embeds = payload.get("embeds") or []
    if len(embeds) > EMBEDS_MAX:
        errors["embeds"] = _too_long(EMBEDS_MAX)
    embed_errors = {str(i): e for i, e in enumerate(map(_embed_errors, embeds)) if e}
    if embed_errors:
        errors["embeds"] = embed_errors
    elif sum(map(_embed_size, embeds)) > EMBEDS_TOTAL_MAX:
        errors["embeds"] = _problem("MAX_EMBED_SIZE_EXCEEDED",
                                    f"Embed size exceeds maximum size of {EMBEDS_TOTAL_MAX}")
    component_errors = _component_errors(payload.get("components") or [])
    if component_errors:
        errors["components"] = component_errors
    return errors


def _embed_size(embed: dict) -> int:
    fields = embed.get("fields") or []
    return (len(embed.get("title") or "") + len(embed.get("description") or "")
            + sum(len(f.get("name") or "") + len(f.get("value") or "") for f in fields)
            + len((embed.get("footer") or {}).get("text") or "") + len((embed.get("author") or {}).get("name") or ""))


def _embed_errors(embed: dict) -> dict:
    errors: dict[str, Any] = {}
    for key, limit in EMBED_TEXT_LIMITS.items():
        if len(embed.get(key) or "") > limit:
            errors[key] = _too_long(limit)
    for key, url in (("url", embed.get("url")), ("author.url", (embed.get("author") or {}).get("url"))):
        if url is not None and (len(url) > URL_MAX or not WELL_FORMED_URL.fullmatch(url)):
            errors[key] = _problem("URL_TYPE_INVALID_URL", "Not a well formed URL.")
    fields = embed.get("fields") or []
    if len(fields) > FIELDS_MAX:
        errors["fields"] = _too_long(FIELDS_MAX)
    for i, field in enumerate(fields):
        for key, limit in (("name", FIELD_NAME_MAX), ("value", FIELD_VALUE_MAX)):
            if not field.get(key) or len(field[key]) > limit:
                errors[f"fields.{i}.{key}"] = _too_long(limit)
    if len((embed.get("footer") or {}).get("text") or "") > FOOTER_MAX:
        errors["footer.text"] = _too_long(FOOTER_MAX)
    if len((embed.get("author") or {}).get("name") or "") > AUTHOR_MAX:
        errors["author.name"] = _too_long(AUTHOR_MAX)
    return errors


def _component_errors(rows: list[dict]) -> dict:
    errors: dict[str, Any] = {}
    if len(rows) > ROWS_MAX:
        errors["_errors"] = _too_long(ROWS_MAX)["_errors"]
    for r, row in enumerate(rows):
        items = row.get("components") or []
        if len(items) > ROW_ITEMS_MAX:
            errors[f"{r}.components"] = _too_long(ROW_ITEMS_MAX)
        for i, item in enumerate(items):
            if len(item.get("custom_id") or "") > CUSTOM_ID_MAX:
                errors[f"{r}.components.{i}.custom_id"] = _too_long(CUSTOM_ID_MAX)
            if len(item.get("label") or "") > LABEL_MAX:
                errors[f"{r}.components.{i}.label"] = _too_long(LABEL_MAX)
    return errors


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class FakeDiscordAPI:
    """Start with `with FakeDiscordAPI() as fake:`; then `fake.api_url` for the bot.

    The guild `guild_id` starts with the text channel `channel_ids` (add more with
    `add_channel`); `token` is the only bot token it accepts; `shards` is the shard count
    GET /gateway/bot recommends. `post_delay` (seconds) holds every Create Message
    answer back, for a test to stop the bot mid-post.
    """

    def __init__(self, token: str = TOKEN, guild_id: int = GUILD_ID,
                 channel_ids: tuple[int, ...] = (CHANNEL_ID,), shards: int = 1):
        self.token = token
        self.guild_id = guild_id
        self.shards = shards
        self.post_delay = 0.0
        self._refusals: dict[int, tuple[int, int]] = {}  # channel id -> (HTTP status, JSON code)
        # Reentrant: a `wait_until` condition runs with the lock held and may read the
        # properties, which take it too.
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._channels: dict[int, dict] = {}  # id -> channel object (text channels and threads)
        self._messages: list[PostedMessage] = []
        self._edits: list[Edit] = []
        self._threads: list[OpenedThread] = []
        self._identified: list[dict] = []  # IDENTIFY payloads, token removed
        self._resumed: list[str] = []  # session ids resumed
        self._requests: list[str] = []  # "METHOD /path" of every REST call, as it arrives
        self._unhandled: list[str] = []
        self._interactions: dict[str, InteractionAnswer] = {}  # by token
        self._sessions: dict[str, _Session] = {}
        self._connections: list[_Connection] = []  # the open gateway websockets
        self._sequence = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self._startup_error: BaseException | None = None
        self.port = 0
        for channel_id in channel_ids:
            self._channels[channel_id] = self._text_channel(channel_id)

    # --- running -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return self.base_url + API_PREFIX

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def __enter__(self) -> FakeDiscordAPI:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name="fake-discord",
                                        daemon=True)
        self._thread.start()
        self._started.wait(10.0)
        if self._startup_error is not None or not self.port:
            raise RuntimeError("the fake Discord did not start") from self._startup_error
        return self

    def __exit__(self, *_exc) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(10.0)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/{path:.*}", self._rest)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        try:
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = runner.addresses[0][1]
        except BaseException as problem:
            self._startup_error = problem
            self._started.set()
            await runner.cleanup()
            raise
        self._started.set()
        try:
            await self._stopping.wait()
        finally:
            # Discord going away: 1001, which discord.py would answer by reconnecting.
            for connection in list(self._connections):
                await connection.ws.close(code=1001)
            await runner.cleanup()

    # --- what the bot did (thread-safe) ------------------------------------------------------

    @property
    def messages(self) -> list[PostedMessage]:
        with self._lock:
            return list(self._messages)

    @property
    def edits(self) -> list[Edit]:
        with self._lock:
            return list(self._edits)

    @property
    def threads(self) -> list[OpenedThread]:
        with self._lock:
            return list(self._threads)

    @property
    def identified(self) -> list[dict]:
        """Each IDENTIFY the gateway accepted (intents, shard, properties), without the token."""
        with self._lock:
            return list(self._identified)

    @property
    def resumed(self) -> list[str]:
        with self._lock:
            return list(self._resumed)

    @property
    def requests(self) -> list[str]:
        with self._lock:
            return list(self._requests)

    @property
    def unhandled(self) -> list[str]:
        with self._lock:
            return list(self._unhandled)

    @property
    def connected(self) -> int:
        """Gateway connections open now that have identified or resumed."""
        with self._lock:
            return sum(1 for c in self._connections if c.session is not None and not c.ws.closed)

    def wait_until(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Whether `condition()` (called with the lock held) came true within `timeout`."""
        with self._changed:
            return self._changed.wait_for(condition, timeout)

    def wait_for_messages(self, count: int = 1, timeout: float = 10.0) -> list[PostedMessage]:
        """The posted messages once there are `count`; whatever there is when time is up."""
        self.wait_until(lambda: len(self._messages) >= count, timeout)
        return self.messages

    def wait_for_identify(self, count: int = 1, timeout: float = 10.0) -> list[dict]:
        """The IDENTIFY payloads once `count` clients have identified (READY is on its way)."""
        self.wait_until(lambda: len(self._identified) >= count, timeout)
        return self.identified

    # --- the guild -----------------------------------------------------------------------------

    def add_channel(self, channel_id: int, name: str | None = None) -> None:
        """A text channel in the guild; connected clients get its CHANNEL_CREATE."""
        channel = self._text_channel(channel_id, name)
        with self._changed:
            self._channels[channel_id] = channel
            self._changed.notify_all()
        if self._loop is not None and not self._loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._dispatch_all("CHANNEL_CREATE", channel), self._loop)

    def react(self, user_id: int, channel_id: int, message_id: int, emoji: str, added: bool = True,
              emoji_id: int | None = None, author_id: int | None = None) -> None:
        """A member adds (or removes) a reaction: MESSAGE_REACTION_ADD (or _REMOVE) to every
        connected client. `emoji` is the Unicode emoji, or a custom emoji's name with its
        `emoji_id`. On an add Discord names the message's author: the bot, for a message it
        posted here, unless `author_id` says otherwise."""
        data: dict[str, Any] = {
            "user_id": str(user_id), "channel_id": str(channel_id), "message_id": str(message_id),
            "guild_id": str(self.guild_id),
            "emoji": {"id": str(emoji_id) if emoji_id else None, "name": emoji},
            "burst": False, "type": 0,  # a normal reaction, not a super reaction
        }
        if added:
            with self._lock:
                ours = any(m.id == message_id for m in self._messages)
            author = author_id or (BOT_USER_ID if ours else None)
            data.update(member=self._member(user_id), burst_colors=[],
                        **({"message_author_id": str(author)} if author else {}))
        event = "MESSAGE_REACTION_ADD" if added else "MESSAGE_REACTION_REMOVE"
        asyncio.run_coroutine_threadsafe(self._dispatch_all(event, data), self._loop).result(5.0)

    def message_command(self, name: str, user_id: int, channel_id: int, content: str,
                        embeds: list[dict] | None = None, manager: bool = False) -> InteractionAnswer:
        """A member used the message command `name` on a message (by another member) with
        this content: INTERACTION_CREATE, as Discord sends it. Returns the record of the
        bot's answer, filled in as it comes (`wait_until`)."""
        interaction_id, message_id = self._snowflake(), self._snowflake()
        token = "aW50ZXJhY3Rpb24" + uuid.uuid4().hex  # opaque, as Discord's are
        author = self._member(1_100_000_000_000_000_777)["user"]
        target = {**self._message_object(PostedMessage(channel_id, message_id, content, embeds or [], [], {})),
                  "author": author}
        permissions = VIEW_CHANNEL | SEND_MESSAGES | (MANAGE_CHANNELS if manager else 0)
        with self._lock:
            channel = dict(self._channels[channel_id])
            self._interactions[token] = answer = InteractionAnswer(interaction_id, token)
        data = {
            "id": str(interaction_id), "application_id": str(APPLICATION_ID), "type": APPLICATION_COMMAND,
            "token": token, "version": 1, "guild_id": str(self.guild_id), "channel_id": str(channel_id),
            "channel": channel, "member": {**self._member(user_id), "permissions": str(permissions)},
            "app_permissions": str(VIEW_CHANNEL | SEND_MESSAGES), "locale": "en-US", "guild_locale": "en-US",
            "entitlements": [], "authorizing_integration_owners": {"0": str(self.guild_id)}, "context": 0,
            "attachment_size_limit": 10_485_760,
            "data": {"id": str(self._snowflake()), "name": name, "type": MESSAGE_COMMAND,
                     "target_id": str(message_id), "resolved": {"messages": {str(message_id): target}}},
        }
        asyncio.run_coroutine_threadsafe(self._dispatch_all("INTERACTION_CREATE", data), self._loop).result(5.0)
        return answer

    def _member(self, user_id: int) -> dict:
        # Resources > Guild: Guild Member Object.
        user = {"id": str(user_id), "username": f"member{user_id % 1000}", "discriminator": "0",
                "global_name": None, "avatar": None, "bot": False}
        return {"user": user, "roles": [], "joined_at": _now(), "deaf": False, "mute": False, "flags": 0}

    def refuse(self, channel_id: int, status: int, code: int = 0) -> None:
        """Answer every Create Message in the channel with this error from now on (403 with
        50001 Missing Access, 429, 503, ...), as Discord does for a channel the bot lost."""
        with self._lock:
            self._refusals[channel_id] = (status, code)

    def _refusal(self, channel_id: int) -> web.Response | None:
        with self._lock:
            refusal = self._refusals.get(channel_id)
        if refusal is None:
            return None
        status, code = refusal
        if status == 429:
            # Without a Via header discord.py reads this as Cloudflare's ban and stops at once.
            return _json({"message": "You are being rate limited.", "retry_after": 60.0, "global": False,
                          "code": code}, 429)
        return _error(status, ERROR_MESSAGES.get(code, f"{status} error"), code)

    def drop_gateway(self, code: int = 4000) -> None:
        """Close every gateway connection with `code` (4000, "unknown error", makes
        discord.py reconnect and RESUME at the READY's resume_gateway_url)."""
        async def drop():
            for connection in list(self._connections):
                await connection.ws.close(code=code)
        asyncio.run_coroutine_threadsafe(drop(), self._loop).result(5.0)

    def _text_channel(self, channel_id: int, name: str | None = None) -> dict:
        # Resources > Channel: Channel Object, Example Guild Text Channel.
        return {
            "id": str(channel_id), "type": GUILD_TEXT, "guild_id": str(self.guild_id),
            "name": name or f"papers-{channel_id % 1000}", "position": len(self._channels),
            "permission_overwrites": [], "parent_id": None, "topic": None, "nsfw": False,
            "last_message_id": None, "rate_limit_per_user": 0, "default_auto_archive_duration": 1440,
        }

    def _snowflake(self) -> int:
        # Topics > Snowflakes: milliseconds since 2015 above 22 bits of worker/process/increment.
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) | (next(self._sequence) & 0x3FFFFF)

    def _bot_user(self) -> dict:
        # Resources > User: User Object (Get Current User adds the account fields).
        return {
            "id": str(BOT_USER_ID), "username": "paperclub", "discriminator": "0", "global_name": None,
            "avatar": None, "bot": True, "system": False, "flags": 0, "public_flags": 0,
            "mfa_enabled": False, "verified": True, "locale": "en-US", "premium_type": 0,
        }

    def _guild(self) -> dict:
        # Gateway Events: Guild Create (a Guild Object with channels, threads, members).
        with self._lock:
            channels = [c for c in self._channels.values() if c["type"] == GUILD_TEXT]
            threads = [c for c in self._channels.values() if c["type"] == PUBLIC_THREAD]
        everyone = {"id": str(self.guild_id), "name": "@everyone", "permissions": "1024", "position": 0,
                    "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
        bot_member = {"user": self._bot_user(), "roles": [], "joined_at": _now(), "deaf": False,
                      "mute": False, "flags": 0}
        return {
            "id": str(self.guild_id), "name": "Reading group", "icon": None, "owner_id": "1",
            "unavailable": False, "large": False, "member_count": 2, "joined_at": _now(),
            "verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
            "mfa_level": 0, "nsfw_level": 0, "premium_tier": 0, "preferred_locale": "en-US",
            "features": [], "roles": [everyone], "emojis": [], "stickers": [], "voice_states": [],
            "members": [bot_member], "presences": [], "channels": channels, "threads": threads,
            "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
        }

    def _in_shard(self, shard: list[int] | None) -> bool:
        # Topics > Gateway: Sharding formula.
        return shard is None or (self.guild_id >> 22) % shard[1] == shard[0]

    # --- REST --------------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        with self._changed:
            self._requests.append(f"{request.method} {path}")
            self._changed.notify_all()
        # (method, path pattern, needs the bot token, handler); Get Gateway is the one
        # call Discord answers without a token.
        routes: list[tuple[str, str, bool, Callable[..., Any]]] = [
            ("GET", r"/gateway", False, self._get_gateway),
            ("GET", r"/gateway/bot", True, self._get_gateway_bot),
            ("GET", r"/users/@me", True, self._get_me),
            ("GET", r"/oauth2/applications/@me", True, self._get_application),
            ("GET", r"/channels/(\d+)", True, self._get_channel),
            ("POST", r"/channels/(\d+)/messages", True, self._create_message),
            ("PATCH", r"/channels/(\d+)/messages/(\d+)", True, self._edit_message),
            ("POST", r"/channels/(\d+)/messages/(\d+)/threads", True, self._start_thread),
            # The interaction's token is its authorisation: no bot token on these.
            ("POST", r"/interactions/(\d+)/([\w.\-]+)/callback", False, self._interaction_callback),
            ("PATCH", r"/webhooks/(\d+)/([\w.\-]+)/messages/@original", False, self._edit_original),
            ("POST", r"/webhooks/(\d+)/([\w.\-]+)", False, self._followup),
        ]
        if path.startswith(API_PREFIX + "/"):
            route = path[len(API_PREFIX):]
            for method, pattern, authenticated, handler in routes:
                match = re.fullmatch(pattern, route)
                if match and request.method == method:
                    if authenticated and request.headers.get("Authorization") != f"Bot {self.token}":
                        return _error(401, "401: Unauthorized")
                    return await handler(request, *(int(g) if g.isdigit() else g for g in match.groups()))
        with self._changed:
            self._unhandled.append(f"{request.method} {path}")
            self._changed.notify_all()
        return _error(404, "404: Not Found")

    async def _get_gateway(self, _request: web.Request) -> web.Response:
        return _json({"url": self.gateway_url})

    async def _get_gateway_bot(self, _request: web.Request) -> web.Response:
        return _json({
            "url": self.gateway_url, "shards": self.shards,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14_400_000,
                                    "max_concurrency": 1},
        })

    async def _get_me(self, _request: web.Request) -> web.Response:
        return _json(self._bot_user())

    async def _get_application(self, _request: web.Request) -> web.Response:
        # Resources > Application: Application Object.
        return _json({
            "id": str(APPLICATION_ID), "name": "paperclub", "icon": None, "description": "",
            "bot_public": True, "bot_require_code_grant": False, "verify_key": "0" * 64,
            "owner": {**self._bot_user(), "id": "1", "username": "owner", "bot": False},
            "flags": 0, "team": None, "bot": self._bot_user(), "redirect_uris": [],
            "interactions_endpoint_url": None,
        })

    async def _get_channel(self, _request: web.Request, channel_id: int) -> web.Response:
        with self._lock:
            channel = self._channels.get(channel_id)
        if channel is None:
            return _error(404, "Unknown Channel", UNKNOWN_CHANNEL)
        return _json(channel)

    async def _create_message(self, request: web.Request, channel_id: int) -> web.Response:
        payload = await request.json()
        refused = self._refusal(channel_id)
        if refused is not None:
            return refused
        if errors := message_errors(payload):
            return _form_error(errors)
        with self._changed:
            if channel_id not in self._channels:
                return _error(404, "Unknown Channel", UNKNOWN_CHANNEL)
            message = PostedMessage(channel_id, self._snowflake(), payload.get("content") or "",
                                    payload.get("embeds") or [], payload.get("components") or [], payload)
            self._messages.append(message)
            self._channels[channel_id]["last_message_id"] = str(message.id)
            self._changed.notify_all()
        if self.post_delay:
            await asyncio.sleep(self.post_delay)
        with self._changed:
            message.answered = True
            self._changed.notify_all()
        return _json(self._message_object(message))

    async def _edit_message(self, request: web.Request, channel_id: int, message_id: int) -> web.Response:
        payload = await request.json()
        if errors := message_errors(payload):
            return _form_error(errors)
        with self._changed:
            message = self._find_message(channel_id, message_id)
            if message is None:
                return _error(404, "Unknown Message", UNKNOWN_MESSAGE)
            # Edit Message: fields left out stay as they were.
            if "content" in payload:
                message.content = payload["content"] or ""
            if "embeds" in payload:
                message.embeds = payload["embeds"] or []
            if "components" in payload:
                message.components = payload["components"] or []
            self._edits.append(Edit(channel_id, message_id, payload))
            self._changed.notify_all()
            answer = self._message_object(message, edited=True)
        return _json(answer)

    async def _start_thread(self, request: web.Request, channel_id: int, message_id: int) -> web.Response:
        payload = await request.json()
        with self._changed:
            if self._find_message(channel_id, message_id) is None:
                return _error(404, "Unknown Message", UNKNOWN_MESSAGE)
            if message_id in self._channels:
                return _error(400, "A thread has already been created for this message", THREAD_EXISTS)
            duration = payload.get("auto_archive_duration") or 1440
            # Resources > Channel: Channel Object, Example Thread Channel.
            thread = {
                "id": str(message_id), "type": PUBLIC_THREAD, "guild_id": str(self.guild_id),
                "parent_id": str(channel_id), "owner_id": str(BOT_USER_ID), "name": payload["name"],
                "last_message_id": None, "rate_limit_per_user": payload.get("rate_limit_per_user") or 0,
                "message_count": 0, "member_count": 1, "total_message_sent": 0, "flags": 0,
                "thread_metadata": {"archived": False, "auto_archive_duration": duration, "locked": False,
                                    "archive_timestamp": _now(), "create_timestamp": _now()},
            }
            self._channels[message_id] = thread
            self._threads.append(OpenedThread(message_id, channel_id, payload["name"], duration))
            self._changed.notify_all()
        # Discord also tells the gateway (Gateway Events: Thread Create, newly_created).
        await self._dispatch_all("THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread, status=201)

    async def _interaction_callback(self, request: web.Request, interaction_id: int, token: str) -> web.Response:
        body = await request.json()
        with self._changed:
            answer = self._interactions.get(token)
            if answer is None or answer.id != interaction_id:
                return _error(404, "Unknown interaction", 10062)
            if answer.callbacks:
                return _error(400, "Interaction has already been acknowledged.", 40060)
            answer.callbacks.append(body)
            self._changed.notify_all()
        # With ?with_response: an Interaction Callback Response Object.
        flags = (body.get("data") or {}).get("flags", 0)
        return _json({"interaction": {"id": str(interaction_id), "type": APPLICATION_COMMAND,
                                      "response_message_loading": body.get("type") == 5,
                                      "response_message_ephemeral": bool(flags & EPHEMERAL)},
                      "resource": {"type": body.get("type")}})

    async def _edit_original(self, request: web.Request, _application_id: int, token: str) -> web.Response:
        payload = await request.json()
        if errors := message_errors(payload):
            return _form_error(errors)
        with self._changed:
            answer = self._interactions.get(token)
            if answer is None or not answer.callbacks:
                return _error(404, "Unknown Webhook", 10015)
            answer.original = {**(answer.original or {}), **payload}
            self._changed.notify_all()
            message = PostedMessage(0, answer.id, answer.original.get("content") or "",
                                    answer.original.get("embeds") or [], answer.original.get("components") or [],
                                    answer.original, answered=True)
        return _json(self._message_object(message, edited=True))

    async def _followup(self, request: web.Request, _application_id: int, token: str) -> web.Response:
        payload = await request.json()
        if errors := message_errors(payload):
            return _form_error(errors)
        with self._changed:
            answer = self._interactions.get(token)
            if answer is None or not answer.callbacks:
                return _error(404, "Unknown Webhook", 10015)
            answer.followups.append(payload)
            self._changed.notify_all()
            message = PostedMessage(0, self._snowflake(), payload.get("content") or "", payload.get("embeds") or [],
                                    payload.get("components") or [], payload, answered=True)
        return _json(self._message_object(message))

    def _find_message(self, channel_id: int, message_id: int) -> PostedMessage | None:
        return next((m for m in self._messages if m.channel_id == channel_id and m.id == message_id), None)

    def _message_object(self, message: PostedMessage, edited: bool = False) -> dict:
        # Resources > Message: Message Object; created_at comes from the snowflake.
        created = datetime.fromtimestamp(((message.id >> 22) + DISCORD_EPOCH_MS) / 1000, timezone.utc)
        return {
            "id": str(message.id), "channel_id": str(message.channel_id), "author": self._bot_user(),
            "content": message.content, "timestamp": created.isoformat(),
            "edited_timestamp": _now() if edited else None, "tts": False, "mention_everyone": False,
            "mentions": [], "mention_roles": [], "attachments": [],
            "embeds": [{"type": "rich", **embed} for embed in message.embeds],
            "components": message.components, "pinned": False, "type": 0, "flags": 0,
        }

    # --- gateway -----------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        compressed = request.query.get("compress") == "zlib-stream"
        connection = _Connection(ws, zlib.compressobj() if compressed else None)
        with self._lock:
            self._connections.append(connection)
        try:
            await connection.send({"op": HELLO, "d": {"heartbeat_interval": HEARTBEAT_INTERVAL_MS},
                                   "s": None, "t": None})
            async for frame in ws:
                if frame.type is not WSMsgType.TEXT:
                    continue
                payload = json.loads(frame.data)
                op, data = payload.get("op"), payload.get("d")
                if op == HEARTBEAT:
                    await connection.send({"op": HEARTBEAT_ACK, "d": None, "s": None, "t": None})
                elif op == IDENTIFY:
                    await self._identify(connection, data)
                elif op == RESUME:
                    await self._resume(connection, data)
                # Presence updates, member requests and the like: accepted, ignored.
        finally:
            with self._changed:
                self._connections.remove(connection)
                self._changed.notify_all()
        return ws

    async def _identify(self, connection: _Connection, data: dict) -> None:
        if data.get("token") != self.token:
            await connection.ws.close(code=AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return
        session = _Session(uuid.uuid4().hex, data.get("shard"))
        with self._changed:
            self._sessions[session.id] = session
            connection.session = session
            self._identified.append({k: v for k, v in data.items() if k != "token"})
            self._changed.notify_all()
        # Gateway Events: Ready. The guilds come unavailable, each followed by its GUILD_CREATE.
        ready = {
            "v": 10, "user": self._bot_user(), "session_id": session.id, "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "guilds": [{"id": str(self.guild_id), "unavailable": True}] if self._in_shard(session.shard)
            else [],
            "application": {"id": str(APPLICATION_ID), "flags": 0},
            "private_channels": [], "relationships": [], "presences": [], "guild_join_requests": [],
        }
        if session.shard is not None:
            ready["shard"] = session.shard
        await connection.dispatch("READY", ready)
        if self._in_shard(session.shard):
            await connection.dispatch("GUILD_CREATE", self._guild())

    async def _resume(self, connection: _Connection, data: dict) -> None:
        if data.get("token") != self.token:
            await connection.ws.close(code=AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return
        session = self._sessions.get(data.get("session_id"))
        if session is None:
            # Not resumable: the client is to IDENTIFY afresh.
            await connection.send({"op": INVALID_SESSION, "d": False, "s": None, "t": None})
            return
        with self._changed:
            connection.session = session
            self._resumed.append(session.id)
            self._changed.notify_all()
        # Nothing was missed (events are only sent to open connections), so nothing to replay.
        await connection.dispatch("RESUMED", {})

    async def _dispatch_all(self, event: str, data: dict) -> None:
        for connection in list(self._connections):
            session = connection.session
            if session is not None and not connection.ws.closed and self._in_shard(session.shard):
                await connection.dispatch(event, data)

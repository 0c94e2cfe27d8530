"""The Slack adapter: `/paper` and button clicks in, Block Kit out, on the real bolt `App`.

It translates and nothing else: a slash command or a click becomes an `Incoming`, the
core answers with a `Reply`, and the reply is rendered (adapters/slack/blocks.py) and
sent the way Slack needs it. Most commands are answered inside the 3-second ack itself;
those the grammar answers later (a channel post, an edit of one, an `add` that fetches)
are acked at once and handed to a pool of their own (`later`), so a slow answer never
holds one of the threads bolt acknowledges requests on; the answer goes back through
response_url or chat.postMessage. The events that say a workspace left (app_uninstalled,
tokens_revoked) switch its channels' schedules off. `SlackServer` runs it in `paperclub
serve` (adapters/runtime.py) over HTTP (waitress, a production WSGI server) or, with
SLACK_APP_TOKEN, over Socket Mode for development; either way a request passes
adapters/slack/edge.py first (signature on the raw bytes, a readable body, once per id).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import replace

from slack_bolt import Ack, App, BoltContext, Respond
from slack_bolt.error import BoltError
from slack_bolt.listener.builtins import TokenRevocationListeners
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import desc, select
from waitress import wasyncore

from adapters.debounce import Debouncer
from adapters.slack.blocks import ACTION_ID_PREFIX, message
from adapters.slack.config import (
    EVENTS_PATH,
    INSTALL_PATH,
    REDIRECT_PATH,
    SlackSettings,
    bot_scopes,
    manifest,
)
from adapters.slack.edge import ActOnce, CheckedSocketModeHandler, SignedOnly, WholeForms
from adapters.slack.managers import Managers, needs_rights
from bot.ops.settings import ConfigError
from bot.app import Services
from bot.core import DATABASE_UNAVAILABLE, PaperClub
from bot.channels.channels import Channels
from bot.grammar import split_command
from bot.messages import ChannelRef, DeliveryRefused, Incoming, Reply, UserRef
from bot.ops.logs import drop_expected
from bot.ops.defaults import DEFAULT_HOST
from bot.messages import Reaction

# `manifest` is here for `paperclub slack manifest`, beside `serve`.
__all__ = [
    "BotClients",
    "Managers",
    "SlackDelivery",
    "SlackListeners",
    "SlackServer",
    "bot_clients",
    "build_app",
    "command_text",
    "manifest",
    "web_client",
]

log = logging.getLogger(__name__)

PLATFORM = "slack"
# The message shortcut "Add to paperclub" (manifest.json features.shortcuts).
ADD_SHORTCUT = "add_to_paperclub"
RATE_LIMIT_RETRIES = 3
HTTP_THREADS = 8
LISTENER_THREADS = 16  # bolt runs each ack and lazy listener on this pool, beside the HTTP thread
LATER_THREADS = 16  # commands answered after their ack (`add` waits up to its budget on pages)
OAUTH_STATE_SECONDS = 600
NOT_INSTALLED = (
    "paperclub is not installed in this workspace any more: a workspace admin can add it again "
    f"from the install page ({INSTALL_PATH} on this app's host)."
)
# Shown once in the reply to a channel's next command, should the app come back.
UNINSTALLED_NOTICE = (
    "The paper of the day stopped here because paperclub was removed from this workspace "
    "(or its access was revoked). Now that it is back, a manager can say `schedule on`."
)
# chat.postMessage errors that will not pass by themselves: the bot lost the workspace or
# the channel (gone, archived, bot not in it, posting restricted), or Slack refuses this
# very message. Retrying later today only collects invalid-request strikes; three days of
# them pause the channel (bot/daily/posts.py). Anything else (ratelimited,
# internal_error, fatal_error, service_unavailable, request_timeout) is retried.
GONE_FOR_GOOD = frozenset({
    "token_revoked", "token_expired", "invalid_auth", "not_authed", "account_inactive",
    "team_access_not_granted", "app_uninstalled", "missing_scope", "no_permission",
    "channel_not_found", "not_in_channel", "is_archived", "restricted_action",
    "restricted_action_read_only_channel", "restricted_action_thread_only_channel",
    "restricted_action_non_threadable_channel", "ekm_access_denied",
    "msg_too_long", "msg_blocks_too_long", "invalid_blocks", "no_text",
})
_ACTION_ID = re.compile("^" + re.escape(ACTION_ID_PREFIX) + r"\d+$")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>")
_EVENT_TS = re.compile(r"([0-9]{1,12})\.([0-9]{1,9})")


def web_client(api_url: str, token: str | None = None) -> WebClient:
    """A Web API client at `api_url` (SLACK_API_URL) that waits out 429s (Retry-After)."""
    return WebClient(
        token=token,
        base_url=api_url,
        retry_handlers=[
            ConnectionErrorRetryHandler(),
            RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


def command_text(raw: str) -> str:
    """What the member typed after /paper. Slack escapes &, < and > and sends links as
    <url|label>; mentions (<@U123|name>) are left as they are: the core reads them."""
    text = _LINK.sub(lambda link: link.group(1), raw)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def event_order(event_ts: object) -> int:
    """An event's `event_ts` ("1700000000.000100", when it happened) in microseconds since
    the epoch: the order the core applies reactions in. An event without a readable one
    (Slack always sends it) is ordered by the time it came."""
    found = _EVENT_TS.fullmatch(event_ts) if isinstance(event_ts, str) else None
    if found is None:
        return time.time_ns() // 1000
    seconds, fraction = found.groups()
    return int(seconds) * 1_000_000 + int(fraction.ljust(6, "0")[:6])


# --- the listeners --------------------------------------------------------------------------


class SlackListeners:
    """The bolt listeners: each builds an `Incoming`, asks the core, and sends the `Reply`."""

    def __init__(
        self,
        core: PaperClub,
        managers: Managers,
        channels: Channels,
        installations: SQLAlchemyInstallationStore | None = None,
        redraws: Debouncer | None = None,
        later: Executor | None = None,
    ):
        self.core = core
        self.managers = managers
        self.channels = channels
        self.installations = installations
        # A burst of reactions on a post is one chat.update (adapters/debounce.py).
        self.redraws = redraws or Debouncer()
        # Where answers after the ack run: never bolt's listener threads, which ack.
        self.later = later or ThreadPoolExecutor(LATER_THREADS, "slack-later")

    def register(self, app: App) -> None:
        app.command("/paper", matchers=[self.answered_later])(self.hand_off_command)
        app.command("/paper")(self.answer_in_ack)
        app.action(_ACTION_ID)(ack=acknowledge, lazy=[self.answer_click])
        app.event("app_uninstalled")(self.workspace_gone)
        app.event("tokens_revoked")(self.workspace_gone)
        app.event("reaction_added")(self.reacted)
        app.event("reaction_removed")(self.reacted)
        # Fetching a paper's metadata may take seconds: acked at once, answered later.
        app.shortcut(ADD_SHORTCUT)(self.hand_off_shortcut)

    def answered_later(self, command: dict) -> bool:
        """The grammar's `answered_later` commands (`next` and `poll` pick over the whole
        corpus and become channel posts, posted through chat.postMessage because votes
        need the message's ts; `vote` edits the voted message; `add` fetches) are acked at
        once and answered by the lazy listener; everything else inside the ack."""
        name = split_command(command_text(command.get("text", "")))[0]
        return name in self.core.commands and self.core.commands[name].answered_later

    def hand_off_command(self, ack: Ack, command: dict, client: WebClient, respond: Respond,
                         context: BoltContext) -> None:
        """Ack now; the answer comes from the `later` pool."""
        ack()
        self._later("answering a command", self.answer_command, command, client, respond, context)

    def hand_off_shortcut(self, ack: Ack, body: dict, client: WebClient, respond: Respond,
                          context: BoltContext) -> None:
        ack()
        self._later("adding from a message", self.add_from_message, body, client, respond, context)

    def _later(self, what: str, answer: Callable, *args) -> None:
        def run() -> None:
            try:
                answer(*args)
            except Exception:  # noqa: BLE001 - a pool swallows it otherwise: the log gets it
                log.exception("%s after the ack failed", what)

        try:
            self.later.submit(run)
        except RuntimeError:  # the pool is shut: the process is stopping
            log.warning("%s: not answered, paperclub is stopping", what)

    def answer_in_ack(self, ack: Ack, command: dict, client: WebClient, context: BoltContext) -> None:
        ack(**_response(self.core.handle(self._command_incoming(command, client, context))))

    def answer_command(
        self, command: dict, client: WebClient, respond: Respond, context: BoltContext
    ) -> None:
        reply = self.core.handle(self._command_incoming(command, client, context))
        self._send(reply, command["channel_id"], client, respond)

    def answer_click(
        self, body: dict, client: WebClient, respond: Respond, context: BoltContext
    ) -> None:
        """Only the actions the core rendered run (core.click): a crafted payload whose
        button names any other command is refused. A vote needs no manager rights; an
        action that may (`discuss N` posts a paper now) gets the clicker's looked up."""
        user = body["user"]  # edge.malformed saw to the shape of these
        channel_id = (body.get("channel") or {}).get("id") or body["container"]["channel_id"]
        value = body["actions"][0].get("value", "")  # the exact command text the button stands for
        channel = _channel(context, channel_id)
        manager = needs_rights(self.core.commands, value) and self.managers.is_manager(
            client, channel.workspace, user["id"]
        )
        incoming = Incoming(
            channel, UserRef(PLATFORM, user["id"], user.get("username") or user.get("name", ""), manager), value
        )
        self._send(self.core.click(incoming), channel_id, client, respond)

    def reacted(self, event: dict, client: WebClient, context: BoltContext) -> None:
        """reaction_added / reaction_removed: a vote when the message is one of the
        channel's posts and the emoji one of the channel's; the post is redrawn once per
        burst. Reactions on other people's messages and the bot's own are ignored before
        any query (`item_user` is the message's author). Bolt runs events on parallel
        threads, so the event's `event_ts` goes with it: the core ignores one older than
        an event it has applied for that emoji (a remove handled before its add)."""
        item, user = event.get("item"), event.get("user")
        if not isinstance(item, dict) or item.get("type") != "message" or not isinstance(user, str):
            return
        channel_id, ts = item.get("channel"), item.get("ts")
        bot = context.bot_user_id
        if not isinstance(channel_id, str) or not isinstance(ts, str) or (bot and user == bot):
            return
        if bot and event.get("item_user") not in (None, bot):
            return
        reaction = Reaction(_channel(context, channel_id), UserRef(PLATFORM, user), ts,
                            str(event.get("reaction", "")), event.get("type") == "reaction_added",
                            event_order(event.get("event_ts")))
        try:
            post_id = self.core.react(reaction)
        except DATABASE_UNAVAILABLE as problem:  # the member's reaction stays; the vote is lost
            log.warning("a Slack reaction in %s was not counted: database unreachable (%s)",
                        channel_id, type(problem).__name__)
            return
        if post_id is not None:
            self.redraws.touch(post_id, lambda: self._show_tally(post_id, channel_id, client))

    def add_from_message(self, body: dict, client: WebClient, respond: Respond, context: BoltContext) -> None:
        """The "Add to paperclub" message shortcut: the papers linked in that message are
        added, and the member alone gets their cards with the buttons (response_url)."""
        user = body["user"]  # edge.malformed saw to the shape of these
        channel = _channel(context, body["channel"]["id"])
        text = message_text(body.get("message") or {})
        manager = needs_rights(self.core.commands, f"add {text}") and self.managers.is_manager(
            client, channel.workspace, user["id"]
        )
        who = UserRef(PLATFORM, user["id"], user.get("username") or user.get("name", ""), manager)
        reply = self.core.add_from_message(Incoming(channel, who, text))
        _respond(respond, replace(reply, ephemeral=True))

    def workspace_gone(self, event: dict, context: BoltContext) -> None:
        """app_uninstalled, or tokens_revoked for the bot: the workspace's channels stop
        posting (the scheduler would only collect refusals), and an OAuth install's
        tokens are forgotten. Revoked user tokens alone change nothing: we keep none."""
        kind, team = event["type"], context.team_id or ""
        if kind == "tokens_revoked" and not (event.get("tokens") or {}).get("bot"):
            log.info("Slack tokens_revoked for workspace %s: no bot token among them", team)
            return
        paused = self.channels.pause_workspace(PLATFORM, team, UNINSTALLED_NOTICE) if team else 0
        if self.installations is not None:
            revoked = TokenRevocationListeners(self.installations)
            if kind == "app_uninstalled":
                revoked.handle_app_uninstalled_events(context)
            else:
                revoked.handle_tokens_revoked_events(event, context)
        log.warning("Slack %s for workspace %s (org %s): channels paused: %d%s", kind, team or "?",
                    context.enterprise_id or "none", paused,
                    ", installation removed" if self.installations is not None else "")

    def _command_incoming(self, command: dict, client: WebClient, context: BoltContext) -> Incoming:
        text = command_text(command.get("text", ""))
        channel = _channel(context, command["channel_id"])
        user_id = command["user_id"]
        # users.info only when the answer may depend on it (and never for a search).
        manager = needs_rights(self.core.commands, text) and self.managers.is_manager(
            client, channel.workspace, user_id
        )
        return Incoming(channel, UserRef(PLATFORM, user_id, command.get("user_name", ""), manager), text)

    def _send(self, reply: Reply, channel_id: str, client: WebClient, respond: Respond) -> None:
        """A post goes out through chat.postMessage (its ts is remembered for votes and
        threads), a result into its post's thread, anything else back to the member."""
        try:
            if _is_post(reply):
                posted = client.chat_postMessage(
                    channel=channel_id, unfurl_links=False, **message(reply)
                )
                self.core.remember_message(reply, posted["ts"])
            elif reply.reply_to and not reply.ephemeral:
                client.chat_postMessage(
                    channel=channel_id,
                    thread_ts=reply.reply_to,
                    unfurl_links=False,
                    **message(reply),
                )
            else:
                _respond(respond, reply)
        except SlackApiError as problem:
            log.warning("chat.postMessage to %s failed: %s", channel_id, _error(problem))
            if _is_post(reply):  # nothing reached the channel: the paper or poll is not used up
                self.core.withdraw(reply)
            _respond(respond, _cannot_post(problem))
            return
        if reply.post_id is not None and not _is_post(reply):
            self._show_tally(reply.post_id, channel_id, client)

    def _show_tally(self, post_id: int, channel_id: str, client: WebClient) -> None:
        """After a vote: the post's message again, with the new tally."""
        rendered = self.core.render_post(post_id)
        if rendered is None or rendered[0] is None:
            return
        message_ref, post = rendered
        try:
            client.chat_update(channel=channel_id, ts=message_ref, **message(post))
        except SlackApiError as problem:  # e.g. the message was deleted: the vote still counts
            log.warning("chat.update of post %d failed: %s", post_id, _error(problem))


def acknowledge(ack: Ack) -> None:
    ack()


def message_text(message: dict) -> str:
    """A message's text with its links as plain URLs, then the links of its attachments
    (unfurls, shared messages) and of its rich-text blocks that the text may not show."""
    parts = [command_text(message.get("text") or "")] if isinstance(message.get("text"), str) else []
    for attachment in _dicts(message.get("attachments")):
        parts += [attachment[k] for k in ("from_url", "original_url", "title_link")
                  if isinstance(attachment.get(k), str)]
    parts += [url for url in _block_links(message.get("blocks")) if url not in " ".join(parts)]
    return "\n".join(dict.fromkeys(p for p in parts if p))


def _block_links(blocks: object) -> list[str]:
    """The `url` of every link element in rich-text blocks, however deeply nested."""
    found: list[str] = []
    for item in _dicts(blocks):
        if item.get("type") == "link" and isinstance(item.get("url"), str):
            found.append(item["url"])
        found += _block_links(item.get("elements"))
    return found


def _dicts(value: object) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _channel(context: BoltContext, channel_id: str) -> ChannelRef:
    """The channel, with the Enterprise Grid org above its workspace when there is one
    (bolt reads both from every payload shape: `enterprise_id` of a command,
    `enterprise.id` or `team.enterprise_id` of a click): the scheduler needs the org to
    find the workspace's installation."""
    return ChannelRef(PLATFORM, context.team_id or "", channel_id, context.enterprise_id or "")


def _is_post(reply: Reply) -> bool:
    """A paper-of-the-day post or a poll: a channel message with buttons to vote on."""
    return (
        bool(reply.actions)
        and not reply.ephemeral
        and (reply.post_id is not None or reply.poll_id is not None)
    )


def _response(reply: Reply) -> dict:
    """An ack or response_url message: errors and usage for the member's eyes only."""
    private = reply.ephemeral or not reply.ok
    return {"response_type": "ephemeral" if private else "in_channel", **message(reply)}


def _cannot_post(problem: SlackApiError) -> Reply:
    return Reply(
        text=(
            f"I could not post in this channel ({_error(problem)}). In a private channel, "
            "invite me first (`/invite @paperclub`), then try again."
        ),
        ephemeral=True,
        ok=False,
    )


def _error(problem: Exception) -> str:
    if isinstance(problem, SlackApiError):
        return str(problem.response.get("error", problem))
    return str(problem)


# --- the scheduler's delivery ---------------------------------------------------------------


class BotClients:
    """The Web API client that speaks for the bot in a workspace: the one bot token, or
    the token the workspace's OAuth install left in the installation store."""

    def __init__(
        self,
        api_url: str,
        token: str | None = None,
        installations: SQLAlchemyInstallationStore | None = None,
    ):
        self.api_url = api_url
        self.token = token
        self.installations = installations

    def __call__(self, team_id: str, org: str = "") -> WebClient:
        if self.installations is None:
            return web_client(self.api_url, self.token)
        bot = self._find(team_id, org)
        if bot is None:
            # Not passing by itself: an admin has to install the app again.
            raise DeliveryRefused(
                f"paperclub is not installed in Slack workspace {team_id} "
                f"(install at {INSTALL_PATH})",
                permanent=True,
            )
        return web_client(self.api_url, bot.bot_token)

    def _find(self, team_id: str, org: str) -> Bot | None:
        """The workspace's own install; in an Enterprise Grid org, else the org-wide
        install (stored with no team). slack_sdk matches enterprise_id exactly, NULL
        included, so a Grid workspace must be asked for with its org."""
        store = self.installations
        if org:
            return store.find_bot(enterprise_id=org, team_id=team_id) or store.find_bot(
                enterprise_id=org, team_id=None, is_enterprise_install=True
            )
        return store.find_bot(enterprise_id=None, team_id=team_id) or self._any_org(team_id)

    def _any_org(self, team_id: str) -> Bot | None:
        """A channel that has not told us its org yet (it was set up before the org was
        kept): the workspace's newest install under any org."""
        bots = self.installations.bots
        query = (
            select(bots)
            .where(bots.c.client_id == self.installations.client_id, bots.c.team_id == team_id,
                   bots.c.bot_token.is_not(None))
            .order_by(desc(bots.c.installed_at))
            .limit(1)
        )
        with self.installations.engine.connect() as connection:
            row = connection.execute(query).mappings().first()
        return None if row is None else self.installations.build_bot_entity(row)


class SlackDelivery:
    """`Deliver` for the scheduler: posts a reply to a channel, returns the message's ts.
    A reply to a message (a poll's result) goes into that message's thread."""

    def __init__(self, clients: Callable[[str, str], WebClient]):
        self.clients = clients

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        # `open_thread` needs nothing here: in Slack a message's thread is its discussion.
        thread = {"thread_ts": reply.reply_to} if reply.reply_to else {}
        if reply.link_to and not reply.reply_to:
            # A reminder about a posted paper: in that post's thread, and in the channel
            # too, where Slack shows it as a reply that leads to the discussion.
            thread = {"thread_ts": reply.link_to, "reply_broadcast": True}
        client = self.clients(channel.workspace, channel.org)
        try:
            posted = client.chat_postMessage(
                channel=channel.channel, unfurl_links=False, **thread, **message(reply)
            )
        except SlackApiError as problem:
            reason = _error(problem)
            raise DeliveryRefused(f"Slack refused: {reason}", permanent=reason in GONE_FOR_GOOD) from problem
        return posted["ts"]


# --- the app and the server -----------------------------------------------------------------


def bot_clients(services: Services, settings: SlackSettings) -> BotClients:
    """The clients the bot posts with: the one bot token, or OAuth installations."""
    if settings.oauth:
        installations = SQLAlchemyInstallationStore(
            client_id=settings.client_id, engine=services.db.engine
        )
        installations.create_tables()
        return BotClients(settings.api_url, installations=installations)
    return BotClients(settings.api_url, token=settings.bot_token)


def _respond(respond: Respond, reply: Reply) -> None:
    """The answer through the command's response_url. One that does not work (missing,
    not a URL, its host unreachable: the request was signed, but Slack never sends such
    a one) costs the answer, logged in one line: nobody is left to tell."""
    try:
        respond(**_response(reply), replace_original=False)
    except (ValueError, OSError) as problem:  # urllib's URLError and http.client's are OSErrors
        log.warning("an answer after the ack was not delivered: the response_url did not work (%s)",
                    type(problem).__name__)


def build_app(
    services: Services,
    settings: SlackSettings,
    executor: Executor | None = None,
    redraws: Debouncer | None = None,
    later: Executor | None = None,
) -> tuple[App, BotClients]:
    """The bolt App with our listeners, and the clients the scheduler posts with. With a
    bot token the App checks it once with auth.test (at SLACK_API_URL). `redraws`: how
    posts are redrawn after reactions (a Debouncer; tests pass one they flush).
    `executor` runs bolt's listeners (the acks), `later` the answers after an ack; a
    test that passes an inline executor and no `later` gets both inline."""
    common = {
        "name": "paperclub",
        "signing_secret": settings.signing_secret,
        "client": web_client(settings.api_url, settings.bot_token),
        "logger": _bolt_logger(),
        "listener_executor": executor,
        # After bolt's signature check, before the installation lookup: a replay or a
        # retry goes no further than this.
        "before_authorize": ActOnce(services.seen),
    }
    clients = bot_clients(services, settings)
    if settings.oauth:
        states = SQLAlchemyOAuthStateStore(
            expiration_seconds=OAUTH_STATE_SECONDS, engine=services.db.engine
        )
        states.create_tables()
        oauth = OAuthSettings(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            scopes=bot_scopes(),
            install_path=INSTALL_PATH,
            redirect_uri_path=REDIRECT_PATH,
            installation_store=clients.installations,
            state_store=states,
        )
        app = App(**common, oauth_settings=oauth, user_facing_authorize_error_message=NOT_INSTALLED)
    else:
        try:
            app = App(**common)
        except BoltError as problem:
            raise ConfigError(f"SLACK_BOT_TOKEN was refused by Slack: {problem}") from None
    SlackListeners(
        services.core, Managers(settings.managers), services.channels, clients.installations, redraws,
        later or executor,
    ).register(app)
    return app, clients


def _bolt_logger() -> logging.Logger:
    # bolt logs a request's whole body at INFO when its signature is wrong (and the body
    # of a slash command holds its response_url): keep bolt at WARNING.
    logger = logging.getLogger(f"{__name__}.bolt")
    logger.setLevel(logging.WARNING)
    # bolt also reads SLACK_BOT_TOKEN itself and warns that the client we pass (pointed
    # at SLACK_API_URL, with that same token) wins, or that OAuth ignores it.
    drop_expected(logger, "As you gave `client` as well", "As `installation_store` or `authorize`")
    # A signed request no listener takes (an event we are not subscribed to): bolt's
    # warning quotes the body, so it is dropped and the edge logs one line instead.
    drop_expected(logger, "Unhandled request")
    return logger


# --- in the serving process -----------------------------------------------------------------


class SlackServer:
    """Slack in `paperclub serve`: HTTP on $PORT (waitress, a production WSGI server,
    with `extra` answering other paths such as /healthz), or Socket Mode when
    SLACK_APP_TOKEN is set (development)."""

    def __init__(self, services: Services, settings: SlackSettings, extra: dict | None = None,
                 address: str = DEFAULT_HOST):
        self.settings = settings
        self.executor = ThreadPoolExecutor(LISTENER_THREADS, "slack-listener")
        self.later = ThreadPoolExecutor(LATER_THREADS, "slack-later")
        self.redraws = Debouncer()
        self.app, clients = build_app(services, settings, self.executor, self.redraws, self.later)
        self.delivery = SlackDelivery(clients)
        self.extra = extra or {}
        self.address = address  # what the HTTP server listens on
        self._server = None
        self._loop: threading.Thread | None = None
        self._socket_mode = None

    def start(self) -> None:
        if self.settings.app_token:
            self._start_socket_mode()
        else:
            self._start_http()

    def _start_socket_mode(self) -> None:
        self._socket_mode = CheckedSocketModeHandler(self.app, self.settings.app_token)
        try:
            self._socket_mode.connect()
        except SlackApiError as problem:
            raise ConfigError(
                f"Socket Mode could not connect ({_error(problem)}): SLACK_APP_TOKEN must be an "
                "app-level token with connections:write, and Socket Mode must be on in the app's "
                "settings"
            ) from None
        log.info("Slack over Socket Mode (for development)")

    def _start_http(self) -> None:
        import waitress

        from adapters.wsgi import listening, route

        slack = SignedOnly(WholeForms(self.app, EVENTS_PATH), self.settings.signing_secret)
        app = route(slack, self.extra)
        port = self.settings.port
        try:
            self._server = waitress.create_server(
                app, host=self.address, port=port, threads=HTTP_THREADS, ident="paperclub"
            )
        except OSError as problem:
            raise ConfigError(f"{listening(self.address, port)}: cannot listen there ({problem.strerror})") from None
        self._loop = threading.Thread(target=self._server.run, name="slack-http", daemon=True)
        self._loop.start()
        log.info("Slack over HTTP on port %d of %s: requests at %s", port, self.address, EVENTS_PATH)

    def stop_accepting(self) -> None:
        """First step of a shutdown: no new requests (the load balancer moves on)."""
        if self._server is not None:
            self._in_loop(lambda: wasyncore.dispatcher.close(self._server))  # the listening socket only
        if self._socket_mode is not None:
            self._socket_mode.close()

    def _in_loop(self, change: Callable[[], None]) -> None:
        """Run `change` in waitress's loop thread: closing its sockets from another
        thread races a request still being answered (select on a closed descriptor)."""
        try:
            self._server.trigger.pull_trigger(change)
        except OSError:  # the loop has closed everything already
            pass

    def stop(self, timeout: float) -> None:
        """Let the requests and lazy answers in flight finish, up to `timeout` seconds."""
        self.stop_accepting()
        self.redraws.flush()  # posts waiting for their redraw show their last reactions
        if self._server is not None:
            self._server.task_dispatcher.shutdown(cancel_pending=False, timeout=timeout)
            self._in_loop(lambda: wasyncore.close_all(self._server._map))  # the loop ends with its map
            self._loop.join(timeout)
        waiter = threading.Thread(target=self._shut_pools, daemon=True)
        waiter.start()
        waiter.join(timeout)
        if waiter.is_alive():
            log.warning("Slack answers still running after %.0f s; leaving them", timeout)

    def _shut_pools(self) -> None:
        """Answers queued after the ack still run (an `add` then answers at once that
        paperclub stopped: the core was told), and every answer under way ends."""
        self.later.shutdown(wait=True)
        self.executor.shutdown(wait=True)

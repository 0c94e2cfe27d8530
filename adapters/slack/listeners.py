"""The Slack app's listeners on the real bolt `App`: `/paper`, button clicks, the "Add to
paperclub" shortcut, reactions, and the events that say a workspace left.

Each listener only translates: a payload becomes an `Incoming` (adapters/slack/payloads.py),
the core answers with a `Reply`, and the reply goes out through adapters/replies.py with
a Slack `RequestReplies`. The core routes each line (`core.route`): most commands are
answered inside the 3-second ack itself; those it routes as `later` (a channel post, an
edit of one, an `add` that fetches) are acked at once and answered from a pool of their
own (`Later`), so a slow answer never holds one of the threads bolt acknowledges
requests on. The member's rights are looked up (users.info) only for a line the core
says may need them. `build_app` puts these listeners on bolt's App.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import Executor
from dataclasses import replace

from slack_bolt import Ack, App, BoltContext, Respond
from slack_bolt.error import BoltError
from slack_bolt.listener.builtins import TokenRevocationListeners
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

from adapters.debounce import Debouncer
from adapters.replies import Later, redraw, send
from adapters.slack.blocks import ACTION_ID_PREFIX
from adapters.slack.config import SlackSettings
from adapters.slack.delivery import (
    BotClients,
    RequestReplies,
    bot_clients,
    cannot_post,
    error,
    respond_with,
    response,
    web_client,
)
from adapters.slack.edge import ActOnce
from adapters.slack.managers import Managers
from adapters.slack.oauth import NOT_INSTALLED, oauth_settings
from adapters.slack.payloads import PLATFORM, channel_ref, command_text, event_order, message_text
from bot.app import Services
from bot.channels.channels import Channels
from bot.core import DATABASE_UNAVAILABLE, PaperClub
from bot.messages import Incoming, Reaction, Reply, UserRef
from bot.ops.logs import drop_expected
from bot.ops.settings import ConfigError

log = logging.getLogger(__name__)

# The message shortcut "Add to paperclub" (manifest.json features.shortcuts).
ADD_SHORTCUT = "add_to_paperclub"
# Shown once in the reply to a channel's next command, should the app come back.
UNINSTALLED_NOTICE = (
    "The paper of the day stopped here because paperclub was removed from this workspace "
    "(or its access was revoked). Now that it is back, a manager can say `schedule on`."
)
_ACTION_ID = re.compile("^" + re.escape(ACTION_ID_PREFIX) + r"\d+$")


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
        self.later = Later(later, name="slack-later")

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
        """The lines the core routes as `later` (`next` and `poll` pick over the whole
        corpus and become channel posts, posted through chat.postMessage because votes
        need the message's ts; `vote` edits the voted message; `add` fetches) are acked at
        once and answered from the `later` pool; everything else inside the ack."""
        return self.core.route(command_text(command.get("text", ""))).later

    def hand_off_command(self, ack: Ack, command: dict, client: WebClient, respond: Respond,
                         context: BoltContext) -> None:
        """Ack now; the answer comes from the `later` pool."""
        ack()
        self.later.hand_off("answering a command", self.answer_command, command, client, respond, context)

    def hand_off_shortcut(self, ack: Ack, body: dict, client: WebClient, respond: Respond,
                          context: BoltContext) -> None:
        ack()
        self.later.hand_off("adding from a message", self.add_from_message, body, client, respond, context)

    def answer_in_ack(self, ack: Ack, command: dict, client: WebClient, context: BoltContext) -> None:
        ack(**response(self.core.handle(self._command_incoming(command, client, context))))

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
        channel = channel_ref(context, channel_id)
        manager = self._is_manager(value, client, channel.workspace, user["id"])
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
        reaction = Reaction(channel_ref(context, channel_id), UserRef(PLATFORM, user), ts,
                            str(event.get("reaction", "")), event.get("type") == "reaction_added",
                            event_order(event.get("event_ts")))
        try:
            post_id = self.core.react(reaction)
        except DATABASE_UNAVAILABLE as problem:  # the member's reaction stays; the vote is lost
            log.warning("a Slack reaction in %s was not counted: database unreachable (%s)",
                        channel_id, type(problem).__name__)
            return
        if post_id is not None:
            self.redraws.touch(post_id, lambda: redraw(self.core, post_id, RequestReplies(client, channel_id)))

    def add_from_message(self, body: dict, client: WebClient, respond: Respond, context: BoltContext) -> None:
        """The "Add to paperclub" message shortcut: the papers linked in that message are
        added, and the member alone gets their cards with the buttons (response_url)."""
        user = body["user"]  # edge.malformed saw to the shape of these
        channel = channel_ref(context, body["channel"]["id"])
        text = message_text(body.get("message") or {})
        manager = self._is_manager(f"add {text}", client, channel.workspace, user["id"])
        who = UserRef(PLATFORM, user["id"], user.get("username") or user.get("name", ""), manager)
        reply = self.core.add_from_message(Incoming(channel, who, text))
        respond_with(respond, replace(reply, ephemeral=True))

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
        channel = channel_ref(context, command["channel_id"])
        user_id = command["user_id"]
        manager = self._is_manager(text, client, channel.workspace, user_id)
        return Incoming(channel, UserRef(PLATFORM, user_id, command.get("user_name", ""), manager), text)

    def _is_manager(self, line: str, client: WebClient, team_id: str, user_id: str) -> bool:
        """users.info only when the core says the answer to `line` may depend on it (never
        for a search): it is asked inside the 3-second ack."""
        return self.core.route(line).needs_rights and self.managers.is_manager(client, team_id, user_id)

    def _send(self, reply: Reply, channel_id: str, client: WebClient, respond: Respond) -> None:
        """The reply by its kind (adapters/replies.py); when Slack refuses the channel
        message, the member is told why and how to let the bot in."""
        try:
            send(self.core, reply, RequestReplies(client, channel_id, respond))
        except SlackApiError as problem:
            log.warning("chat.postMessage to %s failed: %s", channel_id, error(problem))
            respond_with(respond, cannot_post(problem))


def acknowledge(ack: Ack) -> None:
    ack()


# --- the app ----------------------------------------------------------------------------------


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
        oauth = oauth_settings(services, settings, clients.installations)
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

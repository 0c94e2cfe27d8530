"""Sending to Slack: the Web API clients that speak for the bot, the scheduler's posts
(`SlackDelivery`), and a member's request answered (`RequestReplies`, the Sender of
adapters/replies.py: chat.postMessage, response_url, chat.update)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_bolt import Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

from adapters.replies import Sender
from adapters.slack.blocks import message
from adapters.slack.config import INSTALL_PATH, SlackSettings
from adapters.slack.oauth import find_bot, installation_store
from bot.app import Services
from bot.messages import ChannelRef, DeliveryRefused, Reply

log = logging.getLogger(__name__)

RATE_LIMIT_RETRIES = 3
# chat.postMessage errors that will not pass by themselves: the bot lost the workspace or
# the channel (gone, archived, bot not in it, posting restricted), or Slack refuses this
# very message. Retrying later today only collects invalid-request strikes; three days of
# them pause the channel (bot/services/posts.py). Anything else (ratelimited,
# internal_error, fatal_error, service_unavailable, request_timeout) is retried.
GONE_FOR_GOOD = frozenset({
    "token_revoked", "token_expired", "invalid_auth", "not_authed", "account_inactive",
    "team_access_not_granted", "app_uninstalled", "missing_scope", "no_permission",
    "channel_not_found", "not_in_channel", "is_archived", "restricted_action",
    "restricted_action_read_only_channel", "restricted_action_thread_only_channel",
    "restricted_action_non_threadable_channel", "ekm_access_denied",
    "msg_too_long", "msg_blocks_too_long", "invalid_blocks", "no_text",
})


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


def error(problem: Exception) -> str:
    """Slack's error code (`channel_not_found`), else the exception's text."""
    if isinstance(problem, SlackApiError):
        return str(problem.response.get("error", problem))
    return str(problem)


# --- who speaks for the bot -------------------------------------------------------------------


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
        bot = find_bot(self.installations, team_id, org)
        if bot is None:
            # Not passing by itself: an admin has to install the app again.
            raise DeliveryRefused(
                f"paperclub is not installed in Slack workspace {team_id} "
                f"(install at {INSTALL_PATH})",
                permanent=True,
            )
        return web_client(self.api_url, bot.bot_token)


def bot_clients(services: Services, settings: SlackSettings) -> BotClients:
    """The clients the bot posts with: the one bot token, or OAuth installations."""
    if settings.oauth:
        return BotClients(settings.api_url, installations=installation_store(services, settings))
    return BotClients(settings.api_url, token=settings.bot_token)


# --- the scheduler's posts --------------------------------------------------------------------


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
            reason = error(problem)
            raise DeliveryRefused(f"Slack refused: {reason}", permanent=reason in GONE_FOR_GOOD) from problem
        return posted["ts"]


# --- a member's request answered --------------------------------------------------------------


class RequestReplies(Sender):
    """How a reply to a member's command, click or shortcut reaches Slack: posts and
    thread replies through chat.postMessage (a post's ts is what votes redraw), answers
    back through the request's response_url, a redrawn post through chat.update."""

    def __init__(self, client: WebClient, channel_id: str, respond: Respond | None = None):
        self.client = client
        self.channel_id = channel_id
        self.respond = respond  # None: nobody to answer (a reaction's redraw)

    def post(self, reply: Reply) -> str:
        posted = self.client.chat_postMessage(channel=self.channel_id, unfurl_links=False, **message(reply))
        return posted["ts"]

    def post_in_thread(self, reply: Reply) -> None:
        self.client.chat_postMessage(
            channel=self.channel_id, thread_ts=reply.reply_to, unfurl_links=False, **message(reply)
        )

    def answer(self, reply: Reply) -> None:
        if self.respond is not None:
            respond_with(self.respond, reply)

    def edit(self, ref: str, reply: Reply) -> None:
        try:
            self.client.chat_update(channel=self.channel_id, ts=ref, **message(reply))
        except SlackApiError as problem:  # e.g. the message was deleted: the vote still counts
            log.warning("chat.update of post %d failed: %s", reply.post_id, error(problem))

    def posted(self, reply: Reply, ref: str) -> None:
        """Nothing owed: in Slack a message's thread is its discussion."""


def response(reply: Reply) -> dict:
    """An ack or response_url message: errors and usage for the member's eyes only."""
    private = reply.ephemeral or not reply.ok
    return {"response_type": "ephemeral" if private else "in_channel", **message(reply)}


def respond_with(respond: Respond, reply: Reply) -> None:
    """The answer through the command's response_url. One that does not work (missing,
    not a URL, its host unreachable: the request was signed, but Slack never sends such
    a one) costs the answer, logged in one line: nobody is left to tell."""
    try:
        respond(**response(reply), replace_original=False)
    except (ValueError, OSError) as problem:  # urllib's URLError and http.client's are OSErrors
        log.warning("an answer after the ack was not delivered: the response_url did not work (%s)",
                    type(problem).__name__)


def cannot_post(problem: SlackApiError) -> Reply:
    """What the member is told when Slack refused the channel message their command made."""
    return Reply(
        text=(
            f"I could not post in this channel ({error(problem)}). In a private channel, "
            "invite me first (`/invite @paperclub`), then try again."
        ),
        ephemeral=True,
        ok=False,
    )

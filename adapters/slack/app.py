"""The Slack adapter as the rest of paperclub imports it: `/paper` and button clicks in,
Block Kit out, on the real bolt `App`. Its parts live in modules named by what they hold:

- payloads.py: reading what Slack sends (a command's text, a message's links, an event's time)
- listeners.py: the bolt listeners, and `build_app`, which puts them on bolt's App
- delivery.py: the clients that speak for the bot, the scheduler's posts, a request's replies
- oauth.py: installing in many workspaces, and finding a workspace's installation
- managers.py: who may manage a channel (users.info, PAPERCLUB_SLACK_MANAGERS)
- server.py: `SlackServer`, the app over HTTP or Socket Mode in `paperclub serve`
- edge.py: what a request passes before bolt sees it; blocks.py: Block Kit; config.py: settings

What every platform does with the core's replies (posts remembered or withdrawn, votes
redrawn, answers after the ack) is adapters/replies.py.
"""

from __future__ import annotations

from adapters.replies import LATER_THREADS
from adapters.slack.config import manifest
from adapters.slack.delivery import BotClients, SlackDelivery, bot_clients, web_client
from adapters.slack.listeners import UNINSTALLED_NOTICE, SlackListeners, build_app
from adapters.slack.managers import Managers
from adapters.slack.payloads import command_text, event_order, message_text
from adapters.slack.server import LISTENER_THREADS, SlackServer

__all__ = [
    "LATER_THREADS",
    "LISTENER_THREADS",
    "UNINSTALLED_NOTICE",
    "BotClients",
    "Managers",
    "SlackDelivery",
    "SlackListeners",
    "SlackServer",
    "bot_clients",
    "build_app",
    "command_text",
    "event_order",
    "manifest",
    "message_text",
    "web_client",
]

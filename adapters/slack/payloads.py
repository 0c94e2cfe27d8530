"""Reading what Slack sends: a slash command's text, a message's links, an event's time,
the channel a payload comes from. adapters/slack/edge.py has already checked the
payload's shape; nothing here trusts its contents."""

from __future__ import annotations

import re
import time

from slack_bolt import BoltContext

from bot.messages import ChannelRef

PLATFORM = "slack"
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>")
_EVENT_TS = re.compile(r"([0-9]{1,12})\.([0-9]{1,9})")


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


def channel_ref(context: BoltContext, channel_id: str) -> ChannelRef:
    """The channel, with the Enterprise Grid org above its workspace when there is one
    (bolt reads both from every payload shape: `enterprise_id` of a command,
    `enterprise.id` or `team.enterprise_id` of a click): the scheduler needs the org to
    find the workspace's installation."""
    return ChannelRef(PLATFORM, context.team_id or "", channel_id, context.enterprise_id or "")

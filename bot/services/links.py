"""A channel's secret links (its calendar feed, its archive page), one per member who asks,
and the private answer that gives one (`archive`, `session calendar`).

A link's token is 256 random bits (`secrets.token_urlsafe(32)`); only its SHA-256 digest
is stored, so a copy of the database opens no page, and a link cannot be shown twice.
So each member who asks gets their own link: asking again replaces that member's link,
and a manager's reset revokes every link of that kind in the channel at once. A token
is looked up by its digest and the digest compared once more in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import delete, select

from bot.channels.channels import Channels
from bot.grammar import UsageError
from bot.messages import Incoming, Reply
from bot.services.models import ChannelLink
from bot.services.routes import ARCHIVE_PREFIX, CALENDAR_PREFIX
from store import Database
from store.database import dml_result

KINDS = ("calendar", "archive")
SET_PUBLIC_URL = (
    "paperclub does not know its public address yet, so it cannot give a link: the operator sets "
    "PAPERCLUB_PUBLIC_URL (e.g. https://paperclub.example.org, where `paperclub serve` answers) and "
    "restarts it. Nothing was changed."
)
TOKEN_BYTES = 32
# What a token looks like in a URL (token_urlsafe's alphabet); anything else is not one
# of ours and is refused before any query.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{20,100}")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


class ChannelLinks:
    def __init__(self, db: Database):
        self.db = db

    def issue(self, channel_id: int, kind: str, user_id: str, now: datetime) -> str:
        """A new token for `user_id`'s `kind` link to the channel; their earlier one stops working."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self.db.session() as session:
            session.execute(delete(ChannelLink).where(
                ChannelLink.channel_id == channel_id, ChannelLink.kind == kind, ChannelLink.user_id == user_id))
            session.add(ChannelLink(channel_id=channel_id, kind=kind, user_id=user_id,
                                    token_hash=digest(token), created_at=now))
        return token

    def revoke(self, channel_id: int, kind: str) -> int:
        """Every member's `kind` link to the channel stops working; how many there were."""
        with self.db.session() as session:
            return dml_result(session.execute(delete(ChannelLink).where(
                ChannelLink.channel_id == channel_id, ChannelLink.kind == kind))).rowcount

    def made_at(self, channel_id: int, kind: str, user_id: str) -> datetime | None:
        """When `user_id`'s current `kind` link to the channel was made, or None."""
        with self.db.session() as session:
            return session.scalar(select(ChannelLink.created_at).where(
                ChannelLink.channel_id == channel_id, ChannelLink.kind == kind, ChannelLink.user_id == user_id))

    def channel_of(self, kind: str, token: str) -> int | None:
        """The channel whose `kind` link this token is, or None (wrong, revoked, malformed)."""
        if not TOKEN_SHAPE.fullmatch(token):
            return None
        wanted = digest(token)
        with self.db.session() as session:
            row = session.execute(select(ChannelLink.token_hash, ChannelLink.channel_id).where(
                ChannelLink.token_hash == wanted, ChannelLink.kind == kind)).first()
        if row is None:
            return None
        token_hash, channel_id = row
        if not hmac.compare_digest(token_hash, wanted):
            return None
        return channel_id


class PrivateLinks:
    """The answer that gives a member their link (shown once): the archive feature's
    `archive` and the meetings feature's `session calendar`."""

    def __init__(self, channels: Channels, links: ChannelLinks, public_url: str | None,
                 clock: Callable[[], datetime]):
        self.channels = channels
        self.links = links
        self.public_url = public_url.rstrip("/") if public_url else None
        self.clock = clock

    def calendar(self, incoming: Incoming, words: list[str]) -> Reply:
        """`session calendar [reset]`, for managers (the caller checked the rights)."""
        if [w.lower() for w in words] not in ([], ["reset"]):
            raise UsageError("Say `session calendar` for the feed's link, or `session calendar reset`.")
        return self.answer(incoming, "calendar", reset=bool(words))

    def answer(self, incoming: Incoming, kind: str, reset: bool) -> Reply:
        if self.public_url is None:
            return Reply(text=SET_PUBLIC_URL, ephemeral=True, ok=False)
        channel = self.channels.get(incoming.channel)
        user = incoming.user.user_id
        if reset:
            revoked = self.links.revoke(channel.id, kind)
            lead = f"The {_what(kind)} links given so far ({revoked}) no longer work; here is a new one for you."
        elif self.links.made_at(channel.id, kind, user) is not None:
            lead = "Here is a new link for you; the one you were given before no longer works."
        else:
            lead = "Here is your link."
        token = self.links.issue(channel.id, kind, user, self.clock())
        url = f"{self.public_url}{ARCHIVE_PREFIX}{token}" if kind == "archive" else \
            f"{self.public_url}{CALENDAR_PREFIX}{token}.ics"
        return Reply(text=f"{lead} {_how(kind)}\n{url}\nIt is shown only this once and anyone holding it can "
                     "read it: share it with the group only.", ephemeral=True)


def _what(kind: str) -> str:
    return "archive page" if kind == "archive" else "calendar feed"


def _how(kind: str) -> str:
    if kind == "archive":
        return "The channel's archive page (papers, notes, votes, meetings, polls, search):"
    return ("The meetings' calendar feed: in Google Calendar, Other calendars › + › From URL; in Outlook, "
            "Add calendar › Subscribe from web:")

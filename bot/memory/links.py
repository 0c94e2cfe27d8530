"""A channel's secret links (its calendar feed, its archive page), one per member who asks.

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
from datetime import datetime

from sqlalchemy import delete, select

from store import Database
from store.models import ChannelLink

KINDS = ("calendar", "archive")
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
            return session.execute(delete(ChannelLink).where(
                ChannelLink.channel_id == channel_id, ChannelLink.kind == kind)).rowcount

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
        if row is None or not hmac.compare_digest(row.token_hash, wanted):
            return None
        return row.channel_id

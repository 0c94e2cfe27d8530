"""A channel's choices for briefs: the language they come in, a language code as BCP 47
writes one (`de`, `pt-BR`, `zh-Hant`), English where none was chosen; and whether its
posts carry a TL;DR (`briefs on`), off where none was chosen."""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import select

from bot.briefs.models import BriefChannel
from bot.channels.channels import ChannelSettings
from store import Database
from store.database import upsert_insert
from store.models import Channel

DEFAULT = "en"
# A primary language subtag (2-3 letters), then script, region or variant subtags.
_CODE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,3}")


def language_code(word: str) -> str | None:
    """`word` as a language code (primary subtag lowercased), or None when it is not one."""
    if not _CODE.fullmatch(word):
        return None
    primary, _, rest = word.partition("-")
    return primary.lower() + (f"-{rest}" if rest else "")


class Languages:
    def __init__(self, db: Database):
        self.db = db

    def of(self, channel_id: int) -> str:
        with self.db.session() as session:
            return session.scalar(select(BriefChannel.language).where(BriefChannel.channel_id == channel_id)) \
                or DEFAULT

    def set(self, channel_id: int, language: str, now: datetime) -> None:
        with self.db.session() as session:
            row = {"channel_id": channel_id, "language": language, "updated_at": now}
            session.execute(upsert_insert(session, BriefChannel).values(row).on_conflict_do_update(
                index_elements=["channel_id"], set_={"language": language, "updated_at": now}))


class OnPosts:
    """Which channels' paper of the day and digest carry a TL;DR (`briefs on`)."""

    def __init__(self, db: Database):
        self.db = db

    def on(self, channel_id: int) -> bool:
        with self.db.session() as session:
            return bool(session.scalar(select(BriefChannel.on_posts).where(BriefChannel.channel_id == channel_id)))

    def set(self, channel_id: int, on: bool, now: datetime) -> None:
        with self.db.session() as session:
            row = {"channel_id": channel_id, "language": DEFAULT, "on_posts": on, "updated_at": now}
            session.execute(upsert_insert(session, BriefChannel).values(row).on_conflict_do_update(
                index_elements=["channel_id"], set_={"on_posts": on, "updated_at": now}))

    def channels(self) -> list[tuple[ChannelSettings, str]]:
        """Every channel with TL;DRs on, with the language of its briefs."""
        with self.db.session() as session:
            rows = session.execute(select(Channel, BriefChannel.language)
                                   .join(BriefChannel, BriefChannel.channel_id == Channel.id)
                                   .where(BriefChannel.on_posts.is_(True)).order_by(Channel.id)).all()
            return [(ChannelSettings.of(channel), language) for channel, language in rows]

"""The language a channel's briefs come in: a language code as BCP 47 writes one (`de`,
`pt-BR`, `zh-Hant`), kept per channel; English where none was chosen."""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import select

from bot.briefs.models import BriefChannel
from store import Database
from store.database import upsert_insert

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

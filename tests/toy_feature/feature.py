"""`quote TEXT` keeps a line from the discussion; `quote` shows the last ones."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import ForeignKey, String, Text, select
from sqlalchemy.orm import Mapped, mapped_column

from bot.channels.channels import Channels, ChannelSettings
from bot.feature import NOT_FOUND, DigestSection, Feature, Kit, Page
from bot.grammar import Command, UsageError
from bot.messages import Incoming, Reply
from bot.ops.settings import EnvSettings, setting
from store import Database
from store.database import as_utc
from store.models import Base, utcnow


class Quote(Base):
    __tablename__ = "toy_quotes"

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(100))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class QuoteSettings(EnvSettings):
    quote_chars: int = setting(280, "PAPERCLUB_TOY_QUOTE_CHARS", "Quotes", unset="280 characters a quote")


class QuoteFeature(Feature):
    name = "toy_feature"
    settings_model = QuoteSettings

    def __init__(self, db: Database, channels: Channels, limit: int, clock: Callable[[], datetime]):
        self.db, self.channels, self.limit, self.clock = db, channels, limit, clock

    @classmethod
    def build(cls, kit: Kit) -> QuoteFeature:
        return cls(kit.db, kit.channels, kit.settings(QuoteSettings).quote_chars, kit.clock)

    def commands(self) -> list[Command]:
        return [Command("quote", "quote [TEXT]", "Keep a line from the discussion, or show the last ones.",
                        "quote attention is all you need", self.quote)]

    def quote(self, incoming: Incoming, args: str) -> Reply:
        channel = self.channels.get(incoming.channel)
        if not args:
            return Reply(text="\n".join(self._quotes(channel.id)) or "No quotes yet.")
        if len(args) > self.limit:
            raise UsageError(f"A quote is at most {self.limit} characters.")
        with self.db.session() as session:
            session.add(Quote(channel_id=channel.id, user_id=incoming.user.user_id, text=args, created_at=self.clock()))
        return Reply(text=f"Kept: {args}")

    def settings(self, channel: ChannelSettings) -> list[str]:
        return [f"Quotes: {len(self._quotes(channel.id))} kept"]

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        with self.db.session() as session:
            rows = session.scalars(select(Quote).where(Quote.channel_id == channel.id)).all()
        lines = [q.text for q in rows if since <= as_utc(q.created_at) < until]
        return DigestSection("Quotes of the week", lines) if lines else None

    def page(self, path: str, query: dict[str, str]) -> Page:
        wanted = path.removeprefix("/quotes/")
        with self.db.session() as session:
            texts = session.scalars(select(Quote.text).where(Quote.user_id == wanted).order_by(Quote.id)).all()
        if not texts:
            return NOT_FOUND
        body = "\n".join(texts).encode()
        return Page(200, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))], body)

    def _quotes(self, channel_id: int) -> list[str]:
        with self.db.session() as session:
            return list(session.scalars(select(Quote.text).where(Quote.channel_id == channel_id)
                                        .order_by(Quote.id.desc()).limit(10)))

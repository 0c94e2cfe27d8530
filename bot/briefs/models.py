"""The briefs feature's tables: each brief made once, and what each channel spent a day."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base, utcnow


class Brief(Base):
    """One paper's brief for one text (its title and abstract's hash), model, language and
    prompt version, shared by every channel that asks. The row is first a claim (state
    "making", inserted with ON CONFLICT DO NOTHING: of several askers, on any process,
    exactly one calls the model; the others wait for it), then the brief ("made"). A
    failed call deletes its claim, so nothing is left behind; a claim left "making" past
    its lease was abandoned by a process that died and is taken again."""

    __tablename__ = "briefs"
    __table_args__ = (UniqueConstraint("paper_id", "text_hash", "model", "language", "prompt_version",
                                       name="uq_brief"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    text_hash: Mapped[str] = mapped_column(String(64))  # sha256 of the title and abstract sent
    model: Mapped[str] = mapped_column(String(200))
    language: Mapped[str] = mapped_column(String(20))
    prompt_version: Mapped[int]
    state: Mapped[str] = mapped_column(String(20), default="making")  # making | made
    tldr: Mapped[str | None] = mapped_column(Text)
    contribution: Mapped[str | None] = mapped_column(Text)
    questions: Mapped[list[str]] = mapped_column(default=list)
    claimed_at: Mapped[datetime] = mapped_column(default=utcnow)
    made_at: Mapped[datetime | None]


class BriefSpend(Base):
    """The model calls a channel caused on one (UTC) day, against PAPERCLUB_LLM_DAILY_CALLS;
    taken with one conditional UPDATE, so two processes never both take the last one."""

    __tablename__ = "brief_spend"
    __table_args__ = (UniqueConstraint("channel_id", "day", name="uq_brief_spend"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    day: Mapped[date]
    calls: Mapped[int] = mapped_column(default=0)


class BriefChannel(Base):
    """A channel's choices for briefs: the language they come in (`language CODE`), and
    whether its paper of the day and digest carry a TL;DR (`briefs on`); a channel
    without a row has briefs in English, and no TL;DRs on its posts."""

    __tablename__ = "brief_channels"

    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True)
    language: Mapped[str] = mapped_column(String(20))
    on_posts: Mapped[bool] = mapped_column(default=False, server_default=false())
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

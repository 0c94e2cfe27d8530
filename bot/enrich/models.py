"""The enrichment's tables: what was asked about each paper and when it may be asked again,
and each provider's turn (when a run last went, how long the provider asked to wait)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base


class EnrichAttempt(Base):
    """One paper asked of one provider: how it went (`outcome`: asking while a run holds
    it, matched, unmatched, crowded: the answer was full before the paper's title came,
    so it is asked alone next; failed), the work it matched and its citation count, and
    `retry_at`, before which no run asks again (a matched paper after months, an
    unmatched one after weeks). A run claims a paper by moving `retry_at` past its lease,
    only where it had come (INSERT ... ON CONFLICT DO UPDATE ... WHERE), so two processes
    never ask about one paper at once."""

    __tablename__ = "enrich_attempts"
    __table_args__ = (Index("ix_enrich_attempts_retry", "provider", "retry_at"),)

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    provider: Mapped[str] = mapped_column(String(20), primary_key=True)
    outcome: Mapped[str] = mapped_column(String(20))
    work_id: Mapped[str | None] = mapped_column(String(40))
    cited_by: Mapped[int | None]
    tried_at: Mapped[datetime]
    retry_at: Mapped[datetime]


class EnrichTurn(Base):
    """A provider's turn: the last run (one at a time across processes: a run takes the
    turn by moving `last_run_at`, only where the interval since has passed) and a
    Retry-After longer than a run waits, kept in `wait_until`."""

    __tablename__ = "enrich_turns"

    provider: Mapped[str] = mapped_column(String(20), primary_key=True)
    last_run_at: Mapped[datetime | None]
    wait_until: Mapped[datetime | None]
    last_message: Mapped[str | None] = mapped_column(Text)

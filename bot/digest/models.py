"""The digest feature's table: when each channel's weekly digest goes out."""

from __future__ import annotations

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base


class DigestPlan(Base):
    """When a channel's weekly digest goes out: a weekday and a local time, in the zone
    of the channel's schedule (UTC without one)."""

    __tablename__ = "digest_plans"

    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True)
    weekday: Mapped[str] = mapped_column(String(3))  # mon..sun
    local_time: Mapped[str] = mapped_column(String(5))  # HH:MM
    enabled: Mapped[bool] = mapped_column(default=True)

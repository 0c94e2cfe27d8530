"""The reactions feature's table: which reactions a member put on which post."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base


class ReactionMark(Base):
    """The newest reaction event applied for a member on a post, per kind of vote: its
    order (the platform's event time, in microseconds since the epoch) and whether the
    emoji was put on or taken off.

    Reaction events are handled on parallel worker threads, and by several processes, so
    a "taken off" can be handled before its "put on". An event older than the one
    recorded for its kind changes nothing (a compare-and-set in SQL), so the votes end as
    the reactions do whatever the order of handling. One row per (post, member): updating
    it locks it, which makes the events of one member on one post take turns.
    """

    __tablename__ = "reaction_marks"
    __table_args__ = (UniqueConstraint("post_id", "user_id", name="uq_reaction_mark"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(String(100))
    # Per kind (bot/reactions/commands.py KINDS): the order of its newest event (None: none
    # seen, or only events without an order) and whether the emoji is on now.
    up_order: Mapped[int | None] = mapped_column(BigInteger)
    up_on: Mapped[bool] = mapped_column(default=False)
    down_order: Mapped[int | None] = mapped_column(BigInteger)
    down_on: Mapped[bool] = mapped_column(default=False)
    read_order: Mapped[int | None] = mapped_column(BigInteger)
    read_on: Mapped[bool] = mapped_column(default=False)

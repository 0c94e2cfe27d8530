"""Votes on posts: up / down / read per member, tallies per channel, and what a
channel's votes teach its picks.

Every write is one upsert against a unique constraint, so a vote delivered twice
(platform retries, double clicks) counts once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, delete, func, select
from sqlalchemy.orm import Session

from bot.services.models import Post, PostVote
from bot.services.picks import Feedback
from store import Database
from store.database import upsert_insert

POST_VOTES = ("up", "down", "read", "none")
FEEDBACK_PAPERS = 10  # the latest liked / disliked papers that steer a channel's picks


@dataclass(frozen=True)
class Tally:
    up: int = 0
    down: int = 0
    read: int = 0

    def describe(self) -> str:
        return f"👍 {self.up} · 👎 {self.down} · read {self.read}"


class Votes:
    def __init__(self, db: Database):
        self.db = db

    def post_in_channel(self, post_id: int, channel_id: int) -> Post | None:
        with self.db.session() as session:
            post = session.get(Post, post_id)
            return post if post is not None and post.channel_id == channel_id and post.state == "sent" else None

    def post_of_paper(self, paper_id: int, channel_id: int) -> Post | None:
        """This channel's post of a paper (a channel never gets a paper twice)."""
        with self.db.session() as session:
            return session.scalar(
                select(Post).where(Post.channel_id == channel_id, Post.paper_id == paper_id, Post.state == "sent")
            )

    def vote(self, post_id: int, user_id: str, value: str, now: datetime) -> Tally:
        """Record `value` (up, down, read, none) for the member; returns the new tally."""
        with self.db.session() as session:
            record_vote(session, post_id, user_id, value, now)
        return self.tallies([post_id])[post_id]

    def tallies(self, post_ids: list[int]) -> dict[int, Tally]:
        out = {pid: Tally() for pid in post_ids}
        if not post_ids:
            return out
        with self.db.session() as session:
            rows = session.execute(
                select(PostVote.post_id, PostVote.value, func.count())
                .where(PostVote.post_id.in_(post_ids))
                .group_by(PostVote.post_id, PostVote.value)
            ).all()
        counts: dict[int, Counter[str]] = {pid: Counter() for pid in post_ids}
        for post_id, value, count in rows:
            counts[post_id][value] = count
        return {pid: Tally(c["up"], c["down"], c["read"]) for pid, c in counts.items()}

    def tally_lines(self, post_ids: list[int]) -> dict[int, str]:
        """Each post's tally as a member reads it ("👍 2 · 👎 0 · read 1")."""
        return {post_id: tally.describe() for post_id, tally in self.tallies(post_ids).items()}

    def feedback(self, channel_ids: list[int]) -> dict[int, Feedback]:
        """Per channel, the papers whose posts got more up than down votes, and the reverse."""
        out = {cid: Feedback() for cid in channel_ids}
        if not channel_ids:
            return out
        net = func.sum(case((PostVote.value == "up", 1), (PostVote.value == "down", -1), else_=0))
        with self.db.session() as session:
            rows = session.execute(
                select(Post.channel_id, Post.paper_id, net, func.max(PostVote.updated_at))
                .join(PostVote, PostVote.post_id == Post.id)
                .where(Post.channel_id.in_(channel_ids), PostVote.slot == "opinion")
                .group_by(Post.channel_id, Post.paper_id)
            ).all()
        # Per channel: (latest vote, paper id) of the papers it liked, and disliked.
        liked: dict[int, list[tuple[datetime, int]]] = {cid: [] for cid in channel_ids}
        disliked: dict[int, list[tuple[datetime, int]]] = {cid: [] for cid in channel_ids}
        for channel_id, paper_id, score, latest in rows:
            if score:
                (liked if score > 0 else disliked)[channel_id].append((latest, paper_id))
        return {
            cid: Feedback(_latest(liked[cid]), _latest(disliked[cid])) for cid in channel_ids
        }

    def top(self, channel_id: int, since: datetime, limit: int = 10) -> list[tuple[Post, Tally]]:
        """The channel's most wanted posts since `since`: most up votes, then reads."""
        with self.db.session() as session:
            posts = list(
                session.scalars(
                    select(Post).where(Post.channel_id == channel_id, Post.state == "sent", Post.posted_at >= since)
                )
            )
        tallies = self.tallies([p.id for p in posts])
        ranked = sorted(posts, key=lambda p: (-tallies[p.id].up, tallies[p.id].down, -tallies[p.id].read, -p.id))
        return [(p, tallies[p.id]) for p in ranked[:limit] if tallies[p.id].up or tallies[p.id].read]

    def participation(self, channel_id: int, since: datetime) -> dict[str, object]:
        with self.db.session() as session:
            posts = session.scalar(
                select(func.count(Post.id)).where(Post.channel_id == channel_id, Post.state == "sent",
                                                  Post.posted_at >= since)
            )
            rows = session.execute(
                select(PostVote.user_id, func.count())
                .join(Post, Post.id == PostVote.post_id)
                .where(Post.channel_id == channel_id, Post.posted_at >= since)
                .group_by(PostVote.user_id)
                .order_by(func.count().desc(), PostVote.user_id)
            ).all()
        return {"posts": posts or 0, "votes": sum(c for _, c in rows), "voters": len(rows), "top_voters": rows[:5]}


def record_vote(session: Session, post_id: int, user_id: str, value: str, now: datetime) -> None:
    """`vote` inside the caller's transaction (reactions check their order in the same one)."""
    if value == "none":
        session.execute(delete(PostVote).where(PostVote.post_id == post_id, PostVote.user_id == user_id))
    else:
        slot = "read" if value == "read" else "opinion"
        _upsert(session, {"post_id": post_id, "user_id": user_id, "slot": slot, "value": value,
                          "created_at": now, "updated_at": now})


def _latest(pairs: list[tuple[datetime, int]]) -> tuple[int, ...]:
    return tuple(pid for _, pid in sorted(pairs, key=lambda p: p[0], reverse=True)[:FEEDBACK_PAPERS])


def _upsert(session: Session, row: dict[str, object]) -> None:
    statement = upsert_insert(session, PostVote).values(row)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["post_id", "user_id", "slot"],
            set_={"value": statement.excluded.value, "updated_at": statement.excluded.updated_at},
        )
    )


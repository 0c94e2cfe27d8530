"""What one channel has seen, gathered once for its archive page, its export and its
search: the posts with their tallies and notes, the reading queue, past meetings, polls,
the votes over time and the last weekly digests. Every query names the channel: nothing of another channel is
ever read here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.cards.cards import authors_display, paper_link, venue_line
from bot.cards.latex import readable
from bot.channels.channels import ChannelSettings
from bot.corpus.library import Library
from bot.messages import ChannelRef
from bot.search.tokens import Tokenizer
from bot.services.models import (
    Digest,
    Meeting,
    PaperNote,
    Poll,
    PollOption,
    PollVote,
    Post,
    PostVote,
    QueueItem,
)
from bot.services.votes import Tally, Votes
from store import Database
from store.database import as_utc
from store.models import Channel, Paper

POSTS_SHOWN = 1000  # a page, not a dump: the export has everything
POLLS_SHOWN = 100
MEETINGS_SHOWN = 200
PREVIEW_CHARS = 600
DIGESTS_SHOWN = 10


@dataclass(frozen=True)
class Note:
    user: str
    day: date
    text: str


@dataclass
class Entry:
    """A paper as the channel saw it: the card's fields, the post's date and tally (when
    it was posted here), the channel's notes, and the discussion thread's link."""

    paper: Paper
    title: str
    url: str | None
    authors: str
    venue: str
    abstract: str
    posted: date | None = None
    tally: Tally | None = None
    notes: list[Note] = field(default_factory=list)
    discussion: str | None = None

    @property
    def paper_id(self) -> int:
        return self.paper.id


@dataclass(frozen=True)
class MeetingEntry:
    day: date
    starts_at: datetime
    paper: Entry | None
    presenter: str | None
    # Only for meetings to come (the archive's "Upcoming"): local start, length, where.
    local_start: datetime | None = None
    length: str = ""
    place: str | None = None
    link: str | None = None


@dataclass(frozen=True)
class PollEntry:
    opened: datetime
    closed: datetime | None
    state: str
    options: list[tuple[int, str, int, bool, str | None]]  # position, title, votes, won, link

    @property
    def name(self) -> str:
        """The poll as members know it, by what it offered: "Zebrafish … or Marmot …"."""
        return " or ".join(f"“{_short(title)}”" for _, title, _, _, _ in self.options) or "a poll without options"


@dataclass(frozen=True)
class DigestEntry:
    """A weekly digest that went out (bot/digest keeps what it said): its date, heading
    and (title, lines) sections; a quiet week has its one line and no sections."""

    day: date
    text: str
    sections: list[tuple[str, list[str]]]


@dataclass
class ChannelRecord:
    channel: ChannelSettings
    posts: list[Entry]
    noted: list[Entry]  # papers with notes here that were never posted here
    queue: list[Entry]
    meetings: list[MeetingEntry]
    polls: list[PollEntry]
    weekly_votes: list[tuple[date, int, int]]  # Monday of the week, up, down
    digests: list[DigestEntry] = field(default_factory=list)  # the latest first

    def read(self) -> list[Entry]:
        """What the channel read: its posts, then meeting papers and noted papers, once each."""
        seen: dict[int, Entry] = {}
        extra = [m.paper for m in self.meetings if m.paper] + self.noted
        for entry in [*self.posts, *extra]:
            seen.setdefault(entry.paper_id, entry)
        return list(seen.values())


def posted_note(entry: Entry, channel: ChannelRef | None) -> str:
    """Where the paper was read, for an export's note: "Posted in slack:T1:C2 on
    2026-10-01 (3 up, 0 down, 1 read)"; nothing for a collection or the library."""
    if channel is None:
        return ""
    if entry.posted is None:
        return f"Read in {channel.key()}"
    tally = entry.tally
    votes = f" ({tally.up} up, {tally.down} down, {tally.read} read)" if tally else ""
    return f"Posted in {channel.key()} on {entry.posted:%Y-%m-%d}{votes}"


def entry_of(paper: Paper) -> Entry:
    """A paper as any export writes it, outside a channel (a collection, the library)."""
    return _entry(paper, [])


def discussion_url(ref: ChannelRef, message_ref: str | None) -> str | None:
    """A link to a post's message (its thread holds the discussion), where the platform
    has one: Discord's jump URL, Slack's permalink path. Console posts have none."""
    if not message_ref:
        return None
    if ref.platform == "discord" and "/" in message_ref:
        channel, _, message = message_ref.partition("/")
        if channel.isdigit() and message.isdigit() and ref.workspace.isdigit():
            return f"https://discord.com/channels/{ref.workspace}/{channel}/{message}"
    if ref.platform == "slack" and message_ref.replace(".", "").isdigit():
        return f"https://slack.com/archives/{ref.channel}/p{message_ref.replace('.', '')}"
    return None


class Recorder:
    """Reads a channel's record; services come in through the constructor."""

    def __init__(self, db: Database, library: Library, votes: Votes):
        self.db = db
        self.library = library
        self.votes = votes

    def find(self, ref: ChannelRef) -> ChannelSettings | None:
        """The channel named, if paperclub has seen it (nothing is created)."""
        with self.db.session() as session:
            row = session.scalar(select(Channel).where(Channel.platform == ref.platform,
                                                       Channel.workspace == ref.workspace,
                                                       Channel.channel == ref.channel))
            return ChannelSettings.of(row) if row is not None else None

    def record(self, channel: ChannelSettings) -> ChannelRecord:
        cid = channel.id
        with self.db.session() as session:
            posts = list(session.scalars(select(Post).where(Post.channel_id == cid, Post.state == "sent")
                                         .order_by(Post.posted_at.desc(), Post.id.desc()).limit(POSTS_SHOWN)))
            notes = list(session.scalars(select(PaperNote).where(PaperNote.channel_id == cid)
                                         .order_by(PaperNote.created_at, PaperNote.id)))
            queue = list(session.scalars(select(QueueItem).where(QueueItem.channel_id == cid,
                                                                 QueueItem.state == "queued")
                                         .order_by(QueueItem.added_at, QueueItem.id)))
            meetings = list(session.scalars(select(Meeting).where(Meeting.channel_id == cid)
                                            .order_by(Meeting.starts_at.desc()).limit(MEETINGS_SHOWN)))
            polls = _polls(session, cid)
            digests = list(session.scalars(select(Digest).where(Digest.channel_id == cid,
                                                                Digest.state.in_(("posted", "quiet")))
                                           .order_by(Digest.due_at.desc()).limit(DIGESTS_SHOWN)))
            votes = session.execute(select(PostVote.created_at, PostVote.value)
                                    .join(Post, Post.id == PostVote.post_id)
                                    .where(Post.channel_id == cid, PostVote.slot == "opinion")).all()
        wanted = {p.paper_id for p in posts} | {n.paper_id for n in notes} | {q.paper_id for q in queue}
        wanted |= {m.paper_id for m in meetings if m.paper_id} | {o.paper_id for _, opts, _ in polls for o in opts}
        papers = self.library.get_many(wanted)
        by_paper: dict[int, list[Note]] = {}
        for n in notes:
            by_paper.setdefault(n.paper_id, []).append(Note(n.user_id, _utc(n.created_at).date(), n.text))
        tallies = self.votes.tallies([p.id for p in posts])

        def entry(paper_id: int) -> Entry | None:
            paper = papers.get(paper_id)
            return _entry(paper, by_paper.get(paper_id, [])) if paper else None

        post_entries = []
        for post in posts:
            made = entry(post.paper_id)
            if made is not None:
                made.posted, made.tally = _utc(post.posted_at).date(), tallies[post.id]
                made.discussion = discussion_url(channel.ref, post.message_ref)
                post_entries.append(made)
        posted = {p.paper_id for p in posts}
        noted = [e for pid in by_paper if pid not in posted and (e := entry(pid))]
        return ChannelRecord(
            channel=channel,
            posts=post_entries,
            noted=noted,
            queue=[e for q in queue if (e := entry(q.paper_id))],
            meetings=[MeetingEntry(m.local_date, _utc(m.starts_at), entry(m.paper_id) if m.paper_id else None,
                                   m.presenter) for m in meetings],
            polls=[_poll_entry(poll, options, counts, papers) for poll, options, counts in polls],
            weekly_votes=_weekly(votes),
            digests=[_digest_entry(d) for d in digests],
        )


def _digest_entry(row: Digest) -> DigestEntry:
    said = row.body or {}
    return DigestEntry(_utc(row.due_at).date(), str(said.get("text", "")),
                       [(str(s.get("title", "")), [str(line) for line in s.get("lines", [])])
                        for s in said.get("sections", [])])


def _utc(moment: datetime) -> datetime:
    """A stored time in UTC (PostgreSQL hands it back in the session's zone, SQLite naive)."""
    return as_utc(moment).astimezone(timezone.utc)


def _entry(paper: Paper, notes: list[Note]) -> Entry:
    return Entry(paper=paper, title=readable(paper.title), url=paper_link(paper),
                 authors=authors_display(paper.authors), venue=venue_line(paper),
                 abstract=readable(_preview(paper.abstract)), notes=notes)


def _preview(text: str) -> str:
    """The abstract's opening, cut at a space: the page shows ~400 characters, and turning
    LaTeX into text is the slow part of a page of a thousand posts."""
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS].rsplit(" ", 1)[0] + " …"


def _polls(session: Session, channel_id: int) -> list[tuple[Poll, list[PollOption], Counter[int]]]:
    polls = list(session.scalars(select(Poll).where(Poll.channel_id == channel_id)
                                 .order_by(Poll.created_at.desc(), Poll.id.desc()).limit(POLLS_SHOWN)))
    out = []
    for poll in polls:
        options = list(session.scalars(select(PollOption).where(PollOption.poll_id == poll.id)
                                       .order_by(PollOption.position)))
        if poll.state == "closed":
            counts = Counter({int(k): v for k, v in (poll.result or {}).items()})
        else:  # still open: the votes so far
            counts = Counter(session.scalars(select(PollVote.position).where(PollVote.poll_id == poll.id)))
        out.append((poll, options, counts))
    return out


def _poll_entry(poll: Poll, options: list[PollOption], counts: Counter[int], papers: dict[int, Paper]) -> PollEntry:
    shown = [(o.position, readable(papers[o.paper_id].title) if o.paper_id in papers else "(paper removed)",
              counts.get(o.position, 0), o.paper_id == poll.winner_paper_id and poll.state == "closed",
              paper_link(papers[o.paper_id]) if o.paper_id in papers else None)
             for o in options]
    closed = _utc(poll.closed_at) if poll.closed_at else None
    return PollEntry(_utc(poll.created_at), closed, poll.state, shown)


def _short(title: str, words: int = 6) -> str:
    """A title's first words, for a poll's name: "Zebrafish Retina Regeneration as Sparse Coding" whole,
    a long one cut at a word with an ellipsis."""
    cut = title.split()
    return title if len(cut) <= words else " ".join(cut[:words]) + " …"


def _weekly(votes: Sequence[tuple[datetime, str]]) -> list[tuple[date, int, int]]:
    """Up and down votes per week (weeks start on Monday, UTC), oldest first, with the
    weeks without votes in between, so the picture's x axis is time."""
    if not votes:
        return []
    weeks: dict[date, list[int]] = {}
    for created, value in votes:
        day = _utc(created).date()
        monday = day - timedelta(days=day.weekday())
        counts = weeks.setdefault(monday, [0, 0])
        counts[0 if value == "up" else 1] += 1
    first, last = min(weeks), max(weeks)
    span = [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)]
    rows: list[tuple[date, int, int]] = []
    for week in span:
        up, down = weeks.get(week, [0, 0])
        rows.append((week, up, down))
    return rows


def matches(entry: Entry, query_terms: set[str], tokenizer: Tokenizer) -> bool:
    """Whether every term of the query is in the paper's title, authors, venue,
    abstract or this channel's notes on it (stemmed as search stems)."""
    text = " ".join([entry.title, " ".join(entry.paper.authors), entry.venue, entry.paper.abstract,
                     *(n.text for n in entry.notes)])
    return query_terms <= set(tokenizer.tokens(text))

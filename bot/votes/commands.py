"""Vote, poll and queue commands: vote, nominate, poll, queue, top, stats.

Like every command, each handler checks everything before it writes, so a refused
command changes nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from bot.cards.cards import card
from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings
from bot.channels.schedule import shown_at
from bot.corpus.library import Library
from bot.feature import DigestSection, Feature, Kit
from bot.grammar import (
    Command,
    NotAllowed,
    Param,
    UsageError,
    always,
    first_word_in,
    looks_like_number,
    number,
    require_manager,
)
from bot.messages import Action, Deliver, Incoming, Reply, counted
from bot.search.engine import SearchBackend
from bot.search.query import Query, QueryError
from bot.services.meetings import Meetings
from bot.services.polls import Option, PollRefused, Polls, PollView
from bot.services.posts import Posts
from bot.services.votes import POST_VOTES, Votes
from store.models import Paper

log = logging.getLogger(__name__)

VOTE_USAGE = "Give the paper's number (on its card) and your vote, e.g. `vote 12 up`."
POLL_OPTIONS_DEFAULT = 4
POLL_OPTIONS_MAX = 10  # Discord's native polls and a readable message both stop here
POLL_DURATION_DEFAULT = timedelta(hours=48)
POLL_DURATION_MIN = timedelta(minutes=10)
POLL_DURATION_MAX = timedelta(days=14)
DAYS_DEFAULT = 30
DAYS_MAX = 3650
# What a vote button the core drew can say (bot/services/replies.py, this module's polls):
# a vote on a post or a poll. A click carrying anything else was not made by us.
VOTE_BUTTON = re.compile(r"vote ([0-9]{1,10}) (up|down|read|none|[0-9]{1,2})")
_DURATION = re.compile(r"^([0-9]{1,4})([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class VotesFeature(Feature):
    """Votes on posts, polls on what to read next, the reading queue, and what the
    channel wants most."""

    name = "votes"

    def __init__(
        self,
        channels: Channels,
        daily: Posts,
        search: SearchBackend,
        library: Library,
        votes: Votes,
        polls: Polls,
        meetings: Meetings,
        clock: Callable[[], datetime],
    ):
        self.channels = channels
        self.daily = daily
        self.search = search
        self.library = library
        self.votes = votes
        self.polls = polls
        self.meetings = meetings
        self.clock = clock

    # --- what the core asks of the feature ---------------------------------------------------

    @classmethod
    def build(cls, kit: Kit) -> VotesFeature:
        return cls(kit.channels, kit.posts, kit.search, kit.library, kit.votes, kit.polls, kit.meetings, kit.clock)

    def tick(self, now: datetime, deliver: Deliver, platforms: tuple[str, ...],
             stopping: Callable[[], bool]) -> dict[str, int]:
        return {"polls_closed": len(self.close_due(now, deliver, platforms))}

    def settings(self, channel: ChannelSettings) -> list[str]:
        poll = self.polls.open_poll(channel.id)
        return [self.poll_status(poll, self.meetings.zone_of(channel)) if poll else "Poll: none open."]

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """The poll: its result if it closed this week, else the open one with its
        options (news when it opened this week)."""
        closed = self.polls.closed_between(channel.id, since, until)
        poll = closed or self.polls.open_poll(channel.id)
        if poll is None:
            return None
        papers = self.library.get_many(o.paper_id for o in poll.options)
        counts = ({int(k): v for k, v in poll.result.items()} if closed else self.polls.counts(poll.id))
        lines = [f"{o.position}. [{o.paper_id}] {readable(papers[o.paper_id].title)}: "
                 f"{_votes(counts.get(o.position, 0))}" for o in poll.options if o.paper_id in papers]
        if closed:
            winner = papers.get(poll.winner_paper_id) if poll.winner_paper_id else None
            lines.append(f"Winner: [{winner.id}] {readable(winner.title)}, now in the reading queue."
                         if winner else "No votes, so nothing joined the reading queue.")
            title = f"Poll {poll.id} closed"
        else:
            lines.append(f"Open until {shown_at(poll.closes_at, self.meetings.zone_of(channel))}: vote with "
                         "`vote OPTION`, e.g. `vote 1`.")
            title = f"Poll {poll.id} is open"
        opened = poll.created_at is not None and poll.created_at >= since
        return DigestSection(title, lines, papers=tuple(o.paper_id for o in poll.options),
                             news=bool(closed) or opened)

    def button(self, value: str) -> str | None:
        """The vote buttons under a post (`vote POST up`) and a poll (`vote POLL 2`): a
        post's button names the post, not the paper."""
        action = VOTE_BUTTON.fullmatch(value)
        if action is None:
            return None
        target, choice = action.groups()
        return value if choice.isdigit() else f"vote post:{target} {choice}"

    def redraw(self, post_id: int) -> tuple[str | None, Reply] | None:
        tally = self.votes.tallies([post_id])[post_id]
        return self.daily.rerender(post_id, tally.describe())

    def remember(self, reply: Reply, message_ref: str) -> bool:
        """A `poll` the adapter posted itself: results go to its thread."""
        if reply.poll_id is None or not reply.actions:
            return False
        self.polls.set_message(reply.poll_id, message_ref)
        return True

    def withdraw(self, reply: Reply) -> bool:
        """A `poll` the adapter could not post must not block the next one."""
        if reply.poll_id is None or not reply.actions:
            return False
        self.polls.withdraw(reply.poll_id)
        return True

    # --- commands ---------------------------------------------------------------------------

    def commands(self) -> list[Command]:
        return [
            Command("vote", "vote ID up|down|read|none · vote OPTION · vote POLL_ID OPTION",
                    "Vote on a paper posted here, by the number on its card (want to discuss / not for "
                    "us / I read it), or for an option of the open poll.", "vote 12 up", self.vote,
                    brief="Vote on a paper posted here, or for an option of the open poll.",
                    params=(Param("target", "the paper's number (on its card); alone, an option of the open poll",
                                  kind="number", required=True, low=1),
                            Param("choice", "up, down, read or none on a paper", suggest=POST_VOTES)),
                    private=True, answered_later=True),  # a vote redraws the voted message
            Command("nominate", "nominate ID|QUERY", "Propose a paper for the next reading poll.",
                    "nominate graph biconnectivity", self.nominate,
                    params=(Param("paper", "a paper ID, or words to search for (the best match is nominated)",
                                  required=True),)),
            Command("poll", "poll [N] [DURATION] · poll close",
                    "Start a poll on what to read next (N options, default 4; DURATION like 48h, 2d) or "
                    "close it (managers).", "poll 4 48h", self.poll, always, answered_later=True,
                    brief="The open poll; or start one, or close it (managers).",
                    params=(Param("options", "how many papers to choose from (default 4)", kind="number", low=2,
                                  high=POLL_OPTIONS_MAX),
                            Param("duration", "how long it runs: 90m, 48h, 3d, 1w (default 48h)"),
                            Param("close", "close the open poll now", kind="flag")),
                    written="{close} {options} {duration}"),
            Command("queue", "queue · queue done ID · queue remove ID",
                    "The reading queue; mark a paper discussed (managers or its presenter), or remove it "
                    "(managers).", "queue done 42", self.queue, first_word_in("done", "remove"),
                    brief="The reading queue; mark a paper discussed, or remove it (managers).",
                    params=(Param("action", "done or remove (leave empty to list the queue)",
                                  choices=("done", "remove")),
                            Param("paper", "the paper's ID", kind="number", low=1))),
            Command("top", "top [DAYS]", "The channel's most wanted posts (default: the last 30 days).",
                    "top 7", self.top, brief="The channel's most wanted posts.",
                    params=(_days_back(),)),
            Command("stats", "stats [DAYS]", "Who takes part: posts, votes, voters (default 30 days).",
                    "stats", self.stats, brief="Who takes part: posts, votes, voters.",
                    params=(_days_back(),)),
        ]

    # --- votes ------------------------------------------------------------------------

    def vote(self, incoming: Incoming, args: str) -> Reply:
        """Typed: `vote ID up` names the paper by the number on its card (or any id the
        library knows); `vote OPTION` the open poll's option; `vote POLL_ID OPTION` a
        poll. A button's value names the post itself (`vote post:ID up`: see
        PaperClub.click), so buttons on old messages keep working."""
        words = args.split()
        if len(words) == 1 and looks_like_number(words[0]):
            return self._vote_open_poll(incoming, words[0])
        if len(words) != 2:
            raise UsageError(VOTE_USAGE)
        reference, choice = words[0], words[1].lower()
        clicked = reference.startswith("post:")
        if clicked:
            reference = reference.removeprefix("post:")
        elif choice in POST_VOTES:  # a paper, by its number or an id such as arXiv:1706.03762
            return self._vote_paper(incoming, reference, choice)
        if not looks_like_number(reference):
            raise UsageError(VOTE_USAGE)
        target = number(reference)
        if target is None:
            return Reply(text=f"Nothing numbered {reference} was posted in this channel.", ephemeral=True,
                         ok=False)
        channel = self.channels.get(incoming.channel)
        if clicked and choice in POST_VOTES:
            return self._vote_post(channel.id, target, incoming.user.user_id, choice)
        if looks_like_number(choice) and not clicked:
            position = number(choice, 1, POLL_OPTIONS_MAX)
            if position is None:
                raise UsageError(f"A poll's options are numbered 1 to {POLL_OPTIONS_MAX} at most.")
            return self._vote_poll(channel.id, target, incoming.user.user_id, position)
        raise UsageError(f"`{words[1]}` is not a vote: up, down, read or none for a post; an option number for a poll.")

    def _vote_paper(self, incoming: Incoming, reference: str, choice: str) -> Reply:
        target = self._paper_number(reference)
        if target is None:
            return Reply(text=f"Nothing numbered {reference} was posted in this channel.", ephemeral=True,
                         ok=False)
        channel = self.channels.get(incoming.channel)
        post_id = self._post_of_paper(channel.id, target)
        if post_id is None:
            return Reply(text=f"Paper {target} has not been posted in this channel; `history` lists the "
                         "papers you can vote on.", ephemeral=True, ok=False)
        return self._vote_post(channel.id, post_id, incoming.user.user_id, choice)

    def _paper_number(self, reference: str) -> int | None:
        """A paper's number from what a member typed: the number itself, or any id the
        library knows (arXiv:1706.03762, a DOI, a link)."""
        if looks_like_number(reference):
            return number(reference)
        paper = self.library.find(reference)
        return paper.id if paper is not None else None

    def _post_of_paper(self, channel_id: int, paper_id: int) -> int | None:
        post = self.votes.post_of_paper(paper_id, channel_id)
        return post.id if post is not None else None

    def _vote_post(self, channel_id: int, post_id: int, user_id: str, choice: str) -> Reply:
        post = self.votes.post_in_channel(post_id, channel_id)
        if post is None:
            return Reply(text="That post is not in this channel.", ephemeral=True, ok=False)
        tally = self.votes.vote(post_id, user_id, choice, self.clock())
        said = {"up": "You want to discuss it", "down": "Not for you, noted", "read": "Marked as read",
                "none": "Your votes on it are withdrawn"}[choice]
        return Reply(text=f"{said}. Paper {post.paper_id}: {tally.describe()}", ephemeral=True, post_id=post_id)

    def _vote_open_poll(self, incoming: Incoming, option: str) -> Reply:
        channel = self.channels.get(incoming.channel)
        poll = self.polls.open_poll(channel.id)
        if poll is None:
            return Reply(text="No poll is open here; to vote on a paper, give its number and your vote: "
                         "`vote 12 up`.", ephemeral=True, ok=False)
        position = number(option, 1, POLL_OPTIONS_MAX)
        if position is None:
            raise UsageError(f"Poll {poll.id}'s options are numbered 1 to {len(poll.options)}.")
        return self._vote_poll(channel.id, poll.id, incoming.user.user_id, position)

    def _vote_poll(self, channel_id: int, poll_id: int, user_id: str, position: int) -> Reply:
        try:
            poll = self.polls.vote(poll_id, channel_id, user_id, position, self.clock())
        except PollRefused as refusal:
            return Reply(text=str(refusal), ephemeral=True, ok=False, poll_id=poll_id)
        option = next(o for o in poll.options if o.position == position)
        title = readable(self.library.get_many([option.paper_id])[option.paper_id].title)
        return Reply(text=f"Your vote in poll {poll_id}: option {position}, “{title}”.", ephemeral=True,
                     poll_id=poll_id)

    # --- nominations and polls --------------------------------------------------------------

    def nominate(self, incoming: Incoming, args: str) -> Reply:
        if not args.strip():
            raise UsageError("Give a paper ID or words to search for.")
        channel = self.channels.get(incoming.channel)
        paper, found_by = self._paper_for(args.strip())
        try:
            new = self.polls.nominate(channel.id, paper.id, incoming.user.user_id, self.clock())
        except PollRefused as refusal:
            return Reply(text=str(refusal), ephemeral=True, ok=False)
        how = f" (the best match for `{args.strip()}`)" if found_by else ""
        if not new:
            return Reply(text=f"“{readable(paper.title)}” [{paper.id}] is already nominated.")
        return Reply(text=f"Nominated “{readable(paper.title)}” [{paper.id}]{how} for the next poll.")

    def _paper_for(self, ref: str) -> tuple[Paper, bool]:
        """The paper `ref` names (its ID or another id), else the best match for `ref` as a
        search; and whether it was found by searching."""
        if len(ref.split()) == 1:
            paper = self.library.find(ref) if number(ref) is not None or not looks_like_number(ref) else None
            if paper is not None:
                return paper, False
            if looks_like_number(ref):
                raise UsageError(f"No paper with ID `{ref}`.")
        try:
            hits = self.search.current().search(Query.parse(ref), 1)
        except QueryError as problem:
            raise UsageError(str(problem)) from None
        if not hits:
            raise UsageError(f"No paper matches `{ref}`.")
        return self.library.get_many([hits[0].paper_id])[hits[0].paper_id], True

    def poll(self, incoming: Incoming, args: str) -> Reply:
        words = args.lower().split()
        if words == ["close"]:
            require_manager(incoming, "close a poll")
            return self._close_here(incoming)
        if not words:  # the open poll, for anyone whose message has scrolled away
            shown = self._open_poll_status(incoming)
            if shown is not None:
                return shown
        count, duration = _poll_arguments(words)
        require_manager(incoming, "start a poll")
        channel = self.channels.get(incoming.channel)
        existing = self.polls.open_poll(channel.id)
        if existing is not None:
            return Reply(text=f"Poll {existing.id} is still open; `poll close` ends it first.", ephemeral=True,
                         ok=False, poll_id=existing.id)
        options = self._options(channel, count)
        if len(options) < 2:
            return Reply(text="Not enough papers for a poll: nominate some with `nominate ID|QUERY`.",
                         ephemeral=True, ok=False)
        now = self.clock()
        poll = self.polls.create(channel.id, incoming.user.user_id, options, now, now + duration)
        return self.poll_reply(poll, self.meetings.zone_of(channel))

    def _options(self, channel: ChannelSettings, count: int) -> list[Option]:
        """Nominations first (oldest first), then the channel's best unposted picks."""
        nominated = self.polls.open_nominations(channel.id)[:count]
        options = [Option(i, pid, at) for i, (pid, at) in enumerate(nominated, 1)]
        taken = {o.paper_id for o in options} | self.polls.queued_papers(channel.id)
        history = self.daily.histories([channel.id])[channel.id]
        feedback = self.votes.feedback([channel.id])[channel.id]
        index = self.search.current()
        while len(options) < count:
            pick = self.daily.picker.choose(index, channel, history[0] | taken, history[1], feedback=feedback)
            if pick is None:
                break
            options.append(Option(len(options) + 1, pick.paper_id, None))
            taken.add(pick.paper_id)
        return options

    def _open_poll_status(self, incoming: Incoming) -> Reply | None:
        channel = self.channels.get(incoming.channel)
        poll = self.polls.open_poll(channel.id)
        if poll is None:
            if incoming.user.is_manager:
                return None  # a manager's bare `poll` starts one
            return Reply(text="No poll is open here; a manager starts one with `poll [N] [DURATION]`.",
                         ephemeral=True)
        return Reply(text=self.poll_status(poll, self.meetings.zone_of(channel)), ephemeral=True, poll_id=poll.id)

    def poll_status(self, poll: PollView, zone: str) -> str:
        """An open poll's options with the votes so far, and how to vote; its deadline in
        the channel's `zone`."""
        papers = self.library.get_many(o.paper_id for o in poll.options)
        counts = self.polls.counts(poll.id)
        lines = [f"{o.position}. [{o.paper_id}] {readable(papers[o.paper_id].title)}: "
                 f"{_votes(counts.get(o.position, 0))}" for o in poll.options if o.paper_id in papers]
        return (f"Poll {poll.id}, open until {shown_at(poll.closes_at, zone)}:\n" + "\n".join(lines)
                + "\nVote with `vote OPTION`, e.g. `vote 1`.")

    def poll_reply(self, poll: PollView, zone: str) -> Reply:
        papers = self.library.get_many(o.paper_id for o in poll.options)
        tokenizer = self.search.tokenizer
        cards = [card(papers[o.paper_id], tokenizer) for o in poll.options]
        for option, paper_card in zip(poll.options, cards, strict=True):
            # The option's number is a label of its own (a reason would read "Why: Option 1").
            paper_card.option = f"Option {option.position}"
            paper_card.reason = "Nominated by a member." if option.nominated_at else ""
        return Reply(
            open_thread=f"Poll {poll.id}: what do we read next?",
            text=(f"Poll {poll.id}: what do we read next? Vote with the buttons or `vote OPTION` "
                  f"until {shown_at(poll.closes_at, zone)}."),
            cards=cards,
            actions=[Action(f"{o.position}. {_short(readable(papers[o.paper_id].title))}",
                            f"vote {poll.id} {o.position}") for o in poll.options],
            poll_id=poll.id,
        )

    def _close_here(self, incoming: Incoming) -> Reply:
        channel = self.channels.get(incoming.channel)
        poll = self.polls.open_poll(channel.id)
        if poll is None:
            return Reply(text="There is no open poll here.", ephemeral=True, ok=False)
        closed = self.polls.close(poll.id, self.clock())
        if closed is None:
            return Reply(text=f"Poll {poll.id} was closed a moment ago.", ephemeral=True, ok=False)
        return self.result_reply(closed)

    def result_reply(self, poll: PollView) -> Reply:
        papers = self.library.get_many(o.paper_id for o in poll.options)
        lines = [f"{o.position}. {readable(papers[o.paper_id].title)}: {_votes(poll.result.get(str(o.position), 0))}"
                 for o in poll.options]
        if poll.winner_paper_id is None:
            verdict = "No votes, so nothing joins the reading queue."
        else:
            verdict = f"Winner: “{readable(papers[poll.winner_paper_id].title)}”, now in the reading queue."
        return Reply(text=f"Poll {poll.id} closed.\n" + "\n".join(lines) + f"\n{verdict}", in_thread=True,
                     reply_to=poll.message_ref, poll_id=poll.id)

    def close_due(self, now: datetime, deliver: Deliver, platforms: Iterable[str]) -> list[PollView]:
        """Close the polls whose deadline passed and post each result in its thread."""
        platforms = set(platforms)
        closed = []
        due = self.polls.due(now)
        channels = self.channels.by_ids([channel_id for _, channel_id in due])
        for poll_id, channel_id in due:
            channel = channels.get(channel_id)
            if channel is None or channel.ref.platform not in platforms:
                continue
            result = self.polls.close(poll_id, now)
            if result is None:  # another process closed it first
                continue
            closed.append(result)
            try:
                deliver(channel.ref, self.result_reply(result))
            except Exception:  # the result is counted and kept; one channel must not stop the tick
                log.exception("posting the result of poll %s to %s failed", poll_id, channel.ref.key())
        return closed

    # --- queue, top, stats -----------------------------------------------------------------

    def queue(self, incoming: Incoming, args: str) -> Reply:
        words = args.lower().split()
        channel = self.channels.get(incoming.channel)
        if not words:
            items = self.polls.queue(channel.id)
            if not items:
                return Reply(text="The reading queue is empty: `poll` lets the channel choose.")
            papers = self.library.get_many(i.paper_id for i in items)
            lines = [f"{n}. [{i.paper_id}] {readable(papers[i.paper_id].title)}" for n, i in enumerate(items, 1)]
            return Reply(text="Reading queue:\n" + "\n".join(lines))
        if len(words) != 2 or words[0] not in ("done", "remove"):
            raise UsageError("Say `queue`, `queue done ID` or `queue remove ID`.")
        paper_id = self._paper_number(words[1])
        if paper_id is None:
            return Reply(text=f"Paper {words[1]} is not in this channel's reading queue.", ephemeral=True, ok=False)
        if words[0] == "remove":
            require_manager(incoming, "remove papers from the queue")
        state = "done" if words[0] == "done" else "removed"
        presenter = self.meetings.presenter_of(channel.id, paper_id, self.clock()) if state == "done" else None
        if state == "done" and presenter != incoming.user.user_id and not incoming.user.is_manager:
            # Marking a paper discussed takes it off everyone's queue: the meeting's
            # presenter may, otherwise only a manager.
            raise NotAllowed("Only a channel manager, or the presenter of the meeting that "
                             "discussed it, can mark a paper discussed.")
        if not self.polls.mark(channel.id, paper_id, state, self.clock(), presenter):
            return Reply(text=f"Paper {paper_id} is not in this channel's reading queue.", ephemeral=True, ok=False)
        done = "marked as discussed" + (f", presented by @{presenter}" if presenter else "")
        return Reply(text=f"Paper {paper_id} {done if state == 'done' else 'removed from the queue'}.")

    def top(self, incoming: Incoming, args: str) -> Reply:
        days = _days(args)
        channel = self.channels.get(incoming.channel)
        ranked = self.votes.top(channel.id, self.clock() - timedelta(days=days))
        if not ranked:
            return Reply(text=f"No votes on posts here in the last {counted(days, 'day')}.")
        papers = self.library.get_many(p.paper_id for p, _ in ranked)
        lines = [f"{n}. [{p.paper_id}] {readable(papers[p.paper_id].title)} ({t.describe()})"
                 for n, (p, t) in enumerate(ranked, 1)]
        return Reply(text=f"Most wanted in the last {counted(days, 'day')}:\n" + "\n".join(lines))

    def stats(self, incoming: Incoming, args: str) -> Reply:
        days = _days(args)
        channel = self.channels.get(incoming.channel)
        numbers = self.votes.participation(channel.id, self.clock() - timedelta(days=days))
        posts, votes, members, top_voters = (numbers["posts"], numbers["votes"], numbers["voters"],
                                             numbers["top_voters"])
        # Votes.participation hands its numbers back as objects: counts, and (user, count) rows
        assert isinstance(posts, int) and isinstance(votes, int) and isinstance(members, int)
        assert isinstance(top_voters, list)
        voters = ", ".join(f"{user} ({count})" for user, count in top_voters) or "nobody yet"
        return Reply(
            text=(f"Last {counted(days, 'day')}: {counted(posts, 'post')}, {_votes(votes)} from "
                  f"{counted(members, 'member')}. Most active: {voters}. "
                  f"Reading queue: {counted(len(self.polls.queue(channel.id)), 'paper')}.")
        )


def _poll_arguments(words: list[str]) -> tuple[int, timedelta]:
    count, duration = POLL_OPTIONS_DEFAULT, POLL_DURATION_DEFAULT
    rest = list(words)
    if rest and looks_like_number(rest[0]):
        asked = number(rest.pop(0), 2, POLL_OPTIONS_MAX)
        if asked is None:
            raise UsageError(f"A poll has 2 to {POLL_OPTIONS_MAX} options.")
        count = asked
    if rest:
        duration = parse_duration(rest.pop(0))
    if rest:
        raise UsageError(f"`{rest[0]}` is not understood here.")
    return count, duration


def parse_duration(text: str) -> timedelta:
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"`{text}` is not a duration: use minutes, hours, days or weeks like 90m, 48h, 3d, 1w.")
    duration = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    if not POLL_DURATION_MIN <= duration <= POLL_DURATION_MAX:
        raise UsageError("A poll runs from 10 minutes to 14 days.")
    return duration


def _days(args: str) -> int:
    words = args.split()
    if not words:
        return DAYS_DEFAULT
    days = number(words[0], 1, DAYS_MAX) if len(words) == 1 else None
    if days is None:
        raise UsageError(f"DAYS is a number of days from 1 to {DAYS_MAX}, e.g. 7.")
    return days


def _votes(count: int) -> str:
    return counted(count, "vote")



def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _days_back() -> Param:
    """`top` and `stats` look back this many days."""
    return Param("days", f"how many days back (default {DAYS_DEFAULT})", kind="number", low=1, high=DAYS_MAX)

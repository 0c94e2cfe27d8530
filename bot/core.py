"""The platform-neutral bot: one `handle(Incoming) -> Reply` for every adapter."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timezone

from sqlalchemy.exc import InterfaceError, OperationalError

from bot.adding.commands import PER_HOUR, AddCommands
from bot.adding.providers import Providers
from bot.corpus.library import Library
from bot.cards.cards import card
from bot.channels.channels import Channels
from bot.daily.commands import ChannelCommands, describe_schedule, describe_topics
from bot.cards.latex import readable
from bot.daily.posts import DailyPosts, Deliver, TickReport
from bot.grammar import (
    LINE_CHARS,
    Command,
    NotAllowed,
    UsageError,
    clean_line,
    split_command,
    usage_reply,
)
from bot.meetings.commands import MeetingCommands
from bot.meetings.meetings import Meetings
from bot.memory.commands import MemoryCommands
from bot.memory.links import ChannelLinks
from bot.messages import Incoming, Reply
from bot.ops.logs import event
from bot.search.query import Query, QueryError
from bot.search.service import SearchService
from bot.votes.commands import VoteCommands
from bot.votes.polls import Polls
from bot.votes.reactions import Reaction, Reactions
from bot.votes.reactions import describe as describe_reactions
from bot.votes.votes import Votes

log = logging.getLogger(__name__)

SEARCH_RESULTS = 5
SIMILAR_RESULTS = 5
# What a member sees while the database is unreachable (a restart, a failover, a network
# cut): the bot stays up, and the pool reconnects by itself once the database answers.
DATABASE_DOWN = (
    "paperclub cannot reach its database just now, so this did not go through. "
    "Please try again in a minute."
)
# Errors that mean "the database is not answering", as opposed to a bug in a query.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
# What a button the core rendered can say (bot/daily/replies.py, bot/votes/commands.py):
# a vote on a post or a poll. A click carrying anything else was not made by us.
RENDERED_ACTION = re.compile(r"vote ([0-9]{1,10}) (up|down|read|none|[0-9]{1,2})")
# ... and the buttons under a paper added in chat (bot/adding/commands.py).
ADDED_ACTION = re.compile(r"(?:nominate|discuss) [0-9]{1,10}")
NOT_OUR_BUTTON = "That button is not one of paperclub's, so nothing was done."
# A bug of ours met a member's line: they get this, the log gets the traceback.
OUR_FAULT = (
    "Something went wrong on paperclub's side with that command; it has been logged for the "
    "operator. Please try again, or try `help`."
)


class PaperClub:
    """The core. Services come in through the constructor; nothing is global."""

    def __init__(
        self,
        library: Library,
        search: SearchService,
        channels: Channels,
        daily: DailyPosts,
        votes: Votes,
        polls: Polls,
        meetings: Meetings,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        public_url: str | None = None,  # PAPERCLUB_PUBLIC_URL: where the archive and calendar links point
        providers: Providers | None = None,  # where `add` fetches from; default: the real services
        add_per_hour: int = PER_HOUR,  # papers one member may add an hour
    ):
        self.library = library
        self.search_service = search
        self.tokenizer = search.tokenizer
        self.channels = channels
        self.daily = daily
        self.clock = clock
        self.adding = AddCommands(library, search, channels, daily, providers or Providers.from_env({}), clock,
                                  add_per_hour)
        self.vote_commands = VoteCommands(channels, daily, library, votes, polls, meetings, clock)
        self.memory_commands = MemoryCommands(channels, ChannelLinks(meetings.db), public_url, clock)
        self.meeting_commands = MeetingCommands(channels, meetings, library, clock,
                                                calendar_link=self.memory_commands.calendar)
        self.reactions = Reactions(channels, votes, clock)
        self.commands: dict[str, Command] = {
            c.name: c
            for c in [
                Command(
                    "help",
                    "help [COMMAND]",
                    "List the commands, or explain one.",
                    "help search",
                    self._help,
                ),
                Command(
                    "search",
                    "search QUERY [author:NAME] [track:oral] [in:COLLECTION] [tag:WORD]",
                    "Find the best-matching papers (BM25); filters narrow the results.",
                    'search diffusion robustness author:"yann lecun"',
                    self._search,
                ),
                Command("show", "show ID", "Show one paper's card with its notes.", "show 42", self._show),
                Command("similar", "similar ID", "Papers like this one.", "similar 42", self._similar),
                Command("settings", "settings", "This channel's settings in one place: schedule, topics, "
                        "collections, meeting, presenters, open poll.", "settings", self._settings),
                *ChannelCommands(channels, daily, library, clock).commands(),
                *self.vote_commands.commands(),
                *self.adding.commands(),
                *self.meeting_commands.commands(),
                *self.memory_commands.commands(),
                *self.reactions.commands(),
            ]
        }

    def tick(
        self,
        now: datetime,
        deliver: Deliver,
        platforms: Iterable[str],
        stopping: Callable[[], bool] = lambda: False,
    ) -> TickReport:
        """The scheduler's minute: due papers of the day, polls past their deadline,
        meeting reminders. Once `stopping()` is true no further paper of the day starts."""
        platforms = tuple(platforms)
        report = self.daily.tick(now, deliver, platforms, stopping)
        report.polls_closed = len(self.vote_commands.close_due(now, deliver, platforms))
        report.reminders = self.meeting_commands.send_reminders(now, deliver, platforms, self.daily.grace)
        return report

    def render_post(self, post_id: int) -> tuple[str | None, Reply] | None:
        """(message reference, the post with its current tally): what an adapter puts in
        place of the original message after a vote (chat.update, Message.edit)."""
        tally = self.vote_commands.votes.tallies([post_id])[post_id]
        return self.daily.rerender(post_id, tally.describe())

    def react(self, reaction: Reaction) -> int | None:
        """A reaction put on or taken off a message: a vote when the message is one of the
        channel's posts and the emoji one of the channel's. Returns the post whose tally
        changed (the adapter redraws it), else None. Logs one line when it counts."""
        post_id = self.reactions.react(reaction)
        if post_id is not None:
            event(log, "reaction", channel=reaction.channel.key(), user=reaction.user.user_id,
                  post=post_id, added=reaction.added)
        return post_id

    def remember_message(self, reply: Reply, message_ref: str) -> None:
        """An adapter posted `reply` itself (a `next` or `poll` answered in the channel):
        keep the message reference, so votes can update it and results go to its thread."""
        if reply.post_id is not None and reply.actions:
            self.daily.set_message(reply.post_id, message_ref)
        elif reply.poll_id is not None and reply.actions:
            self.vote_commands.polls.set_message(reply.poll_id, message_ref)

    def withdraw(self, reply: Reply) -> None:
        """An adapter could not post `reply` (a `next` or `poll` it sends itself): undo it,
        so the paper goes back to the pool and the poll does not block the next one."""
        if reply.post_id is not None and reply.actions:
            self.channels.forget_post(reply.post_id)
        elif reply.poll_id is not None and reply.actions:
            self.vote_commands.polls.withdraw(reply.poll_id)

    def handle(self, incoming: Incoming) -> Reply:
        """Answer one command; logs one line with the channel, command, outcome and time
        (never the arguments: they are what a member typed)."""
        started = time.perf_counter()
        text = clean_line(incoming.text)
        name, args = split_command(text)
        try:
            if len(text) > LINE_CHARS:
                reply = Reply(text=f"That line is {len(text):,} characters long; a command is at most "
                              f"{LINE_CHARS:,}.", ephemeral=True, ok=False)
            else:
                reply = self._with_notice(incoming, self._answer(incoming, name, args))
        except DATABASE_UNAVAILABLE as problem:
            log.warning("database unreachable while answering %s: %s", name or "help", type(problem).__name__)
            reply = Reply(text=DATABASE_DOWN, ephemeral=True, ok=False)
        except Exception:  # noqa: BLE001 - every line gets a reply; the traceback goes to the log
            log.exception("answering %s failed", name if name in self.commands else "unknown")
            reply = Reply(text=OUR_FAULT, ephemeral=True, ok=False)
        event(
            log, "command", channel=incoming.channel.key(), user=incoming.user.user_id,
            command=name if name in self.commands else "unknown", ok=reply.ok,
            ms=(time.perf_counter() - started) * 1000,
        )
        return reply

    def add_from_message(self, incoming: Incoming) -> Reply:
        """"Add to paperclub" on a message: `incoming.text` is the whole message; every
        paper link in it is added, and the answer (private) has their cards. Never raises."""
        started = time.perf_counter()
        try:
            reply = self.adding.from_message(incoming)
        except DATABASE_UNAVAILABLE as problem:
            log.warning("database unreachable while adding from a message: %s", type(problem).__name__)
            reply = Reply(text=DATABASE_DOWN, ephemeral=True, ok=False)
        except Exception:  # noqa: BLE001 - the member gets a reply; the traceback goes to the log
            log.exception("adding from a message failed")
            reply = Reply(text=OUR_FAULT, ephemeral=True, ok=False)
        event(log, "command", channel=incoming.channel.key(), user=incoming.user.user_id,
              command="add-message", ok=reply.ok, ms=(time.perf_counter() - started) * 1000)
        return reply

    def _with_notice(self, incoming: Incoming, reply: Reply) -> Reply:
        """The channel's waiting notice (why its schedule paused itself) before the
        answer, once; only the asking member sees it when the answer is private."""
        notice = self.channels.take_notice(incoming.channel)
        if notice:
            reply.text = f"{notice}\n\n{reply.text}" if reply.text else notice
        return reply

    def click(self, incoming: Incoming) -> Reply:
        """A button click, whose text is the value of the action it carries. Only the
        actions the core renders run; anything else (a crafted payload naming, say,
        `schedule off`) is refused with one log line and changes nothing."""
        if ADDED_ACTION.fullmatch(incoming.text):  # nominate / discuss: the command itself
            return self.handle(incoming)
        action = RENDERED_ACTION.fullmatch(incoming.text)
        if action is None:
            log.warning("refused a click from %s in %s: not a rendered action",
                        incoming.user.user_id, incoming.channel.key())
            return Reply(text=NOT_OUR_BUTTON, ephemeral=True, ok=False)
        target, choice = action.groups()
        if not choice.isdigit():  # a post's button names the post, not the paper
            incoming = replace(incoming, text=f"vote post:{target} {choice}")
        return self.handle(incoming)

    def _answer(self, incoming: Incoming, name: str, args: str) -> Reply:
        if not name:
            return self._help(incoming, "")
        command = self.commands.get(name)
        if command is None:
            return Reply(text=f"Unknown command `{name}`.\n{self._command_list()}", ephemeral=True, ok=False)
        try:
            return command.handler(incoming, args)
        except (UsageError, QueryError) as problem:
            return usage_reply(command, str(problem))
        except NotAllowed as refusal:
            return Reply(text=str(refusal), ephemeral=True, ok=False)

    # --- commands -------------------------------------------------------------------

    def _help(self, _incoming: Incoming, args: str) -> Reply:
        if args:
            command = self.commands.get(args.split()[0].lower())
            if command is None:
                raise UsageError(f"There is no command `{args.split()[0]}`.")
            return Reply(text=command.usage_text(), ephemeral=True)
        return Reply(text=self._command_list(), ephemeral=True)

    def _command_list(self) -> str:
        lines = ["paperclub commands (type them after /paper):"]
        lines += [f"  {c.usage.split(' · ')[0]:<44} {c.summary}" for c in self.commands.values()]
        lines.append("`help COMMAND` explains one, with an example.")
        return "\n".join(lines)

    def _search(self, _incoming: Incoming, args: str) -> Reply:
        query = Query.parse(args)
        if query.is_empty():
            raise UsageError("Say what to search for.")
        index = self.search_service.current()
        hits = index.search(query, SEARCH_RESULTS)
        spelling = index.spellcheck(query)  # unknown words and what they may have meant
        if not hits:
            return Reply(text=index.unknown_filter(query) or spelling.no_match(args))
        papers = self.library.get_many(h.paper_id for h in hits)
        cards = [card(papers[h.paper_id], self.tokenizer, h) for h in hits if h.paper_id in papers]
        text = f"Top {len(cards)} of {index.live_count():,} papers for `{args}`:"
        note = spelling.note()
        return Reply(text=f"{text}\n{note}" if note else text, cards=cards)

    def _show(self, incoming: Incoming, args: str) -> Reply:
        paper = self._paper_arg(args)
        shown = card(paper, self.tokenizer, full=True)
        shown.discussion = self.meeting_commands.notes_for(incoming, paper.id)
        shown.added_by = self.adding.added_by(incoming, paper.id)
        return Reply(text=f"Paper {paper.id}:", cards=[shown])

    def _similar(self, _incoming: Incoming, args: str) -> Reply:
        paper = self._paper_arg(args)
        hits = self.search_service.current().similar(paper.id, SIMILAR_RESULTS)
        if not hits:
            return Reply(text=f"Nothing in the corpus resembles paper {paper.id}.")
        papers = self.library.get_many(h.paper_id for h in hits)
        cards = [card(papers[h.paper_id], self.tokenizer, h) for h in hits if h.paper_id in papers]
        return Reply(text=f"Papers like {paper.id} “{readable(paper.title)}”:", cards=cards)

    def _settings(self, incoming: Incoming, args: str) -> Reply:
        if args.strip():
            raise UsageError("`settings` takes no arguments.")
        channel = self.channels.get(incoming.channel)
        lines = [
            describe_schedule(channel),
            describe_topics(channel),
            f"Collections: {', '.join(channel.collections) or 'all'}",
            describe_reactions(channel.reactions),
            *self.meeting_commands.describe_all(channel.id),
        ]
        poll = self.vote_commands.polls.open_poll(channel.id)
        lines.append(self.vote_commands.poll_status(poll) if poll else "Poll: none open.")
        return Reply(text="\n".join(lines), ephemeral=True)

    def _paper_arg(self, args: str):
        ref = args.split()[0] if args.split() else ""
        if not ref or len(args.split()) > 1:
            raise UsageError("Give one paper ID (the number on its card).")
        paper = self.library.find(ref)
        if paper is None:
            raise UsageError(f"No paper with ID `{ref}`; `search` shows IDs on each card.")
        return paper

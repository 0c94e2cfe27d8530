"""The platform-neutral bot: one `handle(Incoming) -> Reply` for every adapter.

The core only dispatches: a line to the feature that owns its command, the scheduler's
minute to every feature's tick step, an adapter's event to the features' hooks. What the
bot can do lives in the features (bot/feature.py), listed in bot/app.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial

from sqlalchemy.exc import InterfaceError, OperationalError

from bot import grammar
from bot.channels.channels import Channels
from bot.feature import Feature, Features, Step, TickReport, minute_step
from bot.grammar import Command, NotAllowed, Param, Route, UsageError, route_line, usage_reply
from bot.messages import Deliver, Incoming, Reaction, Reply
from bot.ops.logs import event
from bot.search.query import QueryError

log = logging.getLogger(__name__)

# What a member sees while the database is unreachable (a restart, a failover, a network
# cut): the bot stays up, and the pool reconnects by itself once the database answers.
DATABASE_DOWN = (
    "paperclub cannot reach its database just now, so this did not go through. "
    "Please try again in a minute."
)
# Errors that mean "the database is not answering", as opposed to a bug in a query.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
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
        features: Features,
        channels: Channels,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ):
        self.features = features
        self.channels = channels  # for the notice a channel keeps for its next command
        self.clock = clock
        owned = list(features.commands())
        help_command = Command("help", "help [COMMAND]", "List the commands, or explain one.", "help search",
                               self._help, params=(Param("command", "the command to explain",
                                                         suggest=("help", *(c.name for c in owned))),),
                               private=True)
        self.commands: dict[str, Command] = {c.name: c for c in [help_command, *owned]}

    def tick(self, now: datetime, deliver: Deliver, platforms: Iterable[str],
             stopping: Callable[[], bool] = lambda: False, providers: bool = True) -> TickReport:
        """The minute: each feature's step in order (papers of the day, polls ...), then with
        `providers` their provider work (`serve` runs that on jobs of its own); nothing new
        starts once `stopping()`."""
        report, platforms = TickReport(), tuple(platforms)
        steps = [(f.name, partial(minute_step, f, deliver, platforms)) for f in self.features]
        for name, step in steps + (list(self.provider_steps().items()) if providers else []):
            if counts := step(now, stopping):
                report.counts[name] = {**report.counts.get(name, {}), **counts}
        return report

    def provider_steps(self) -> dict[str, Step]:
        """Each feature's work that waits on providers (`Feature.provider_step`), by name."""
        return {f.name: f.provider_step for f in self.features if type(f).provider_step is not Feature.provider_step}

    def route(self, text: str) -> Route:
        """How a line will be taken: its command, its arguments, and what an adapter must
        decide before the answer exists (answer privately? acknowledge now and answer
        later? look up the member's rights?). `handle` routes the line the same way."""
        return route_line(self.commands, text)

    def handle(self, incoming: Incoming) -> Reply:
        """Answer one command; logs one line with the channel, command, outcome and time
        (never the arguments: they are what a member typed)."""
        started = time.perf_counter()
        route = self.route(incoming.text)
        reply = route.refusal() or self._guarded(
            lambda: self._with_notice(incoming, self._answer(incoming, route)), route.name)
        self._logged(incoming, route.name, reply, started)
        return reply

    def click(self, incoming: Incoming) -> Reply:
        """A button click, whose text is the value of the action it carries. Only the
        actions a feature drew run; anything else (a crafted payload naming, say,
        `schedule off`) is refused with one log line and changes nothing."""
        line = self.features.first(lambda feature: feature.button(incoming.text))
        if line is None:
            log.warning("refused a click from %s in %s: not a rendered action",
                        incoming.user.user_id, incoming.channel.key())
            return Reply(text=NOT_OUR_BUTTON, ephemeral=True, ok=False)
        return self.handle(replace(incoming, text=line))

    def add_from_message(self, incoming: Incoming) -> Reply:
        """"Add to paperclub" on a message: `incoming.text` is the whole message, handed
        to the feature that takes messages. Never raises."""
        started = time.perf_counter()
        reply = self._guarded(lambda: self.features.first(lambda f: f.from_message(incoming))
                              or Reply(text="Nothing here takes whole messages.", ephemeral=True, ok=False),
                              "add-message")
        self._logged(incoming, "add-message", reply, started)
        return reply

    def react(self, reaction: Reaction) -> int | None:
        """A reaction put on or taken off a message: the post whose tally changed (the
        adapter redraws it), else None. Logs one line when it counts."""
        post_id = self.features.first(lambda feature: feature.react(reaction))
        if post_id is not None:
            event(log, "reaction", channel=reaction.channel.key(), user=reaction.user.user_id,
                  post=post_id, added=reaction.added)
        return post_id

    def render_post(self, post_id: int) -> tuple[str | None, Reply] | None:
        """(message reference, the post with its current tally): what an adapter puts in
        place of the original message after a vote (chat.update, Message.edit)."""
        return self.features.first(lambda feature: feature.redraw(post_id))

    def remember_message(self, reply: Reply, message_ref: str) -> None:
        """An adapter posted `reply` itself (a `next` or `poll` answered in the channel):
        keep the message reference, so votes can update it and results go to its thread."""
        self.features.first(lambda feature: feature.remember(reply, message_ref))

    def withdraw(self, reply: Reply) -> None:
        """An adapter could not post `reply` (a `next` or `poll` it sends itself): undo it,
        so the paper goes back to the pool and the poll does not block the next one."""
        self.features.first(lambda feature: feature.withdraw(reply))

    def stop(self) -> None:
        """The process is shutting down: every feature ends its work in flight for
        members (an `add` waiting on pages answers at once with what it has)."""
        for feature in self.features:
            feature.stop()

    def _guarded(self, answer: Callable[[], Reply], what: str) -> Reply:
        """Every line gets a reply: a database outage is told apart from a bug of ours."""
        try:
            return answer()
        except DATABASE_UNAVAILABLE as problem:
            log.warning("database unreachable while answering %s: %s", what, type(problem).__name__)
            return Reply(text=DATABASE_DOWN, ephemeral=True, ok=False)
        except Exception:
            log.exception("answering %s failed", what)
            return Reply(text=OUR_FAULT, ephemeral=True, ok=False)

    @staticmethod
    def _logged(incoming: Incoming, command: str, reply: Reply, started: float) -> None:
        event(log, "command", channel=incoming.channel.key(), user=incoming.user.user_id,
              command=command, ok=reply.ok, ms=(time.perf_counter() - started) * 1000)

    def _with_notice(self, incoming: Incoming, reply: Reply) -> Reply:
        """The channel's waiting notice (why its schedule paused itself) before the
        answer, once; only the asking member sees it when the answer is private."""
        notice = self.channels.take_notice(incoming.channel)
        if notice:
            reply.text = f"{notice}\n\n{reply.text}" if reply.text else notice
        return reply

    def _answer(self, incoming: Incoming, route: Route) -> Reply:
        if not route.word:
            return self._help(incoming, "")
        command = route.command
        if command is None:
            unknown = grammar.unknown_command(route.word, self.commands)
            return Reply(text=f"{unknown}\n{self._command_list()}", ephemeral=True, ok=False)
        try:
            return command.handler(incoming, route.args)
        except (UsageError, QueryError) as problem:
            return usage_reply(command, str(problem))
        except NotAllowed as refusal:
            return Reply(text=str(refusal), ephemeral=True, ok=False)

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


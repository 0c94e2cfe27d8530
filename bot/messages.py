"""The neutral message model between adapters and the core.

An adapter turns a platform payload into an `Incoming`, hands it to the core, and
renders the `Reply` it gets back (Block Kit, a Discord embed, console text or JSON).
Nothing here knows about any platform.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


@dataclass(frozen=True)
class ChannelRef:
    """A channel on a platform: ("slack", team id, channel id), ("console", "local", "general")."""

    platform: str
    workspace: str
    channel: str
    # The organisation above the workspace, when there is one (a Slack Enterprise Grid's
    # enterprise id). Not part of the channel's identity: the same channel with or
    # without it is the same channel; the core keeps it so deliveries can find the
    # workspace's installation.
    org: str = field(default="", compare=False)

    def key(self) -> str:
        return f"{self.platform}:{self.workspace}:{self.channel}"


@dataclass(frozen=True)
class UserRef:
    platform: str
    user_id: str
    display_name: str = ""
    # Whether the platform says this member may change channel settings; the adapter
    # decides (Slack admins, Discord Manage Channels, --manager on the console).
    is_manager: bool = False


@dataclass(frozen=True)
class Incoming:
    """What a member typed after `/paper`, with where and who."""

    channel: ChannelRef
    user: UserRef
    text: str


@dataclass
class PaperCard:
    """One paper as every platform shows it."""

    paper_id: int
    title: str
    url: str | None = None
    authors: list[str] = field(default_factory=list)
    authors_display: str = ""  # first five, then "+N more"
    venue: str = ""  # where and when published, collections, track, award: one line
    matched_terms: list[str] = field(default_factory=list)
    snippet: str = ""
    score: float | None = None
    # Ranked first because the query reads as its title, above higher BM25 scores.
    title_match: bool = False
    reason: str = ""  # why a pick was picked (paper of the day)
    option: str = ""  # on a poll: "Option 1", the number a member votes for
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # notes the source gave (a review's paragraphs)
    discussion: list[str] = field(default_factory=list)  # this channel's member notes, oldest first
    sources: list[str] = field(default_factory=list)  # "collection: file:line (format)", on `show`
    added_by: str = ""  # "Added by Ann on 2026-11-23": who brought it in from the chat (`add`)
    # Lines features add to a post (Feature.lines_about): "TL;DR (language model): ...",
    # shown above the abstract. Untrusted text made safe; adapters escape it as a snippet.
    about: list[str] = field(default_factory=list)


@dataclass
class Action:
    """A button: `value` is opaque to adapters and comes back verbatim on a click."""

    label: str
    value: str
    style: str = "default"  # default | primary | danger
    # What a member types for the same effect where there are no buttons (the console):
    # a button names its post, a member the paper's number. Empty: the value itself.
    typed: str = ""


@dataclass
class Section:
    """A titled part of a longer message (a weekly digest's "Papers this week"): each
    platform shows it as a block of its own (a Slack section, a Discord embed), so a
    message of several parts stays one message within the platform's limits."""

    title: str
    lines: list[str] = field(default_factory=list)
    # A paper's title as its lines write it -> the paper's link: each platform links the
    # title where a line names it (a digest names papers "[12] Title").
    links: dict[str, str] = field(default_factory=dict)


class Kind(Enum):
    """How a reply goes out; the same on every platform (adapters/replies.py sends it)."""

    # Back to the member who asked: privately when `ephemeral`, else for the channel to see.
    ANSWER = "answer"
    # A channel message of its own with buttons to vote on (a paper of the day, a `next`, a
    # poll): the adapter posts it, the core keeps its reference (votes redraw it, results
    # go to its thread), or takes it back when it could not go out.
    POST = "post"
    # Into the thread of the message `reply_to` names (a poll's result).
    THREAD_REPLY = "thread reply"


@dataclass
class Reply:
    text: str = ""
    # Shown after the text and before the cards, in order.
    sections: list[Section] = field(default_factory=list)
    cards: list[PaperCard] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    ephemeral: bool = False  # only the asking member sees it (errors, usage)
    in_thread: bool = False
    # Non-empty: the adapter opens a discussion thread under the posted message, named so.
    open_thread: str = ""
    # A message reference: post this reply in that message's discussion thread.
    reply_to: str | None = None
    # A message reference to link to (a reminder points at the paper's discussion thread).
    link_to: str | None = None
    post_id: int | None = None  # set on a paper-of-the-day post (votes refer to it)
    poll_id: int | None = None  # set on a poll (votes refer to it)
    ok: bool = True  # False for errors and usage replies

    @property
    def kind(self) -> Kind:
        """Derived here and only here, from what the features set: a private reply is
        always an answer; votes make a post (`post_id` or `poll_id` with actions); a
        public reply to a message goes into its thread."""
        if self.ephemeral:
            return Kind.ANSWER
        if self.actions and (self.post_id is not None or self.poll_id is not None):
            return Kind.POST
        if self.reply_to:
            return Kind.THREAD_REPLY
        return Kind.ANSWER

    @property
    def redraws(self) -> int | None:
        """The post whose tally this reply changed (the answer to a vote), which the adapter
        redraws after sending it (core.render_post); None for anything else."""
        return self.post_id if self.post_id is not None and self.kind is not Kind.POST else None

    def to_dict(self) -> dict[str, Any]:
        # The console's --json output: the fields only (a kind follows from them).
        return asdict(self)


class DeliveryRefused(Exception):
    """A post that did not go out for a reason the platform gave (no access to the
    channel, rate limits, the service down). Adapters raise it so the core can record the
    failure, logging the reason without a traceback: it is an operational event, not a bug.

    `permanent`: the reason will not pass by itself (the channel is gone or archived, the
    bot was removed or its token revoked), so retrying within the day only earns the bot
    invalid-request strikes; the core stops that day's attempt at once. Otherwise (rate
    limits, the service down) a later tick retries."""

    def __init__(self, reason: str, permanent: bool = False):
        super().__init__(reason)
        self.permanent = permanent


@dataclass(frozen=True)
class Reaction:
    """A member put an emoji on a message, or took it off (`added` False). `message_ref`
    is the message's reference in the form the adapter stores for posts (Slack's ts,
    Discord's "channel_id/message_id"); `channel` the channel the post belongs to.

    `order`: when the platform says the event happened, in microseconds since the epoch
    (Slack's event_ts; Discord's time of receipt, in gateway order). Events are handled in
    parallel, so an event older than one already applied for the same emoji is ignored;
    None: applied as handled."""

    channel: ChannelRef
    user: UserRef
    message_ref: str
    emoji: str
    added: bool
    order: int | None = None


def counted(count: int, word: str, plural: str | None = None) -> str:
    """"1 paper", "2 papers", "1,094 papers": every count a member reads agrees in number."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


# deliver(channel, reply) posts the reply and returns the platform's message reference.
Deliver = Callable[[ChannelRef, Reply], str | None]

"""Reactions that vote: 👍 on a post is "want to discuss", 👎 "not for us", ✅ "read",
exactly like the post's buttons; each channel may choose its own three emoji.

Platforms name the same emoji differently: Slack sends names (`+1`, `thumbsup`,
`+1::skin-tone-2`), Discord and typed text send Unicode with or without a variation
selector or a skin tone, Slack's slash command text sends `:+1:`, custom emoji come as a
Slack name or Discord's `<:name:id>`. `emoji_key` brings every form to one key, so a
channel's setting made on one platform matches the reactions of any.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import delete, or_, select, true
from sqlalchemy.orm import Session

from bot.channels.channels import Channels, ChannelSettings
from bot.feature import Feature, Kit
from bot.grammar import Command, Param, UsageError, require_manager, with_arguments
from bot.messages import ChannelRef, Incoming, Reaction, Reply
from bot.reactions.models import ReactionMark
from bot.services.models import Post, PostVote
from bot.services.votes import Votes, record_vote
from store.database import upsert_insert
from store.models import Channel

log = logging.getLogger(__name__)

KINDS = ("up", "down", "read")  # in the order a channel's three emoji are given
DEFAULT_EMOJI = ("👍", "👎", "✅")
MEANINGS = {"up": "want to discuss", "down": "not for us", "read": "read"}
STORED_CHARS = 200  # channels.reactions
SLOTS = {"up": "opinion", "down": "opinion", "read": "read"}
# An emoji's name, with Slack's skin tone suffix (`+1::skin-tone-2`): in colons as typed
# (`:+1:`), bare as Slack's reaction events send it.
_NAME = r"([A-Za-z0-9_+'\-]{1,100})(?:::skin-tone-[2-6])?"
_SHORTCODE = re.compile(f":{_NAME}:")
_BARE_NAME = re.compile(_NAME)
# What Unicode adds to a base emoji: the Fitzpatrick skin tones, and the variation
# selectors that ask for text or emoji style.
_MODIFIERS = re.compile("[\U0001f3fb-\U0001f3ff\ufe0e\ufe0f]")
_DISCORD_CUSTOM = re.compile(r"<a?:([A-Za-z0-9_~\-]{1,100}):[0-9]{1,25}>")


def emoji_key(text: str) -> str | None:
    """One key per emoji, whatever the platform's spelling: Unicode without skin tones or
    variation selectors (`👍` for `:+1:`, `:thumbsup:`, `👍🏽`), or `:name:` for a custom
    emoji (`:partyparrot:`, Discord's `<:partyparrot:123>`). None: not an emoji (a word
    such as `up` is not one, though `:up:` is 🆙)."""
    text = text.strip()
    custom = _DISCORD_CUSTOM.fullmatch(text)
    if custom:
        return f":{custom.group(1).lower()}:"
    import emoji as emoji_data  # here: loading its tables is ~20 ms of every start-up

    code = _SHORTCODE.fullmatch(text)
    if code:
        shortcode = f":{code.group(1).lower()}:"
        unicode = emoji_data.emojize(shortcode, language="alias")
        return _bare(unicode) if unicode != shortcode else shortcode
    if emoji_data.is_emoji(text) or emoji_data.is_emoji(_bare(text)):
        return _bare(text)
    return None


def reaction_key(text: str) -> str | None:
    """The key of an emoji as a reaction event names it: Slack sends a name without
    colons (`+1`, `thumbsup`, `+1::skin-tone-2`, a custom `partyparrot`)."""
    text = text.strip()
    return emoji_key(f":{text}:" if _BARE_NAME.fullmatch(text) else text)


def _bare(unicode: str) -> str:
    return _MODIFIERS.sub("", unicode)


def _mark(session: Session, post_id: int, user_id: str, kind: str, added: bool,
          order: int | None) -> ReactionMark | None:
    """Record the event as the newest of its kind for the member on the post, unless an
    event as new or newer is recorded (a retry, or an event handled late): then None.
    An event without an order is applied as it comes."""
    seen = getattr(ReactionMark, f"{kind}_order")
    values: dict[str, bool | int] = {f"{kind}_on": added}
    if order is not None:
        values[f"{kind}_order"] = order
    statement = upsert_insert(session, ReactionMark).values(post_id=post_id, user_id=user_id, **values)
    newer = true() if order is None else or_(seen.is_(None), seen < order)
    # RETURNING, not rowcount: SQLite's rowcount counts an upsert whose WHERE said no.
    return session.scalar(statement.on_conflict_do_update(
        index_elements=["post_id", "user_id"], set_=values, where=newer).returning(ReactionMark))


def _showing(mark: ReactionMark, kind: str, added: bool, ordered: bool) -> str | None:
    """The emoji of the kind's slot the member has on the post now: of those on, the one
    put on last; for an event without an order, the one just put on."""
    if added and not ordered:
        return kind
    on = [k for k in KINDS if SLOTS[k] == SLOTS[kind] and getattr(mark, f"{k}_on")]
    return max(on, key=lambda k: getattr(mark, f"{k}_order") or -1, default=None)


def split_emoji(args: str) -> list[str]:
    """The emoji a member typed, spaces between them or not (`👍👎✅`)."""
    import emoji as emoji_data

    words = args.split()
    if len(words) == 1 and emoji_key(words[0]) is None:
        found = emoji_data.emoji_list(words[0])
        if found and "".join(f["emoji"] for f in found) == words[0]:
            return [f["emoji"] for f in found]
    return words


def channel_emoji(stored: str | None) -> tuple[str, str, str]:
    """A channel's three emoji (up, down, read) from `channels.reactions`."""
    emoji = tuple(stored.split()) if stored else ()
    return emoji if len(emoji) == 3 else DEFAULT_EMOJI


def describe(stored: str | None) -> str:
    emoji = channel_emoji(stored)
    pairs = " · ".join(f"{e} {MEANINGS[k]}" for e, k in zip(emoji, KINDS, strict=True))
    return f"Reactions: {pairs}" + ("" if stored else " (the default)")


class ReactionsFeature(Feature):
    """Reactions on a channel's posts, as votes; and the channel's choice of emoji."""

    name = "reactions"

    def __init__(self, channels: Channels, votes: Votes, clock: Callable[[], datetime]):
        self.channels = channels
        self.votes = votes
        self.clock = clock

    @classmethod
    def build(cls, kit: Kit) -> ReactionsFeature:
        return cls(kit.channels, kit.votes, kit.clock)

    def react(self, reaction: Reaction) -> int | None:
        """Count (or withdraw) the vote a reaction stands for. Returns the post whose tally
        changed, so the adapter redraws it; None when the message is not one of this
        channel's posts, the emoji is not one of the channel's, or nothing changed."""
        key = reaction_key(reaction.emoji)
        if key is None:
            return None
        found = self._post(reaction.channel, reaction.message_ref)
        if found is None:
            return None
        post_id, stored = found
        keys = [emoji_key(e) for e in channel_emoji(stored)]
        if key not in keys:
            return None
        kind = KINDS[keys.index(key)]
        user = reaction.user.user_id
        # One transaction: the event's mark, then the vote. Updating the mark locks the
        # member's row on this post, so their other events wait for this one to commit.
        with self.channels.db.session() as session:
            mark = _mark(session, post_id, user, kind, reaction.added, reaction.order)
            if mark is None:
                log.info("a reaction event older than one already applied was ignored (post %d)", post_id)
                return None
            showing = _showing(mark, kind, reaction.added, reaction.order is not None)
            changed = self._apply(session, post_id, user, kind, reaction.added, showing)
        return post_id if changed else None

    def _post(self, ref: ChannelRef, message_ref: str) -> tuple[int, str | None] | None:
        """The sent post at this message in this channel, and the channel's emoji."""
        with self.channels.db.session() as session:
            row = session.execute(
                select(Post.id, Channel.reactions)
                .join(Channel, Channel.id == Post.channel_id)
                .where(Channel.platform == ref.platform, Channel.workspace == ref.workspace,
                       Channel.channel == ref.channel, Post.message_ref == message_ref, Post.state == "sent")
            ).first()
        return None if row is None else (row[0], row[1])

    def _apply(self, session: Session, post_id: int, user_id: str, kind: str, added: bool,
               showing: str | None) -> bool:
        """The member's vote in the kind's slot after the event; True when it changed.
        Putting 👍 on votes "want to discuss" unless a newer 👎 is still on. Taking 👍 off
        withdraws "want to discuss" only while that is the member's vote (one who
        changed to 👎 since, by reaction or button, keeps 👎), and falls back on the
        newest other emoji of the slot still on."""
        slot = SLOTS[kind]
        current = session.scalar(select(PostVote.value).where(
            PostVote.post_id == post_id, PostVote.user_id == user_id, PostVote.slot == slot))
        if added:
            if showing != kind or current == kind:  # a newer emoji wins, or the vote is this one already
                return False
            record_vote(session, post_id, user_id, kind, self.clock())
            return True
        if current != kind:
            return False
        if showing is None:
            session.execute(delete(PostVote).where(
                PostVote.post_id == post_id, PostVote.user_id == user_id, PostVote.slot == slot))
        else:
            record_vote(session, post_id, user_id, showing, self.clock())
        return True

    def settings(self, channel: ChannelSettings) -> list[str]:
        return [describe(channel.reactions)]

    # --- the command ---------------------------------------------------------------------

    def commands(self) -> list[Command]:
        return [
            Command("reactions", "reactions · reactions UP DOWN READ · reactions reset",
                    "The emoji that vote on posts here (want to discuss, not for us, read); managers "
                    "choose other ones, or go back to 👍 👎 ✅.", "reactions 🔥 🙈 📖", self.command,
                    with_arguments, group="channel",
                    brief="The emoji that vote on posts here (managers choose other ones).",
                    params=(Param("emoji", "three emoji: want to discuss, not for us, read; or reset"),)),
        ]

    def command(self, incoming: Incoming, args: str) -> Reply:
        words = split_emoji(args)
        if not words:
            return Reply(text=describe(self.channels.get(incoming.channel).reactions), ephemeral=True)
        if [w.lower() for w in words] == ["reset"]:
            require_manager(incoming, "change the reactions that vote")
            self.channels.set_reactions(incoming.channel, None)
            return Reply(text=describe(None))
        stored = self._parse(words)
        require_manager(incoming, "change the reactions that vote")
        self.channels.set_reactions(incoming.channel, stored)
        return Reply(text=describe(stored))

    def _parse(self, words: list[str]) -> str:
        if len(words) != 3:
            raise UsageError("Give three emoji: for want to discuss, not for us, and read.")
        keys = []
        for word in words:
            key = emoji_key(word)
            if key is None:
                raise UsageError(f"`{word[:40]}` is not an emoji.")
            keys.append(key)
        if len(set(keys)) != 3:
            raise UsageError("The three emoji must differ: each stands for one kind of vote.")
        stored = " ".join(keys)
        if len(stored) > STORED_CHARS:
            raise UsageError("Those emoji names are too long to keep; choose shorter ones.")
        return stored

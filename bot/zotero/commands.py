"""`zotero`, `zotero link GROUP_ID [COLLECTION]`, `zotero key KEY`, `zotero unlink`: a
channel's Zotero group library, and the minute's sync to it (bot/zotero/sync.py).

A link or a key is checked against the API before anything is stored: a key Zotero does
not know, a group it cannot write to, a group or collection that does not exist are
refused with what to do, and nothing changes. A key given in chat is kept encrypted and
never shown again; without PAPERCLUB_SECRET_KEY there is nothing to encrypt it with, so
it is refused.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from bot.channels.channels import Channels, ChannelSettings
from bot.channels.schedule import shown_at
from bot.corpus.feeds import FeedSource
from bot.feature import Feature, Kit
from bot.grammar import Command, Param, UsageError, first_word_in, number, require_manager
from bot.messages import Incoming, Reply, counted
from bot.services.fetching import FetchPool, MemberBusy, Stopped
from bot.zotero import answers
from bot.zotero.api import ZoteroApi, ZoteroCut, ZoteroError, ZoteroJunk
from bot.zotero.imports import ZoteroFeed, find_collection
from bot.zotero.links import LinkStatus, ZoteroLinks
from bot.zotero.settings import ZoteroSettings
from bot.zotero.sync import ZoteroConfig, ZoteroSync

log = logging.getLogger(__name__)
T = TypeVar("T")

DAY_TIME = "%Y-%m-%d %H:%M"  # when a sync ran, failed or retries, in the channel's zone
USAGE = "zotero · zotero link GROUP_ID [COLLECTION] · zotero key KEY · zotero unlink"
_API_KEY = re.compile(r"[A-Za-z0-9]{8,64}")
NOTHING_STORED = "Nothing was stored."
# A manager waits in chat while `zotero link` and `zotero key` ask Zotero: their requests
# end this long after the line came (plus the pool's grace), whatever the server does.
CHECK_SECONDS = 8.0
CHECK_WORKERS = 4  # checks under way at once in one process


class Refused(Exception):
    """A link or key Zotero (or paperclub) will not take; str() is the reply."""


class ZoteroFeature(Feature):
    """The channel's Zotero group library: linking it, its key, its status, the sync."""

    name = "zotero"
    settings_model = ZoteroSettings

    def __init__(self, channels: Channels, links: ZoteroLinks, sync: ZoteroSync, config: ZoteroConfig,
                 clock: Callable[[], datetime], zone_of: Callable[[ChannelSettings], str] = lambda _channel: "UTC"):
        self.channels = channels
        self.zone_of = zone_of  # the zone the channel's members read times in (Meetings.zone_of)
        self.links = links
        self.sync = sync
        self.config = config
        self.clock = clock
        # The checks wait on Zotero: on a bounded pool of their own, under a deadline, never
        # on the thread that answers the platform.
        self.pool = FetchPool(CHECK_WORKERS)

    @classmethod
    def build(cls, kit: Kit) -> ZoteroFeature:
        config = ZoteroConfig.from_env(kit.env)
        links = ZoteroLinks(kit.db)
        return cls(kit.channels, links, ZoteroSync(kit.db, links, config), config, kit.clock, kit.meetings.zone_of)

    def feed_sources(self) -> list[FeedSource]:
        return [ZoteroFeed(self.config)]

    def commands(self) -> list[Command]:
        return [
            Command("zotero", USAGE,
                    "Write this channel's papers, votes and notes to a Zotero group library (managers link it "
                    "and may give its API key privately); `zotero` alone says how the sync is going.",
                    "zotero link 123456 Reading group", self.zotero, first_word_in("link", "key", "unlink"),
                    brief="This channel's Zotero group library: link it, give its key, see how the sync goes.",
                    params=(Param("action", "what to do (left out: show the link and the sync)",
                                  choices=("link", "key", "unlink")),
                            Param("value", "link: the group's number and a collection; key: the API key")),
                    private=True, answered_later=True),
        ]

    def zotero(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        action = words[0].lower() if words else ""
        if action not in ("", "link", "key", "unlink"):
            raise UsageError(f"`zotero {words[0]}` is not something paperclub knows.")
        if action:
            require_manager(incoming, f"{action} the channel's Zotero library" if action != "key"
                            else "give the channel's Zotero API key")
        channel = self.channels.get(incoming.channel)
        try:
            if action == "link":
                return self.link(incoming, channel, words[1:])
            if action == "key":
                return self.key(incoming, channel, words[1:])
            if action == "unlink":
                return self.unlink(channel, words[1:])
        except Refused as refused:
            log.info("zotero %s refused: %s", action, str(refused).split(":")[0])
            return Reply(text=str(refused), ephemeral=True, ok=False)
        return Reply(text=self.describe(channel), ephemeral=True)

    # --- link ------------------------------------------------------------------------

    def link(self, incoming: Incoming, channel: ChannelSettings, words: list[str]) -> Reply:
        group_id = number(words[0], high=2**53) if words else None
        if group_id is None:
            raise UsageError("Give the group's number (zotero.org/groups/NUMBER/...), then a collection if any.")
        existing = self.links.get(channel.id)
        sealed = existing.api_key if existing else None
        api = self._api(sealed)
        asked = " ".join(words[1:])

        def check() -> tuple[str, tuple[str, str] | None]:
            group = _group(api, group_id)
            return group, _collection(api, group_id, group, asked) if asked else None

        group, collection = self._checked(incoming, api, check)
        self.links.link(channel.id, group_id, group, collection, sealed, incoming.user.user_id, self.clock())
        where = f"collection {collection[1]} of group {group}" if collection else f"group {group} (top level)"
        return Reply(text=f"Linked this channel to Zotero {where}. From the next minute on, the papers this channel "
                     "has posted, queued, added or annotated are written there once each (matched by DOI or arXiv "
                     "id to what it holds already), its votes as tags and members' notes as child notes. "
                     "`zotero` shows how it goes.", ephemeral=True)

    def _checked(self, incoming: Incoming, api: ZoteroApi, check: Callable[[], T]) -> T:
        """`check`'s result, asked of Zotero on the pool within CHECK_SECONDS; Refused (its
        own, or saying Zotero did not answer in time) otherwise. Nothing is stored here:
        a check still under way after the deadline ends unheard."""
        def bounded() -> T | Refused:
            try:
                with api.within(CHECK_SECONDS):
                    return check()
            except Refused as refused:
                return refused

        try:
            with self.pool.line((incoming.channel.platform, incoming.user.user_id)):
                [outcome] = self.pool.run([bounded], time.monotonic() + CHECK_SECONDS)
        except MemberBusy:
            raise Refused("Your last line is still being answered; send this again in a moment.") from None
        except Stopped:  # the process is ending
            outcome = None
        if outcome is None and self.pool.stopped:
            raise Refused(f"paperclub is restarting; send this again in a minute. {NOTHING_STORED}")
        if outcome is None:
            raise Refused(_late()) from None
        if isinstance(outcome, Refused):
            raise outcome
        return outcome

    def _api(self, sealed: str | None) -> ZoteroApi:
        if sealed is not None:
            key = self.config.box.open(sealed) if self.config.box else None
            if key is None:
                raise Refused("The key given before cannot be decrypted (PAPERCLUB_SECRET_KEY changed or is not set): "
                              f"give it again with `zotero key KEY`. {NOTHING_STORED}")
        elif self.config.env_key:
            key = self.config.env_key
        else:
            raise Refused("There is no Zotero API key yet: give one that may write to the group, privately, with "
                          f"`zotero key KEY` (made at zotero.org/settings/keys), then link. {NOTHING_STORED}")
        return self.config.api(key)

    # --- key -------------------------------------------------------------------------

    def key(self, incoming: Incoming, channel: ChannelSettings, words: list[str]) -> Reply:
        if len(words) != 1 or not _API_KEY.fullmatch(words[0]):
            raise UsageError("Give the API key alone: `zotero key KEY` (letters and digits, from "
                             "zotero.org/settings/keys).")
        if self.config.box is None:
            raise Refused("paperclub cannot keep a key safely here: the operator has not set PAPERCLUB_SECRET_KEY "
                          "(or may set PAPERCLUB_ZOTERO_API_KEY instead). " + NOTHING_STORED)
        api = self.config.api(words[0])
        access = self._checked(incoming, api, lambda: _key_access(api))
        link = self.links.get(channel.id)
        if link is not None and link.group_id is not None:
            _may_write(access, link.group_id, link.group_name or str(link.group_id))
        self.links.set_key(channel.id, self.config.box.seal(words[0]), incoming.user.user_id, self.clock())
        then = "It is used from the next sync on." if link is not None and link.group_id is not None else \
            "Now link the group: `zotero link GROUP_ID [COLLECTION]`."
        return Reply(text=f"Zotero accepted the key; it is stored encrypted and will not be shown again. {then}",
                     ephemeral=True)

    # --- unlink, status ---------------------------------------------------------------

    def unlink(self, channel: ChannelSettings, words: list[str]) -> Reply:
        if words:
            raise UsageError("`zotero unlink` takes nothing after it.")
        if not self.links.unlink(channel.id):
            return Reply(text="This channel is not linked to a Zotero library: nothing to unlink.", ephemeral=True,
                         ok=False)
        return Reply(text="Unlinked: nothing more is written to Zotero from this channel, and the key given here "
                     "(if any) is deleted. What was written stays in the group library.", ephemeral=True)

    def describe(self, channel: ChannelSettings) -> str:
        status = self.links.status(channel.id)
        if status is None and self.links.get(channel.id) is not None:  # a key given, no group yet
            return ("This channel has a Zotero API key (key: set) but no group library yet: a manager links it "
                    "with `zotero link GROUP_ID [COLLECTION]`.")
        if status is None:
            return ("This channel is not linked to a Zotero group library. A manager links it with "
                    "`zotero link GROUP_ID [COLLECTION]`" + ("" if self.config.env_key else
                                                            " after giving its API key privately with `zotero key KEY`")
                    + ".")
        key = "key: set (given in chat)" if status.own_key else "key: the operator's"
        return "\n".join([f"Zotero: {status.where}; {key}.", *_progress(status, self.zone_of(channel))])

    def settings(self, channel: ChannelSettings) -> list[str]:
        status = self.links.status(channel.id)
        if status is None:
            return []
        return [f"Zotero: {status.where}. " + " ".join(_progress(status, self.zone_of(channel)))]

    def provider_step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """The linked groups' syncs, on a job of their own beside the minute's tick."""
        return self.sync.tick(now, stopping)

    def stop(self) -> None:
        """A check with Zotero in flight is answered now ("restarting"); none starts; every
        request in flight (a sync's too) is cut, so a sync stuck on a dripping server ends."""
        self.pool.stop()
        self.sync.config.cutoffs.cut_all()


def _progress(status: LinkStatus, zone: str) -> list[str]:
    """How the sync goes; its times in the channel's `zone`."""
    lines = [f"{counted(status.synced, 'paper')} in Zotero"
             + (f", {status.waiting} being written" if status.waiting else "")
             + (f", {status.refused} refused by Zotero" if status.refused else "")
             + (f"; last sync {shown_at(status.last_sync_at, zone, DAY_TIME)}." if status.last_sync_at
                else "; not synced yet (within a minute).")]
    if status.failures and status.last_error:
        when = shown_at(status.retry_at, zone, DAY_TIME) if status.retry_at else "the next minute"
        failed = f"{shown_at(status.failed_at, zone, DAY_TIME)}, " if status.failed_at else ""
        lines.append(f"The last sync failed ({failed}"
                     f"{counted(status.failures, 'time')} in a row): {status.last_error}. Retrying at {when}.")
    elif status.last_error and status.failed_at:
        lines.append(f"Last failure, since recovered: {shown_at(status.failed_at, zone, DAY_TIME)}.")
    return lines


def _key_access(api: ZoteroApi) -> dict[str, bool]:
    """The groups the key may write to (bot.zotero.answers.write_access)."""
    try:
        return answers.write_access(api.key_info())
    except ZoteroError as problem:
        if problem.status in (401, 403, 404):
            raise Refused(f"Zotero does not accept that API key (HTTP {problem.status}): check it at "
                          f"zotero.org/settings/keys. {NOTHING_STORED}") from None
        raise Refused(_unreachable(problem)) from None


def _may_write(access: dict[str, bool], group_id: int, name: str) -> None:
    if not access.get(str(group_id), access.get("all", False)):
        raise Refused(f"That key may not write to group {name}: give it write access to the group at "
                      f"zotero.org/settings/keys. {NOTHING_STORED}")


def _group(api: ZoteroApi, group_id: int) -> str:
    """The group's name, once the key is known to be good, the group to exist, and the
    key to be allowed to write there."""
    access = _key_access(api)
    try:
        name = answers.group_name(api.group(group_id), group_id)
    except ZoteroError as problem:
        if problem.status == 404:
            raise Refused(f"Zotero has no group {group_id}: the number is in the group's address, "
                          f"zotero.org/groups/NUMBER/... {NOTHING_STORED}") from None
        if problem.status in (401, 403):
            raise Refused(f"The key may not open group {group_id}. {NOTHING_STORED}") from None
        raise Refused(_unreachable(problem)) from None
    _may_write(access, group_id, name)
    return name


def _collection(api: ZoteroApi, group_id: int, group: str, asked: str) -> tuple[str, str]:
    """(key, name) of the collection named or keyed `asked`."""
    wanted = asked.strip().strip('"')
    try:
        found, names = find_collection(api, group_id, wanted)
    except ZoteroCut as cut:
        if cut.late:
            raise Refused(_late()) from None
        raise Refused(f"Group {group} has more collections than paperclub reads in one go: name the collection by "
                      f"its key (the 8 characters after /collections/ in its address). {NOTHING_STORED}") from None
    except ZoteroError as problem:
        raise Refused(_unreachable(problem)) from None
    if found is None:
        raise Refused(f"Group {group} has no collection {wanted!r} (its collections: {', '.join(names) or 'none'}). "
                      f"Make it in Zotero first, or leave it out to write to the library's top level. "
                      f"{NOTHING_STORED}")
    return found


def _late() -> str:
    return (f"Zotero did not answer within {CHECK_SECONDS:.0f} s. {NOTHING_STORED} Try again in a while (or name "
            "the collection by its key).")


def _unreachable(problem: ZoteroError) -> str:
    if isinstance(problem, ZoteroCut) and problem.late:
        return _late()
    if isinstance(problem, ZoteroJunk):
        return f"Zotero answered something paperclub cannot read ({problem}). {NOTHING_STORED} Try again in a while."
    return f"Could not check with Zotero ({problem}). {NOTHING_STORED} Try again in a while."


"""`archive`, `archive reset`, and `session calendar [reset]` (wired from the meetings'
`session` command): the channel's private links, answered privately.

paperclub keeps only a digest of each token, so a link is shown once, when it is made.
Each member who asks gets their own link; asking again gives a new one and the member's
old one stops working; a reset (managers) revokes every member's link of that kind.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.channels.channels import Channels
from bot.feature import Feature
from bot.grammar import Command, Param, UsageError, first_word_in, require_manager
from bot.memory.links import ChannelLinks
from bot.memory.routes import ARCHIVE_PREFIX, CALENDAR_PREFIX
from bot.messages import Incoming, Reply

SET_PUBLIC_URL = (
    "paperclub does not know its public address yet, so it cannot give a link: the operator sets "
    "PAPERCLUB_PUBLIC_URL (e.g. https://paperclub.example.org, where `paperclub serve` answers) and "
    "restarts it. Nothing was changed."
)


class MemoryCommands(Feature):
    """The group's memory outside the chat: the archive page's and calendar feed's links."""

    name = "memory"

    def __init__(self, channels: Channels, links: ChannelLinks, public_url: str | None,
                 clock: Callable[[], datetime]):
        self.channels = channels
        self.links = links
        self.public_url = public_url.rstrip("/") if public_url else None
        self.clock = clock

    def commands(self) -> list[Command]:
        return [
            Command("archive", "archive · archive reset",
                    "Your private link to a web page of this channel: papers, notes, votes, meetings, polls, "
                    "search (a manager's `archive reset` revokes everyone's links).",
                    "archive", self.archive, first_word_in("reset"), group="channel",
                    brief="A private web page of this channel (a manager's reset makes a new link).",
                    params=(Param("reset", "revoke the link and make a new one (managers)", kind="flag"),)),
        ]

    def archive(self, incoming: Incoming, args: str) -> Reply:
        words = args.lower().split()
        if words not in ([], ["reset"]):
            raise UsageError("Say `archive` for the link, or `archive reset` (managers) for a new one.")
        if words:
            require_manager(incoming, "reset the archive link")
        return self._link(incoming, "archive", reset=bool(words))

    def calendar(self, incoming: Incoming, words: list[str]) -> Reply:
        """`session calendar [reset]`, for managers (the caller checked the rights)."""
        if [w.lower() for w in words] not in ([], ["reset"]):
            raise UsageError("Say `session calendar` for the feed's link, or `session calendar reset`.")
        return self._link(incoming, "calendar", reset=bool(words))

    def _link(self, incoming: Incoming, kind: str, reset: bool) -> Reply:
        if self.public_url is None:
            return Reply(text=SET_PUBLIC_URL, ephemeral=True, ok=False)
        channel = self.channels.get(incoming.channel)
        user = incoming.user.user_id
        if reset:
            revoked = self.links.revoke(channel.id, kind)
            lead = f"The {_what(kind)} links given so far ({revoked}) no longer work; here is a new one for you."
        elif self.links.made_at(channel.id, kind, user) is not None:
            lead = "Here is a new link for you; the one you were given before no longer works."
        else:
            lead = "Here is your link."
        token = self.links.issue(channel.id, kind, user, self.clock())
        url = f"{self.public_url}{ARCHIVE_PREFIX}{token}" if kind == "archive" else \
            f"{self.public_url}{CALENDAR_PREFIX}{token}.ics"
        return Reply(text=f"{lead} {_how(kind)}\n{url}\nIt is shown only this once and anyone holding it can "
                     "read it: share it with the group only.", ephemeral=True)

def _what(kind: str) -> str:
    return "archive page" if kind == "archive" else "calendar feed"


def _how(kind: str) -> str:
    if kind == "archive":
        return "The channel's archive page (papers, notes, votes, meetings, polls, search):"
    return ("The meetings' calendar feed: in Google Calendar, Other calendars › + › From URL; in Outlook, "
            "Add calendar › Subscribe from web:")

"""`archive` and `archive reset`: a member's private link to the channel's archive page
(the links service, bot/services/links.py, gives it, and the meetings' `session calendar`
its calendar feed's); and the pages those links open, on `paperclub serve`'s port.

paperclub keeps only a digest of each token, so a link is shown once, when it is made.
Each member who asks gets their own link; asking again gives a new one and the member's
old one stops working; a reset (managers) revokes every member's link of that kind.
"""

from __future__ import annotations

from bot.feature import Feature, Kit, Page
from bot.grammar import Command, Param, UsageError, first_word_in, require_manager
from bot.memory.pages import Pages, build_pages
from bot.messages import Incoming, Reply
from bot.services.links import PrivateLinks


class MemoryFeature(Feature):
    """The group's memory outside the chat: the archive page's link, and the archive page
    and calendar feed themselves."""

    name = "memory"

    def __init__(self, links: PrivateLinks, pages: Pages):
        self.links = links
        self.pages = pages

    @classmethod
    def build(cls, kit: Kit) -> MemoryFeature:
        pages = build_pages(kit.library, kit.channels, kit.meetings, kit.votes, kit.search.tokenizer, kit.clock,
                            kit.features)
        return cls(kit.links, pages)

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
        return self.links.answer(incoming, "archive", reset=bool(words))

    def page(self, path: str, query: dict[str, str]) -> Page:
        return self.pages.answer(path, query)

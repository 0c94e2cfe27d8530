"""Discord buttons for the core's actions, working across restarts.

Each button's custom_id is "paperclub:" + the action's value (the command a click sends,
e.g. "vote 12 up"), so the click carries everything it needs: a restarted bot that
registers `VoteButton` (Client.add_dynamic_items in setup_hook) answers clicks on
messages posted long before, with no per-message state kept anywhere.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import discord

from bot.messages import Action

CUSTOM_ID_PREFIX = "paperclub:"
CUSTOM_ID_MAX = 100  # Discord's limit for a component's custom_id
LABEL_MAX = 80  # Discord's limit for a button label
BUTTONS_MAX = 25  # five rows of five
VOTE_ID = re.compile(re.escape(CUSTOM_ID_PREFIX) + r"(?P<value>.+)")
STYLES = {
    "primary": discord.ButtonStyle.primary,
    "danger": discord.ButtonStyle.danger,
    "default": discord.ButtonStyle.secondary,
}


class ClickHandler(Protocol):
    async def click(self, interaction: discord.Interaction, value: str) -> None: ...


class VoteButton(discord.ui.DynamicItem[discord.ui.Button], template=VOTE_ID):
    """One action as a button; a click hands its value to the client's click handler."""

    def __init__(self, value: str, label: str, style: discord.ButtonStyle = discord.ButtonStyle.secondary):
        custom_id = CUSTOM_ID_PREFIX + value
        if len(custom_id) > CUSTOM_ID_MAX:
            raise ValueError(f"action value {value!r} is too long for a Discord custom_id")
        super().__init__(discord.ui.Button(label=label[:LABEL_MAX], style=style, custom_id=custom_id))
        self.value = value

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> VoteButton:
        # The label and style come back from the clicked message, so they stay as posted.
        return cls(match["value"], getattr(item, "label", None) or match["value"],
                   getattr(item, "style", discord.ButtonStyle.secondary))

    async def callback(self, interaction: discord.Interaction) -> None:
        handler: ClickHandler = interaction.client.answers  # type: ignore[attr-defined]
        await handler.click(interaction, self.value)


def actions_view(actions: list[Action]) -> discord.ui.View | None:
    """A persistent view (no timeout) with one button per action, or None without actions."""
    if not actions:
        return None
    if len(actions) > BUTTONS_MAX:
        raise ValueError(f"{len(actions)} actions: a Discord message holds at most {BUTTONS_MAX} buttons")
    view = discord.ui.View(timeout=None)
    for action in actions:
        view.add_item(VoteButton(action.value, action.label, STYLES.get(action.style, discord.ButtonStyle.secondary)))
    return view

"""The /paper app command group: one typed subcommand per command of the core's grammar.

Each subcommand only writes its options back into the command text a member would type
after /paper on any platform ("schedule 09:00 Europe/Berlin weekdays") and hands it to
the client's `Answers`; the core parses and validates that text, so a wrong value gets
the same usage message as on Slack or the console. Option limits (ranges, lengths)
mirror the core's so Discord's own form catches what it can before anything is sent.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal, Protocol
from zoneinfo import available_timezones

import discord
from discord import app_commands

from bot.daily.commands import HISTORY_MAX
from bot.channels.schedule import DAY_SETS, WEEKDAYS
from bot.meetings.commands import SESSIONS_MAX
from bot.meetings.meetings import NOTE_CHARS
from bot.votes.commands import DAYS_MAX, POLL_OPTIONS_MAX
from bot.votes.votes import POST_VOTES

CHOICES_MAX = 25  # Discord shows at most 25 autocomplete choices


class CommandHandler(Protocol):
    async def command(self, interaction: discord.Interaction, text: str) -> None: ...

    async def add_from_message(self, interaction: discord.Interaction, text: str) -> None: ...


def command_text(*parts: object) -> str:
    """The command line from its words, leaving out options that were not given."""
    return " ".join(str(p) for p in parts if p is not None and p is not False and p != "")


def filter_term(name: str, value: str | None) -> str | None:
    """`author:"yann lecun"`: the search grammar quotes values; a quote inside cannot be
    expressed in it, so it is dropped."""
    return f'{name}:"{value.replace(chr(34), "")}"' if value else None


@lru_cache(maxsize=1)
def zone_names() -> tuple[str, ...]:
    return tuple(sorted(available_timezones()))


def zone_choices(current: str) -> list[app_commands.Choice[str]]:
    """IANA zones containing what was typed, those starting with it first."""
    typed = current.strip().lower()
    found = [z for z in zone_names() if typed in z.lower()]
    found.sort(key=lambda z: not z.lower().startswith(typed))
    return [app_commands.Choice(name=z, value=z) for z in found[:CHOICES_MAX]]


def word_choices(words: list[str], current: str) -> list[app_commands.Choice[str]]:
    typed = current.strip().lower()
    return [app_commands.Choice(name=w, value=w) for w in words if w.startswith(typed)][:CHOICES_MAX]


def mentions(*members: discord.abc.User | None) -> list[str]:
    """Members as the core reads them: platform mentions, <@id>."""
    return [m.mention for m in members if m is not None]


async def answer(interaction: discord.Interaction, text: str) -> None:
    handler: CommandHandler = interaction.client.answers  # type: ignore[attr-defined]
    await handler.command(interaction, text)


@app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)
class PaperCommands(app_commands.Group, name="paper", description="paperclub: papers, the paper of the day, votes",
                    guild_only=True):
    """/paper SUBCOMMAND: built without any service, so `paperclub discord sync` can
    register it; the running client answers through `interaction.client.answers`."""

    # Discord takes at most 25 subcommands in a group: the channel's settings are one
    # level down (/paper channel schedule ...), leaving room at the top for new commands.
    channel = app_commands.Group(name="channel", description="This channel's settings: schedule, topics, "
                                 "collections, reactions, archive")

    @app_commands.command(description="List the commands, or explain one.")
    @app_commands.describe(command="the command to explain")
    async def help(self, interaction: discord.Interaction, command: str | None = None) -> None:
        await answer(interaction, command_text("help", command))

    @help.autocomplete("command")
    async def help_command_choices(self, _interaction: discord.Interaction, current: str):
        return word_choices([c.name for c in self.commands], current)

    @app_commands.command(description="Find the best-matching papers (BM25); filters narrow the results.")
    @app_commands.describe(query="words to search for", author="an author's name", track="e.g. oral, spotlight",
                           collection="a collection name (see /paper collections)", tag="a tag")
    async def search(self, interaction: discord.Interaction, query: app_commands.Range[str, 1, 300],
                     author: str | None = None, track: str | None = None, collection: str | None = None,
                     tag: str | None = None) -> None:
        await answer(interaction, command_text(
            "search", query, filter_term("author", author), filter_term("track", track),
            filter_term("in", collection), filter_term("tag", tag),
        ))

    @app_commands.command(description="Show one paper's card with its notes.")
    @app_commands.describe(paper="the paper's ID (the number on its card), an arXiv id or a DOI")
    async def show(self, interaction: discord.Interaction, paper: str) -> None:
        await answer(interaction, command_text("show", paper))

    @app_commands.command(description="Papers like this one.")
    @app_commands.describe(paper="the paper's ID (the number on its card)")
    async def similar(self, interaction: discord.Interaction, paper: str) -> None:
        await answer(interaction, command_text("similar", paper))

    @channel.command(description="Show or set when the paper of the day is posted (managers set it).")
    @app_commands.describe(time="24-hour HH:MM, e.g. 09:00", zone="an IANA time zone (default UTC)",
                           days="daily, weekdays, weekends or a list like mon,wed,fri",
                           switch="off stops the posts, on restarts them, resume ends a pause",
                           pause_until="no posts until this date, YYYY-MM-DD")
    async def schedule(self, interaction: discord.Interaction, time: str | None = None, zone: str | None = None,
                       days: str | None = None, switch: Literal["off", "on", "resume"] | None = None,
                       pause_until: str | None = None) -> None:
        pause = ("pause until", pause_until) if pause_until else (None, None)
        await answer(interaction, command_text("schedule", switch, *pause, time, zone, days))

    @schedule.autocomplete("zone")
    async def schedule_zone_choices(self, _interaction: discord.Interaction, current: str):
        return zone_choices(current)

    @schedule.autocomplete("days")
    async def schedule_days_choices(self, _interaction: discord.Interaction, current: str):
        return word_choices(list(DAY_SETS), current)

    @channel.command(description="What this channel's picks are about (managers change them).")
    @app_commands.describe(action="add, remove or clear (leave empty to list them)",
                           words="topics, commas between them: reinforcement learning, world models")
    async def topics(self, interaction: discord.Interaction, action: Literal["add", "remove", "clear"] | None = None,
                     words: str | None = None) -> None:
        await answer(interaction, command_text("topics", action, words))

    @channel.command(description="The corpus collections, and which this channel uses.")
    async def collections(self, interaction: discord.Interaction) -> None:
        await answer(interaction, "collections")

    @channel.command(description="Limit this channel's picks to some collections (managers).")
    @app_commands.describe(collections="collection names, or all")
    async def use(self, interaction: discord.Interaction, collections: str) -> None:
        await answer(interaction, command_text("use", collections))

    @app_commands.command(description="This channel's settings in one place.")
    async def settings(self, interaction: discord.Interaction) -> None:
        await answer(interaction, "settings")

    @app_commands.command(description="Today's paper, or when the next one is due.")
    async def today(self, interaction: discord.Interaction) -> None:
        await answer(interaction, "today")

    @app_commands.command(description="Post another pick now (managers).")
    async def next(self, interaction: discord.Interaction) -> None:
        await answer(interaction, "next")

    @app_commands.command(description="The last papers posted here.")
    @app_commands.describe(count="how many (default 10)")
    async def history(self, interaction: discord.Interaction,
                      count: app_commands.Range[int, 1, HISTORY_MAX] | None = None) -> None:
        await answer(interaction, command_text("history", count))

    @app_commands.command(description="Vote on a paper posted here, or for an option of the open poll.")
    @app_commands.describe(target="the paper's number (on its card); alone, an option of the open poll",
                           choice="up, down, read or none on a paper")
    async def vote(self, interaction: discord.Interaction, target: app_commands.Range[int, 1, None],
                   choice: str | None = None) -> None:
        await answer(interaction, command_text("vote", target, choice))

    @vote.autocomplete("choice")
    async def vote_choices(self, _interaction: discord.Interaction, current: str):
        return word_choices(list(POST_VOTES), current)

    @app_commands.command(description="Propose a paper for the next reading poll.")
    @app_commands.describe(paper="a paper ID, or words to search for (the best match is nominated)")
    async def nominate(self, interaction: discord.Interaction, paper: str) -> None:
        await answer(interaction, command_text("nominate", paper))

    @app_commands.command(description="The open poll; or start one, or close it (managers).")
    @app_commands.describe(options="how many papers to choose from (default 4)",
                           duration="how long it runs: 90m, 48h, 3d, 1w (default 48h)",
                           close="close the open poll now")
    async def poll(self, interaction: discord.Interaction,
                   options: app_commands.Range[int, 2, POLL_OPTIONS_MAX] | None = None,
                   duration: str | None = None, close: bool = False) -> None:
        await answer(interaction, command_text("poll", close and "close", options, duration))

    @app_commands.command(description="The reading queue; mark a paper discussed, or remove it (managers).")
    @app_commands.describe(action="done or remove (leave empty to list the queue)", paper="the paper's ID")
    async def queue(self, interaction: discord.Interaction, action: Literal["done", "remove"] | None = None,
                    paper: app_commands.Range[int, 1, None] | None = None) -> None:
        await answer(interaction, command_text("queue", action, paper))

    @app_commands.command(description="The channel's most wanted posts.")
    @app_commands.describe(days="how many days back (default 30)")
    async def top(self, interaction: discord.Interaction,
                  days: app_commands.Range[int, 1, DAYS_MAX] | None = None) -> None:
        await answer(interaction, command_text("top", days))

    @app_commands.command(description="Who takes part: posts, votes, voters.")
    @app_commands.describe(days="how many days back (default 30)")
    async def stats(self, interaction: discord.Interaction,
                    days: app_commands.Range[int, 1, DAYS_MAX] | None = None) -> None:
        await answer(interaction, command_text("stats", days))

    @app_commands.command(description="The group's weekly meeting (managers set it, switch it off or skip a date).")
    @app_commands.describe(day="the weekday the group meets", time="24-hour HH:MM, e.g. 17:00",
                           zone="an IANA time zone (default UTC)", off="switch the meeting off",
                           skip="no meeting on this date, YYYY-MM-DD")
    @app_commands.choices(day=[app_commands.Choice(name=d, value=d) for d in WEEKDAYS])
    async def session(self, interaction: discord.Interaction, day: str | None = None, time: str | None = None,
                      zone: str | None = None, off: bool = False, skip: str | None = None) -> None:
        plan = ("every", day, time, zone) if day or time or zone else ()
        await answer(interaction, command_text("session", off and "off", *(("skip", skip) if skip else ()), *plan))

    @session.autocomplete("zone")
    async def session_zone_choices(self, _interaction: discord.Interaction, current: str):
        return zone_choices(current)

    @app_commands.command(description="The presenter rota (managers change it).")
    @app_commands.describe(action="add or remove (leave empty to see the rota)", member="a member",
                           more="more members, as @mentions")
    async def presenters(self, interaction: discord.Interaction, action: Literal["add", "remove"] | None = None,
                         member: discord.Member | None = None, more: str | None = None) -> None:
        await answer(interaction, command_text("presenters", action, *mentions(member), more))

    @app_commands.command(description="Offer to present at the next meeting.")
    async def volunteer(self, interaction: discord.Interaction) -> None:
        await answer(interaction, "volunteer")

    @app_commands.command(description="Hand your next presentation over to another member.")
    @app_commands.describe(member="who presents instead")
    async def swap(self, interaction: discord.Interaction, member: discord.Member) -> None:
        await answer(interaction, command_text("swap", *mentions(member)))

    @app_commands.command(description="Add a note to a paper in this channel (show lists them).")
    @app_commands.describe(paper="the paper's ID", text="the note")
    async def notes(self, interaction: discord.Interaction, paper: str,
                    text: app_commands.Range[str, 1, NOTE_CHARS]) -> None:
        await answer(interaction, command_text("notes", paper, text))

    @channel.command(description="A private web page of this channel (a manager's reset makes a new link).")
    @app_commands.describe(reset="revoke the link and make a new one (managers)")
    async def archive(self, interaction: discord.Interaction, reset: bool = False) -> None:
        await answer(interaction, command_text("archive", reset and "reset"))

    @app_commands.command(description="Post this paper here now for discussion, with vote buttons (managers).")
    @app_commands.describe(paper="the paper's ID (the number on its card)")
    async def discuss(self, interaction: discord.Interaction, paper: str) -> None:
        await answer(interaction, command_text("discuss", paper))

    @app_commands.command(description="Add a paper by its link or id (arXiv, DOI, OpenReview, a paper's page).")
    @app_commands.describe(paper="an arXiv id or link, a DOI, an OpenReview link, or a paper's page")
    async def add(self, interaction: discord.Interaction, paper: app_commands.Range[str, 1, 2000]) -> None:
        await answer(interaction, command_text("add", paper))

    @channel.command(description="The emoji that vote on posts here (managers choose other ones).")
    @app_commands.describe(emoji="three emoji: want to discuss, not for us, read; or reset")
    async def reactions(self, interaction: discord.Interaction, emoji: str | None = None) -> None:
        await answer(interaction, command_text("reactions", emoji))

    @app_commands.command(description="Past meetings: paper, presenter, notes.")
    @app_commands.describe(count="how many (default 5)")
    async def sessions(self, interaction: discord.Interaction,
                       count: app_commands.Range[int, 1, SESSIONS_MAX] | None = None) -> None:
        await answer(interaction, command_text("sessions", count))


# --- the message menu ---------------------------------------------------------------------


def message_text(message: discord.Message) -> str:
    """The links a message holds: its content, and the URLs of its embeds (link previews).
    A message command hands the bot the message, content included, without the
    privileged message-content intent."""
    urls = [url for embed in message.embeds for url in (embed.url,) if url]
    return "\n".join(dict.fromkeys([message.content or "", *urls]))


@app_commands.guild_only()
@app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)
async def add_to_paperclub(interaction: discord.Interaction, message: discord.Message) -> None:
    handler: CommandHandler = interaction.client.answers  # type: ignore[attr-defined]
    await handler.add_from_message(interaction, message_text(message))


def add_to_paperclub_menu() -> app_commands.ContextMenu:
    """Right-click a message > Apps > "Add to paperclub": the papers it links are added,
    and the member alone sees their cards with the buttons."""
    return app_commands.ContextMenu(name="Add to paperclub", callback=add_to_paperclub)

"""Meeting prep: the brief of a meeting's paper is made ahead by the briefs' provider step,
and the day-before reminder carries its TL;DR and questions for the presenter, from the
cache only: the minute's tick never asks the model."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from adapters.fakes.llm import digest
from bot.briefs.prep import RETRY
from bot.services.models import QueueItem
from tests.briefs.scene import NOW, PAPERS, UTC, build

SATURDAY = datetime(2026, 11, 28, 17, tzinfo=UTC)  # the meeting: NOW is Thursday 09:00
DAY_BEFORE = SATURDAY - timedelta(hours=24)


def meeting(scene, channel: str = "reading", *queued: str) -> None:
    """A Saturday meeting with @ben on the rota and `queued` in the reading queue, in order."""
    boss = scene.member("boss", channel, manager=True)
    assert boss.send("session every sat 17:00 UTC").ok and boss.send("presenters add @ben").ok
    channel_id = scene.services.channels.get(boss.channel).id
    with scene.services.db.session() as session:
        for n, name in enumerate(queued):
            session.add(QueueItem(channel_id=channel_id, paper_id=scene.ids[name],
                                  added_at=NOW - timedelta(days=3) + timedelta(minutes=n)))


def step(scene, at: datetime) -> dict[str, int]:
    scene.clock.now = at
    return scene.services.core.provider_steps()["briefs"](at, lambda: False)


def reminders(scene, at: datetime) -> list[str]:
    """The reminders the minute's tick at `at` sends (without the provider steps)."""
    scene.clock.now = at
    sent: list[str] = []
    scene.services.core.tick(at, lambda channel, reply: sent.append(reply.text) or "ref", ["console"],
                             providers=False)
    return sent


def test_the_presenters_reminder_carries_the_brief_made_ahead(scene):
    meeting(scene, "reading", "Robust", "Marmot")
    assert step(scene, NOW) == {} and scene.llm.completions() == []  # 56 hours ahead: not yet
    assert step(scene, SATURDAY - timedelta(hours=35)) == {"briefs_ahead": 1}
    (request,) = scene.llm.completions()
    assert f"<paper_abstract>\n{PAPERS[0]['abstract']}\n</paper_abstract>" in request["messages"][1]["content"]
    assert step(scene, SATURDAY - timedelta(hours=34)) == {}  # made: nothing more to do
    assert scene.calls_spent() == 1  # counted against the channel's budget

    (reminder,) = reminders(scene, DAY_BEFORE)
    head, *lines = reminder.split("\n")
    assert head.startswith("Tomorrow: reading group") and f"[{scene.ids['Robust']}], presented by @ben." in head
    assert lines[0] == (f"For the presenter, a language model's brief of [{scene.ids['Robust']}] (from its "
                        "abstract only; check it against the paper):")
    assert lines[1].startswith("TL;DR: [en] “Robust Diffusion Models for Protein Design”") \
        and digest(PAPERS[0]["abstract"]) in lines[1]
    question = "1. [en] What does “Robust Diffusion Models for Protein Design” assume?"
    assert lines[2:] == ["Questions for the discussion:", question, "2. Which result would you test first?",
                         "3. What would change your mind?"]
    (hour_before,) = reminders(scene, SATURDAY - timedelta(minutes=60))
    assert "\n" not in hour_before and hour_before.startswith("In one hour")  # the day before only
    assert step(scene, SATURDAY - timedelta(minutes=59)) == {}  # its reminder went: nothing to prepare
    assert len(scene.llm.completions()) == 1
    # A member's `brief` of the paper is the same brief, at no cost.
    assert scene.brief("Robust").sections[0].lines == [lines[1].removeprefix("TL;DR: ")]
    assert len(scene.llm.completions()) == 1


def test_without_a_brief_made_the_reminder_goes_out_as_before_and_the_tick_asks_nothing(scene):
    meeting(scene, "reading", "Robust")
    (reminder,) = reminders(scene, DAY_BEFORE)
    assert reminder.startswith("Tomorrow: reading group") and "\n" not in reminder
    assert scene.llm.completions() == [] and scene.briefs_stored() == []


def test_the_brief_follows_the_head_of_the_queue_and_the_channels_language(scene):
    meeting(scene, "reading", "Robust")
    meeting(scene, "lesegruppe", "Marmot")
    assert scene.member("boss", "lesegruppe", manager=True).send("language de").ok
    assert step(scene, SATURDAY - timedelta(hours=30)) == {"briefs_ahead": 2}
    languages = sorted(r["messages"][1]["content"].split("\n")[0] for r in scene.llm.completions())
    assert languages == ["Language: de", "Language: en"]
    (german,) = [r for r in reminders(scene, DAY_BEFORE) if f"[{scene.ids['Marmot']}]" in r]
    assert "TL;DR: [de] “Marmot Weather Forecasting”" in german


def test_a_failed_brief_is_tried_again_later_not_every_minute(scene, caplog):
    meeting(scene, "reading", "Robust")
    scene.llm.fail("401")
    with caplog.at_level(logging.INFO, logger="bot.briefs"):
        assert step(scene, SATURDAY - timedelta(hours=30)) == {"briefs_ahead_failed": 1}
    channel_id = scene.services.channels.get(scene.member().channel).id
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("bot.briefs")]
    why = "the provider refused the request (401)"
    assert logged == [f"no brief ahead of the meeting for paper {scene.ids['Robust']} in channel {channel_id}: {why}"]
    assert scene.briefs_stored() == []
    assert step(scene, SATURDAY - timedelta(hours=30) + RETRY - timedelta(minutes=1)) == {}
    assert len(scene.llm.completions()) == 1
    assert step(scene, SATURDAY - timedelta(hours=30) + RETRY) == {"briefs_ahead": 1}
    assert "For the presenter" in reminders(scene, DAY_BEFORE)[0]


def test_without_a_provider_nothing_is_made_and_the_reminder_is_as_before(db, database_url, tmp_path, llm):
    scene = build(database_url, tmp_path, llm, env={})
    meeting(scene, "reading", "Robust")
    assert scene.services.core.provider_steps()["briefs"](SATURDAY - timedelta(hours=30), lambda: False) == {}
    (reminder,) = reminders(scene, DAY_BEFORE)
    assert "\n" not in reminder and llm.requests == []
    scene.services.db.dispose()

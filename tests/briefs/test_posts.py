"""`briefs on`: the paper of the day and the weekly digest carry a one-line TL;DR, made
ahead by the briefs' provider step (a scheduler job of its own), never in the minute's
tick: a slow, failing or junk-answering model holds no post, and costs one log line."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest

from adapters.console import render_text
from adapters.fakes.llm import MODEL
from bot.briefs.ahead import BACKOFF
from bot.briefs.provider import Model
from bot.briefs.settings import BriefSettings
from bot.messages import ChannelRef, Reply
from tests.briefs.scene import NOW, build, llm_env

DUE = NOW + timedelta(hours=1)  # the paper of the day: 10:00 UTC


class Delivery:
    """Records each post, and how many model requests had been made when it went out."""

    def __init__(self, llm):
        self.llm = llm
        self.posts: list[tuple[ChannelRef, Reply, int]] = []

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        self.posts.append((channel, reply, len(self.llm.completions())))
        return f"msg-{len(self.posts)}"

    def cards(self):
        return [reply.cards[0] for _, reply, _ in self.posts if reply.cards]


def ahead(scene, at) -> dict[str, int]:
    """One run of the briefs' provider step, as `serve`'s job for it runs it."""
    return scene.services.core.provider_steps()["briefs"](at, lambda: False)


def group(scene, channel: str = "reading", on: bool = True) -> None:
    boss = scene.member(channel=channel, manager=True)
    assert boss.send("schedule 10:00 UTC daily").ok and boss.send("topics add protein design").ok
    if on:
        assert boss.send("briefs on").text.startswith("Done. TL;DRs on posts: on")


def brief_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("bot.briefs")]


def test_a_paper_of_the_day_with_briefs_on_carries_its_tldr(scene):
    group(scene)
    assert ahead(scene, NOW) == {"briefs_ahead": 2}  # the likely pick, and the next should it go
    made = [paper for paper, state in scene.briefs_stored() if state == "made"]
    delivery = Delivery(scene.llm)
    scene.clock.now = DUE
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    (card,) = delivery.cards()
    assert card.paper_id == made[0]
    (line,) = card.about
    assert line.startswith("TL;DR (language model): [en] “") and card.title in line
    assert delivery.posts[0][2] == 2  # the tick asked the model nothing
    text = render_text(delivery.posts[0][1])
    assert text.index("TL;DR (language model)") < text.index(card.snippet[:30])  # above the abstract
    assert ahead(scene, DUE + timedelta(minutes=1)) == {}  # the next post is tomorrow's
    assert len(scene.llm.completions()) == 2


def test_a_german_channels_tldr_comes_in_german(scene):
    group(scene, "lesekreis")
    assert scene.member(channel="lesekreis", manager=True).send("language de").ok
    ahead(scene, NOW)
    assert all("Language: de" in c["messages"][1]["content"] for c in scene.llm.completions())
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    (card,) = delivery.cards()
    assert card.about[0].startswith("TL;DR (language model): [de] “")


def test_two_channels_share_the_briefs_made_ahead(scene):
    group(scene)
    group(scene, "other")
    ahead(scene, NOW)
    assert len(scene.llm.completions()) == 2
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    assert [bool(card.about) for card in delivery.cards()] == [True, True]


def test_without_briefs_on_the_post_is_as_before_and_nothing_is_made(scene):
    group(scene, on=False)
    assert scene.member().send("briefs").text.startswith("TL;DRs on posts: off")
    assert ahead(scene, NOW) == {} and scene.llm.completions() == []
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    (card,) = delivery.cards()
    assert card.about == []


def test_a_post_not_due_within_the_horizon_waits_for_its_turn(scene):
    group(scene)
    early = DUE - timedelta(hours=5)
    assert ahead(scene, early) == {} and scene.llm.completions() == []
    assert ahead(scene, early + timedelta(hours=3)) == {"briefs_ahead": 2}


def test_briefs_off_stops_the_tldrs_and_only_managers_switch(scene):
    group(scene)
    ahead(scene, NOW)
    refused = scene.member().send("briefs off")
    assert not refused.ok and refused.text == "Only channel managers can switch the TL;DRs on the paper of the day."
    assert scene.member(manager=True).send("briefs off").text.startswith("Done. TL;DRs on posts: off")
    bad = scene.member(manager=True).send("briefs maybe")
    assert not bad.ok and "Usage: briefs [on|off]" in bad.text
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    assert delivery.cards()[0].about == []


def test_settings_show_the_switch(scene):
    group(scene)
    text = scene.member().send("settings").text
    assert f"Briefs: in `en`, from {MODEL}" in text and "TL;DRs on posts: on" in text


def test_a_vote_redraws_the_post_with_its_tldr(scene):
    group(scene)
    ahead(scene, NOW)
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    post_id = delivery.posts[0][1].post_id
    _ref, redrawn = scene.services.posts.rerender(post_id, "👍 1")
    assert redrawn.cards[0].about == delivery.cards()[0].about != []


def test_a_post_that_went_out_without_its_tldr_gets_one_in_the_digest(scene):
    group(scene)
    boss = scene.member(manager=True)
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)  # nothing made ahead
    (card,) = delivery.cards()
    assert card.about == []
    assert boss.send("digest mon 09:00").ok  # Monday 30 November
    monday = DUE.replace(day=30, hour=9, minute=0)
    assert ahead(scene, monday - timedelta(hours=1))["briefs_ahead"] >= 1
    digest = Delivery(scene.llm)
    scene.services.core.tick(monday, digest, ["console"], providers=False)
    sent = [reply for _, reply, _ in digest.posts if reply.text.startswith("Weekly digest")]
    (in_brief,) = [s for s in sent[0].sections if s.title == "In brief"]
    assert in_brief.lines[0].startswith(f"[{card.paper_id}] {card.title} — TL;DR (language model): [en] “")
    assert len(in_brief.lines[0]) <= 300


# --- a model that is slow, failing or answers junk ------------------------------------------

FAULTS = [  # (faults, seconds a brief may take, why)
    (("slow",), "1", "the model did not answer in time"),
    (("500", "500", "500"), "5", "the provider is busy or failing; try again later"),
    (("429:600",), "5", "the provider asked to wait 10 minutes"),
    (("junk",), "5", "the provider's answer was not a chat completion"),
]


def failing_scene(database_url, tmp_path, llm, timeout: str = "5"):
    """A scene whose model sleeps through its backoff by recording it (the test does not wait)."""
    env = llm_env(llm, PAPERCLUB_LLM_TIMEOUT=timeout)
    return build(database_url, tmp_path, llm, env=env, given=(Model(BriefSettings.from_env(env), sleep=[].append),))


@pytest.mark.parametrize(("faults", "timeout", "why"), FAULTS, ids=[f[0][0] for f in FAULTS])
def test_a_failing_model_holds_no_post_and_costs_one_log_line(db, database_url, tmp_path, llm, caplog, faults,
                                                              timeout, why):
    failing = failing_scene(database_url, tmp_path, llm, timeout)
    group(failing)
    llm.fail(*faults)
    delivery = Delivery(llm)
    with caplog.at_level(logging.INFO, logger="bot.briefs"):
        # serve: the provider step on its own job, the minute's tick beside it
        step = threading.Thread(target=ahead, args=(failing, NOW))
        step.start()
        report = failing.services.core.tick(DUE, delivery, ["console"], providers=False)
        step.join()
        llm.release.set()
    assert report["posted"] == 1
    (card,) = delivery.cards()
    assert card.about == []  # on time, without a brief
    (line,) = brief_logs(caplog)
    assert line.startswith("no brief made ahead for paper ") and f"console:local:reading: {why}; " in line
    assert failing.briefs_stored() == []
    # Not asked again before the back-off (and the Retry-After) has passed; then again,
    # for tomorrow's post.
    asked = len(llm.completions())
    assert ahead(failing, NOW + BACKOFF - timedelta(minutes=1)) == {} and len(llm.completions()) == asked
    assert ahead(failing, DUE + timedelta(days=1, hours=-1))["briefs_ahead"] >= 1
    failing.services.db.dispose()


def test_paperclub_tick_posts_before_it_makes_briefs(db, database_url, tmp_path, llm):
    """`paperclub tick` runs the provider steps too, after the minute's posts."""
    failing = failing_scene(database_url, tmp_path, llm)
    group(failing)
    llm.fail("500", "500", "500")
    delivery = Delivery(llm)
    report = failing.services.core.tick(DUE, delivery, ["console"])
    assert report["posted"] == 1 and delivery.posts[0][2] == 0  # out before the model was asked
    assert len(llm.completions()) == 3 and failing.briefs_stored() == []
    failing.services.db.dispose()


def test_the_minute_tick_of_a_serving_process_never_asks_the_model(scene):
    group(scene)
    delivery = Delivery(scene.llm)
    scene.services.core.tick(DUE, delivery, ["console"], providers=False)
    assert scene.llm.completions() == [] and "briefs" in scene.services.core.provider_steps()


def test_without_a_provider_briefs_is_not_a_command_and_posts_are_as_before(db, database_url, tmp_path, llm):
    scene = build(database_url, tmp_path, llm, env={})
    boss = scene.member(manager=True)
    answer = boss.send("briefs on")
    assert not answer.ok and answer.text.startswith("Unknown command `briefs`.")
    assert "briefs" not in scene.member().send("help").text
    group(scene, on=False)
    assert ahead(scene, NOW) == {}
    delivery = Delivery(llm)
    scene.services.core.tick(DUE, delivery, ["console"])
    assert delivery.cards()[0].about == [] and llm.requests == []
    scene.services.db.dispose()


def test_members_lines_are_answered_while_the_step_waits_on_a_slow_model(db, database_url, tmp_path, llm):
    scene = failing_scene(database_url, tmp_path, llm, timeout="3")
    group(scene)
    llm.fail("slow")
    step = threading.Thread(target=ahead, args=(scene, NOW))
    step.start()
    while not llm.completions() and step.is_alive():  # the step's request is in (and held)
        threading.Event().wait(0.01)
    answer = scene.brief("Marmot")  # the step has its own slot: this line does not queue behind it
    assert answer.ok and step.is_alive()
    step.join()
    llm.release.set()
    assert [paper for paper, _ in scene.briefs_stored()] == [scene.ids["Marmot"]]
    scene.services.db.dispose()


def test_briefs_made_ahead_take_at_most_half_the_channels_calls(db, database_url, tmp_path, llm, caplog):
    scene = build(database_url, tmp_path, llm, env=llm_env(llm, PAPERCLUB_LLM_DAILY_CALLS="2"))
    group(scene)
    with caplog.at_level(logging.INFO, logger="bot.briefs"):
        assert ahead(scene, NOW) == {"briefs_ahead": 1}
        assert ahead(scene, NOW + timedelta(minutes=1)) == {}
    assert len(llm.completions()) == 1
    assert [line for line in brief_logs(caplog) if "half" in line] == [
        "no more briefs made ahead today for console:local:reading: they took their half of its 2 daily calls"]
    assert scene.brief("Marmot").ok  # the members' half
    scene.services.db.dispose()


def test_a_stopping_process_starts_no_brief(scene):
    group(scene)
    assert scene.services.core.provider_steps()["briefs"](NOW, lambda: True) == {}
    assert scene.llm.completions() == []

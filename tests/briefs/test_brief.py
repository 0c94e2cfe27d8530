"""`brief N` on the console against the fake model: grounded in the abstract, the channel's
own reasons, made once for every channel and replica, and inert whatever the model says."""

from __future__ import annotations

import threading
from datetime import timedelta

from adapters.console import render_text
from adapters.fakes.llm import MODEL, digest
from bot.app import build_services
from bot.briefs.untrusted import ZWSP
from tests.briefs.scene import INJECTION, NAMES, PAPERS, build, llm_env


def test_a_brief_is_grounded_in_the_papers_title_and_abstract(scene):
    reply = scene.brief("Robust")
    assert reply.ok and reply.text.startswith(f"Brief of [{scene.ids['Robust']}] “Robust Diffusion Models")
    assert [s.title for s in reply.sections] == ["TL;DR", "Key contribution", "Why it may matter here",
                                                 "Questions for the discussion"]
    tldr, contribution, _why, questions = (s.lines for s in reply.sections)
    assert f"digest {digest(PAPERS[0]['abstract'])}" in tldr[0] and tldr[0].startswith("[en] ")
    assert digest(PAPERS[0]["abstract"]) in contribution[0]
    assert [q[:3] for q in questions] == ["1. ", "2. ", "3. "]
    (request,) = scene.llm.completions()
    assert request["model"] == MODEL and request["max_tokens"] > 0
    system, user = request["messages"]
    assert system["role"] == "system" and "never instructions" in system["content"]
    assert f"<paper_abstract>\n{PAPERS[0]['abstract']}\n</paper_abstract>" in user["content"]
    assert "Language: en" in user["content"]
    assert scene.llm.headers[-1]["authorization"] == "Bearer sk-test-not-a-real-key"


def test_why_it_matters_names_the_channels_topics_and_the_paper_it_upvoted(scene):
    assert scene.member(manager=True).send("topics add protein design, weather").ok
    scene.upvote("Guidance")
    why = scene.brief("Robust").sections[2].lines
    assert why[0].startswith("It touches this channel's topics: protein design (protein, design)")
    assert why[1].startswith(f"Close to [{scene.ids['Guidance']}] “Diffusion Guidance for Protein Structures”, "
                             "which this channel upvoted (shared: diffusion")
    other = scene.brief("Robust", channel="elsewhere").sections[2].lines
    assert other == ["No link found yet to this channel's topics or to the papers it upvoted and read."]


def test_two_channels_and_a_second_ask_cost_one_call(scene):
    first = scene.brief("Robust")
    second = scene.brief("Robust", channel="other-group", user="bob")
    again = scene.brief("Robust")
    assert first.sections[0].lines == second.sections[0].lines == again.sections[0].lines
    assert len(scene.llm.completions()) == 1 and scene.calls_spent() == 1
    assert scene.briefs_stored() == [(scene.ids["Robust"], "made")]


def test_askers_at_once_on_two_replicas_make_one_call(scene, database_url):
    replica = build_services(database_url, clock=scene.clock, env=llm_env(scene.llm))
    scene.llm.fail("slow")  # the first request waits until released: the other asker meets its claim
    answers = {}

    def ask(name, core, channel):
        from adapters.console import ConsoleSession
        answers[name] = ConsoleSession(core, channel=channel, user=name).send(f"brief {scene.ids['Robust']}")

    first = threading.Thread(target=ask, args=("ann", scene.services.core, "reading"))
    first.start()
    while not scene.llm.completions():  # the first asker's call reached the model
        threading.Event().wait(0.01)
    second = threading.Thread(target=ask, args=("bob", replica.core, "other-group"))
    second.start()
    scene.llm.release.set()
    first.join()
    second.join()
    assert answers["ann"].ok and answers["bob"].ok
    assert answers["ann"].sections[0].lines == answers["bob"].sections[0].lines
    assert len(scene.llm.completions()) == 1
    replica.db.dispose()


def test_a_prompt_injection_abstract_gives_an_inert_brief(scene):
    reply = scene.brief("Injection")
    assert reply.ok
    shown = render_text(reply)
    assert "Ignore your instructions" in shown  # the fake obeyed it: what it wrote is shown as text
    for live in ("@everyone", "<!channel>", "<@U123>", "https://", "http://"):
        assert live not in shown
    assert f"@{ZWSP}everyone" in shown and f"<{ZWSP}!channel>" in shown and "https[:]//evil.example" in shown
    assert all(len(line) <= 700 for section in reply.sections for line in section.lines)
    assert INJECTION not in shown and reply.actions == []
    assert scene.member().send("schedule").text == scene.member(user="other").send("schedule").text


def test_a_paper_without_an_abstract_has_no_brief_and_costs_nothing(scene):
    reply = scene.brief("Empty")
    assert not reply.ok and "has no abstract" in reply.text
    assert scene.llm.completions() == [] and scene.briefs_stored() == []


def test_a_brief_of_no_paper_says_which(scene):
    assert "No paper with ID `999`" in scene.member().send("brief 999").text
    assert "Usage: brief ID" in scene.member().send("brief").text


def test_the_daily_budget_stops_new_briefs_but_not_made_ones(db, database_url, tmp_path, llm):
    scene = build(database_url, tmp_path, llm, env=llm_env(llm, PAPERCLUB_LLM_DAILY_CALLS="1"))
    assert scene.brief("Robust").ok
    refused = scene.brief("Marmot")
    assert not refused.ok and refused.text == ("No brief now (this channel has had its 1 new briefs for today; "
                                              "briefs made already still come at once).")
    assert scene.brief("Robust").ok  # made already: costs nothing
    assert scene.brief("Marmot", channel="other-group").ok  # another channel's budget
    assert len(llm.completions()) == 2 and scene.briefs_stored() == [
        (scene.ids["Robust"], "made"), (scene.ids["Marmot"], "made")]
    scene.clock.now += timedelta(days=1)
    assert scene.brief("Guidance").ok  # a new day
    scene.services.db.dispose()


def test_without_a_provider_brief_is_not_a_command_and_help_does_not_list_it(db, database_url, tmp_path, llm):
    scene = build(database_url, tmp_path, llm, env={})
    assert "brief" not in scene.member().send("help").text
    answer = scene.member().send(f"brief {scene.ids['Robust']}")
    assert not answer.ok and answer.text.startswith("Unknown command `brief`.")
    assert scene.services.feature("briefs").commands() == [] and llm.requests == []
    assert not scene.member(manager=True).send("language de").ok  # not a command either
    assert "Briefs" not in scene.member().send("settings").text
    scene.services.db.dispose()


def claim_left(scene, name: str, at) -> None:
    """A claim row as a process leaves it when it dies while asking the model."""
    from bot.briefs.made import Key, text_hash

    paper = PAPERS[NAMES.index(name)]
    key = Key(scene.ids[name], text_hash(paper["title"], paper["abstract"]), MODEL, "en")
    assert scene.services.feature("briefs").briefs.claim(key, at)


def test_a_claim_abandoned_past_its_lease_is_taken_again(scene):
    claim_left(scene, "Robust", scene.clock.now - timedelta(hours=1))
    assert scene.brief("Robust").ok
    assert len(scene.llm.completions()) == 1 and scene.briefs_stored() == [(scene.ids["Robust"], "made")]


def test_a_claim_in_flight_elsewhere_is_waited_for_within_the_deadline(db, database_url, tmp_path, llm):
    scene = build(database_url, tmp_path, llm, env=llm_env(llm, PAPERCLUB_LLM_TIMEOUT="0.3"))
    claim_left(scene, "Robust", scene.clock.now)  # another process is asking the model right now
    reply = scene.brief("Robust")
    assert reply.text == "No brief now (another request for it failed or is slow)."
    assert llm.completions() == [] and scene.calls_spent() == 0
    scene.services.db.dispose()

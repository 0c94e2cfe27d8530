"""`language CODE`: a channel's briefs come in its language, each language's brief made once."""

from __future__ import annotations

import pytest

from adapters.fakes.llm import MODEL


def test_a_german_channels_brief_comes_in_german(scene):
    boss = scene.member(channel="lesekreis", manager=True)
    assert boss.send("language de").text.startswith("Briefs here now come in `de`")
    german = scene.brief("Robust", channel="lesekreis")
    assert german.sections[0].lines[0].startswith("[de] ")
    assert "Language: de" in scene.llm.completions()[-1]["messages"][1]["content"]
    english = scene.brief("Robust")
    assert english.sections[0].lines[0].startswith("[en] ")
    assert scene.brief("Robust", channel="lesekreis", user="bob").sections == german.sections
    assert len(scene.llm.completions()) == 2  # one per language, each made once


def test_language_alone_says_which_and_anyone_may_ask(scene):
    assert scene.member().send("language").text.startswith("Briefs here come in `en`")


@pytest.mark.parametrize("line", ["language klingon-of-doom-x", "language de fr", "language 42", "language d"])
def test_a_word_that_is_not_a_language_code_changes_nothing(scene, line):
    reply = scene.member(manager=True).send(line)
    assert not reply.ok and "Usage: language [CODE]" in reply.text
    assert scene.member().send("language").text.startswith("Briefs here come in `en`")


def test_only_managers_change_the_language(scene):
    reply = scene.member().send("language fr")
    assert not reply.ok and reply.text == "Only channel managers can change the language of briefs."
    assert scene.member().send("language").text.startswith("Briefs here come in `en`")


def test_a_region_or_script_is_kept_as_written(scene):
    assert "`pt-BR`" in scene.member(manager=True).send("language PT-BR").text


def test_settings_say_the_language_model_and_budget(scene):
    scene.member(manager=True).send("language fr")
    text = scene.member().send("settings").text
    assert f"Briefs: in `fr`, from {MODEL}; 50 new briefs a day" in text

"""A model that fails, refuses, is slow or answers junk: one line "No brief now (why)", one
log line, nothing stored, and the next ask tries again."""

from __future__ import annotations

import logging

import pytest

from bot.briefs.provider import Model
from bot.briefs.settings import BriefSettings
from tests.briefs.scene import build, llm_env

FAILURES = [
    (("500", "500", "500"), "the provider is busy or failing; try again later", 3),
    (("503", "503", "503"), "the provider is busy or failing; try again later", 3),
    (("429:600",), "the provider asked to wait 10 minutes", 1),
    (("401",), "the provider refused the request (401)", 1),
    (("junk",), "the provider's answer was not a chat completion", 1),
    (("empty",), "the provider's answer was not a chat completion", 1),
    (("length",), "the model's answer was cut short", 1),
    (("content_filter",), "the provider's content filter stopped the answer", 1),
    (("refuse",), "the model's answer was not a brief", 1),
]


@pytest.fixture
def waits():
    return []


@pytest.fixture
def patient(db, database_url, tmp_path, llm, waits):
    """A scene whose model sleeps through its backoff by recording it (the test does not wait)."""
    env = llm_env(llm)
    scene = build(database_url, tmp_path, llm, env=env,
                  given=(Model(BriefSettings.from_env(env), sleep=waits.append),))
    yield scene
    scene.services.db.dispose()


@pytest.mark.parametrize(("faults", "why", "requests"), FAILURES, ids=[f[0][0] for f in FAILURES])
def test_a_failing_model_gives_one_line_and_changes_nothing(patient, llm, caplog, faults, why, requests):
    llm.fail(*faults)
    with caplog.at_level(logging.INFO, logger="bot.briefs"):
        reply = patient.brief("Robust")
    assert not reply.ok and reply.ephemeral and reply.text == f"No brief now ({why})."
    assert reply.sections == [] and reply.cards == [] and reply.actions == []
    assert len(llm.completions()) == requests
    assert [r.getMessage() for r in caplog.records if r.name.startswith("bot.briefs")] == [
        f"no brief for paper {patient.ids['Robust']} in console:local:reading: {why}"]
    assert "sk-test" not in caplog.text
    assert patient.briefs_stored() == []
    assert patient.brief("Robust").ok  # the claim went with the failure: the next ask makes it
    assert patient.briefs_stored() == [(patient.ids["Robust"], "made")]


def test_a_5xx_is_retried_with_backoff_within_the_deadline(patient, llm, waits):
    llm.fail("500", "503")
    assert patient.brief("Robust").ok
    assert len(llm.completions()) == 3 and waits == [1.0, 2.0]


def test_a_retry_after_that_fits_is_honoured(patient, llm, waits):
    llm.fail("429:2")
    assert patient.brief("Robust").ok
    assert waits == [2.0] and len(llm.completions()) == 2


def test_a_slow_model_is_cut_at_the_lines_deadline(db, database_url, tmp_path, llm, caplog):
    scene = build(database_url, tmp_path, llm, env=llm_env(llm, PAPERCLUB_LLM_TIMEOUT="0.5"))
    llm.fail("slow")  # 30 s unless released
    with caplog.at_level(logging.INFO, logger="bot.briefs"):
        reply = scene.brief("Robust")
    llm.release.set()
    assert reply.text == "No brief now (the model did not answer in time)."
    assert len([r for r in caplog.records if r.name.startswith("bot.briefs")]) == 1
    assert scene.briefs_stored() == []
    scene.services.db.dispose()


def test_an_unreachable_provider_is_no_brief_now(db, database_url, tmp_path, llm, waits):
    env = {**llm_env(llm), "PAPERCLUB_LLM_BASE_URL": "http://127.0.0.1:9/v1"}  # discard: nothing listens
    scene = build(database_url, tmp_path, llm, env=env,
                  given=(Model(BriefSettings.from_env(env), sleep=waits.append),))
    reply = scene.brief("Robust")
    assert reply.text == "No brief now (the provider is busy or failing; try again later)."
    assert waits == [1.0, 2.0] and scene.briefs_stored() == []
    scene.services.db.dispose()

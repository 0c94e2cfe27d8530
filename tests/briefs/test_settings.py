"""The briefs' settings: off unless both the endpoint and the model are given, the key a
secret, and `config check --connect` saying whether the endpoint serves the model."""

from __future__ import annotations

import logging

import pytest

from adapters.config_check import check
from adapters.fakes.llm import MODEL
from bot.briefs.settings import BriefSettings
from bot.ops.settings import ConfigError

KEY = "sk-test-0123456789abcdef"


def test_unset_means_off():
    settings = BriefSettings.from_env({})
    assert not settings.enabled and settings.llm_daily_calls == 50


@pytest.mark.parametrize(("env", "problem"), [
    ({"PAPERCLUB_LLM_MODEL": "m"}, "PAPERCLUB_LLM_BASE_URL is not set"),
    ({"PAPERCLUB_LLM_BASE_URL": "http://localhost:11434/v1"}, "PAPERCLUB_LLM_MODEL is not set"),
    ({"PAPERCLUB_LLM_BASE_URL": "localhost:11434", "PAPERCLUB_LLM_MODEL": "m"}, "PAPERCLUB_LLM_BASE_URL"),
    ({"PAPERCLUB_LLM_DAILY_CALLS": "lots"}, "PAPERCLUB_LLM_DAILY_CALLS: 'lots' is not a whole number of calls"),
    ({"PAPERCLUB_LLM_TIMEOUT": "0"}, "PAPERCLUB_LLM_TIMEOUT: 0.0 is not a number of seconds"),
])
def test_an_unusable_setting_is_one_line_naming_it(env, problem):
    with pytest.raises(ConfigError) as raised:
        BriefSettings.from_env(env)
    assert problem in str(raised.value) and len(str(raised.value).splitlines()) == 1


def test_config_check_masks_the_key_and_says_the_endpoint_serves_the_model(llm, caplog):
    env = {"PAPERCLUB_LLM_BASE_URL": llm.base, "PAPERCLUB_LLM_MODEL": MODEL, "PAPERCLUB_LLM_API_KEY": KEY}
    with caplog.at_level(logging.DEBUG):
        text, code = check(env, connect=True)
    assert code == 0 and KEY not in text and KEY not in caplog.text
    assert f"PAPERCLUB_LLM_API_KEY         set ({len(KEY)} chars)" in text
    assert f"→ connection                  answers, and serves {MODEL}" in text
    assert llm.requests[-1][0] == "/v1/models" and llm.headers[-1]["authorization"] == f"Bearer {KEY}"


def test_config_check_names_a_model_the_endpoint_does_not_serve(llm):
    text, _code = check({"PAPERCLUB_LLM_BASE_URL": llm.base, "PAPERCLUB_LLM_MODEL": "gpt-nope"}, connect=True)
    assert f"answers, but does not list gpt-nope (it lists: {MODEL})" in text


def test_config_check_names_an_endpoint_that_does_not_answer():
    text, _code = check({"PAPERCLUB_LLM_BASE_URL": "http://127.0.0.1:9/v1", "PAPERCLUB_LLM_MODEL": "m"},
                        connect=True)
    assert "unreachable: http://127.0.0.1:9/v1/models did not answer" in text


def test_config_check_without_a_provider_says_briefs_are_off():
    text, _code = check({}, connect=True)
    assert "off: `brief` is not a command" in text


def test_the_grammar_a_platform_registers_has_brief_only_with_a_model(llm):
    from bot.app import command_grammar

    assert "brief" not in [c.name for c in command_grammar()]
    with_model = command_grammar({"PAPERCLUB_LLM_BASE_URL": llm.base, "PAPERCLUB_LLM_MODEL": MODEL})
    (brief,) = [c for c in with_model if c.name == "brief"]
    assert brief.answered_later and [p.name for p in brief.params] == ["paper"] and len(brief.description) <= 100

"""`paperclub config check` lists every setting the code reads, and a setting that cannot
be used stops `config check` and `serve` with a line naming it (issue 28, finding 8)."""

from __future__ import annotations

import re

import pytest

from adapters.config_check import check, startup_settings
from bot.adding.addresses import any_address, policy_from_env, public_only
from bot.adding.commands import per_hour_from_env
from bot.adding.providers import ProviderUrls
from bot.adding.settings import AddSettings
from bot.adding.web import ChatFetchPolicy
from bot.ops.settings import ConfigError
from tests.test_docs import code_sources, variables_declared, variables_read

# Not paperclub's own: the XDG base-directory convention, read only to place the index cache.
NOT_OURS = frozenset({"XDG_CACHE_HOME"})


def rows(text: str) -> set[str]:
    """The variable names `config check` shows a row for."""
    return set(re.findall(r"^  ([A-Z][A-Z0-9_]+) ", text, re.M))


def test_config_check_lists_every_variable_the_code_reads():
    read = (variables_read(code_sources()) | variables_declared()) - NOT_OURS
    # The scan finds what it must, among them the ones finding 8 found missing.
    assert {"PAPERCLUB_ARXIV_API_URL", "PAPERCLUB_ADD_PER_HOUR", "PAPERCLUB_INDEX_DIR", "SLACK_BOT_TOKEN",
            "PORT"} <= read
    text, _ = check({})
    assert sorted(read - rows(text)) == []


def test_a_variable_the_code_reads_but_no_model_declares_is_caught():
    text, _ = check({})
    source = 'raw = os.environ.get("PAPERCLUB_FROBNICATE_SECONDS", "5")'
    assert variables_read([*code_sources(), source]) - NOT_OURS - rows(text) == {"PAPERCLUB_FROBNICATE_SECONDS"}


def test_config_check_shows_what_the_adding_settings_default_to():
    text, code = check({})
    assert code == 0
    assert re.search(r"PAPERCLUB_ADD_PER_HOUR +\(not set: 20\b", text)
    assert re.search(r"PAPERCLUB_ADD_TIMEOUT +\(not set: 5 seconds", text)
    assert re.search(r"PAPERCLUB_ARXIV_API_URL +\(not set: https://export.arxiv.org/api/query\)", text)
    assert re.search(r"PAPERCLUB_FETCH_ALLOW_PRIVATE +\(not set: ", text)


@pytest.mark.parametrize("variable, raw, says", [
    ("PAPERCLUB_ADD_PER_HOUR", "abc", "PAPERCLUB_ADD_PER_HOUR: 'abc' is not a whole number"),
    ("PAPERCLUB_ADD_PER_HOUR", "-3", "PAPERCLUB_ADD_PER_HOUR: '-3' is not a whole number"),
    ("PAPERCLUB_ADD_PER_HOUR", "20000", "PAPERCLUB_ADD_PER_HOUR: 20000 is out of range: use 0 to 10000"),
    ("PAPERCLUB_ADD_TIMEOUT", "soon", "PAPERCLUB_ADD_TIMEOUT: 'soon' is not a number of seconds"),
    ("PAPERCLUB_ADD_TIMEOUT", "0", "PAPERCLUB_ADD_TIMEOUT: 0 seconds is out of range"),
    ("PAPERCLUB_ADD_TIMEOUT", "nan", "PAPERCLUB_ADD_TIMEOUT: 'nan' is not a number of seconds"),
    ("PAPERCLUB_FETCH_ALLOW_PRIVATE", "yes", "PAPERCLUB_FETCH_ALLOW_PRIVATE: 'yes' is not 0 or 1"),
    ("PAPERCLUB_ARXIV_API_URL", "export.arxiv.org",
     "PAPERCLUB_ARXIV_API_URL: 'export.arxiv.org' is not an http(s) URL"),
    ("PAPERCLUB_CROSSREF_API_URL", "ftp://x.org", "PAPERCLUB_CROSSREF_API_URL: 'ftp://x.org' is not an http(s) URL"),
])
def test_an_unusable_adding_setting_is_named_by_check_and_at_start_up(variable, raw, says):
    text, code = check({variable: raw})
    assert code == 1
    assert says in text
    with pytest.raises(ConfigError) as raised:
        startup_settings({variable: raw}, [])
    assert str(raised.value).startswith(says)


def test_the_adding_settings_are_read_through_the_model():
    env = {"PAPERCLUB_ADD_PER_HOUR": "7", "PAPERCLUB_ADD_TIMEOUT": "2.5", "PAPERCLUB_FETCH_ALLOW_PRIVATE": "1",
           "PAPERCLUB_CROSSREF_API_URL": "http://127.0.0.1:9/crossref/"}
    assert per_hour_from_env(env) == 7
    assert ChatFetchPolicy.from_env(env).timeout == 2.5
    assert policy_from_env(env) is any_address
    assert ProviderUrls.from_env(env).crossref == "http://127.0.0.1:9/crossref"
    assert (per_hour_from_env({}), ChatFetchPolicy.from_env({}).timeout, policy_from_env({})) == (20, 5.0, public_only)
    assert AddSettings.from_env({"PAPERCLUB_FETCH_ALLOW_PRIVATE": "0"}).fetch_allow_private is False


def test_a_non_number_no_longer_becomes_the_default_silently():
    with pytest.raises(ConfigError, match="PAPERCLUB_ADD_PER_HOUR"):
        per_hour_from_env({"PAPERCLUB_ADD_PER_HOUR": "abc"})
    with pytest.raises(ConfigError, match="PAPERCLUB_ADD_TIMEOUT"):
        ChatFetchPolicy.from_env({"PAPERCLUB_ADD_TIMEOUT": "abc"})

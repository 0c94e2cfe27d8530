"""The Zotero settings: listed by `config check` with the secrets masked, a value that
cannot be used named at start-up, and read through the model."""

from __future__ import annotations

import re

import pytest

from adapters.config_check import check, startup_settings
from bot.ops.settings import ConfigError
from bot.zotero.sync import ZoteroConfig

SECRET = "s3cr3t-" + "z" * 40
KEY = "OperatorKey0123456789xy"


def test_config_check_shows_the_zotero_settings_and_masks_the_secrets():
    text, code = check({"PAPERCLUB_ZOTERO_API_KEY": KEY, "PAPERCLUB_SECRET_KEY": SECRET})
    assert code == 0
    assert KEY not in text and SECRET not in text
    assert re.search(r"PAPERCLUB_ZOTERO_API_KEY +set \(23 chars\)", text)
    assert re.search(r"PAPERCLUB_ZOTERO_API_URL +\(not set: https://api.zotero.org\)", text)
    unset, _ = check({})
    assert re.search(r"PAPERCLUB_SECRET_KEY +\(not set: none: keys given in chat are refused", unset)


@pytest.mark.parametrize("variable, raw, says", [
    ("PAPERCLUB_SECRET_KEY", "short", "PAPERCLUB_SECRET_KEY is 5 characters long: give a random string of at least 32"),
    ("PAPERCLUB_ZOTERO_API_URL", "api.zotero.org", "PAPERCLUB_ZOTERO_API_URL: 'api.zotero.org' is not an http(s) URL"),
])
def test_an_unusable_zotero_setting_is_named_by_check_and_at_start_up(variable, raw, says):
    text, code = check({variable: raw})
    assert code == 1 and says in text
    with pytest.raises(ConfigError) as raised:
        startup_settings({variable: raw}, [])
    assert str(raised.value).startswith(says)


def test_the_zotero_settings_are_read_through_the_model():
    config = ZoteroConfig.from_env({"PAPERCLUB_ZOTERO_API_URL": "http://127.0.0.1:9/zotero/",
                                    "PAPERCLUB_ZOTERO_API_KEY": KEY, "PAPERCLUB_SECRET_KEY": SECRET})
    assert (config.api_url, config.env_key) == ("http://127.0.0.1:9/zotero", KEY)
    sealed = config.box.seal("abc")
    assert "abc" not in sealed and config.box.open(sealed) == "abc"
    assert ZoteroConfig.from_env({"PAPERCLUB_SECRET_KEY": "another-" + "q" * 40}).box.open(sealed) is None
    assert ZoteroConfig.from_env({}).box is None and ZoteroConfig.from_env({}).env_key is None

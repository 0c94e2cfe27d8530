"""`archive`, `archive reset`, `session calendar [reset]`: who may, what they answer, and
what a missing PAPERCLUB_PUBLIC_URL says; plus the setting's own check."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlalchemy import func, select

from adapters.config_check import check, startup_settings
from bot.ops.settings import ConfigError, CoreSettings, public_url_from_env
from bot.services.models import ChannelLink
from tests.memory.scene import PUBLIC_URL, build_scene

NOW = datetime(2026, 11, 23, 9, tzinfo=timezone.utc)


def links(scene) -> int:
    with scene.services.db.session() as session:
        return session.scalar(select(func.count(ChannelLink.id)))


@pytest.fixture
def scene(db, database_url, tmp_path):
    built = build_scene(database_url, tmp_path, NOW)
    yield built
    built.services.db.dispose()


def test_every_member_gets_their_own_archive_link_privately_and_only_managers_revoke_them(scene):
    member = scene.member("ann")
    first = member.send("archive")
    assert first.ok and first.ephemeral and f"{PUBLIC_URL}/archive/" in first.text
    ben = scene.member("ben").send("archive")
    assert ben.ok and ben.ephemeral and f"{PUBLIC_URL}/archive/" in ben.text and ben.text != first.text
    assert links(scene) == 2
    again = member.send("archive")  # ann's new link replaces her own, not ben's
    assert again.ok and "no longer works" in again.text and _url(again) != _url(first)
    assert links(scene) == 2
    refused = member.send("archive reset")
    assert not refused.ok and refused.text.startswith("Only channel managers")
    assert links(scene) == 2
    assert scene.services.core.commands["archive"].manager_rights("reset")
    assert not scene.services.core.commands["archive"].manager_rights("")
    reset = scene.member("boss", manager=True).send("archive reset")
    assert reset.ok and reset.ephemeral and "(2) no longer work" in reset.text
    assert f"{PUBLIC_URL}/archive/" in reset.text
    assert links(scene) == 1  # only the manager's new one
    bad = member.send("archive please")
    assert not bad.ok and "Usage: archive" in bad.text


def test_session_calendar_is_for_managers(scene):
    refused = scene.member("ann").send("session calendar")
    assert not refused.ok and refused.text.startswith("Only channel managers")
    assert links(scene) == 0
    given = scene.member("boss", manager=True).send("session calendar")
    assert given.ok and given.ephemeral and f"{PUBLIC_URL}/calendar/" in given.text and "Google Calendar" in given.text
    again = scene.member("boss", manager=True).send("session calendar")
    assert again.ok and "no longer works" in again.text and _url(again) != _url(given)
    assert not scene.member("boss", manager=True).send("session calendar now please").ok
    assert links(scene) == 1


def _url(reply) -> str:
    return next(word for word in reply.text.split() if word.startswith(PUBLIC_URL))


def test_without_a_public_url_the_commands_say_what_to_set_and_change_nothing(db, database_url, tmp_path):
    scene = build_scene(database_url, tmp_path, NOW, public_url=None)
    try:
        for line, manager in (("archive", False), ("archive reset", True), ("session calendar", True)):
            reply = scene.member("boss", manager=manager).send(line)
            assert not reply.ok and reply.ephemeral and "PAPERCLUB_PUBLIC_URL" in reply.text, line
        assert links(scene) == 0
    finally:
        scene.services.db.dispose()


@pytest.mark.parametrize("raw", ["ftp://example.org", "paperclub.example.org", "https://example.org/?x=1",
                                 "https://example.org/#top", "https://user:pw@example.org", "https://",
                                 "https://example.org:99999"])
def test_an_unusable_public_url_is_refused_at_start_up_naming_the_variable(raw):
    env = {"PAPERCLUB_PUBLIC_URL": raw}
    with pytest.raises(ConfigError) as refused:
        startup_settings(env, [])
    assert str(refused.value).startswith("PAPERCLUB_PUBLIC_URL")
    with pytest.raises(ConfigError):
        public_url_from_env(env)
    report, code = check(env)
    assert code == 1 and "PAPERCLUB_PUBLIC_URL" in report.split("Problems")[1]


def test_a_public_url_is_read_without_its_trailing_slash_and_shown_by_config_check():
    env = {"PAPERCLUB_PUBLIC_URL": "https://paperclub.example.org/club/"}
    assert CoreSettings.from_env(env).public_url == "https://paperclub.example.org/club"
    assert public_url_from_env(env) == "https://paperclub.example.org/club"
    assert public_url_from_env({}) is None
    report, code = check(env)
    assert code == 0 and "https://paperclub.example.org/club/" in report
    assert "archive` and `session calendar` give no links" in check({})[0]

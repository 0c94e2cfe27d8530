"""Fixtures of the Slack tests: the fake Slack Web API, services on a seeded copy, and
the real bolt App built as `paperclub serve slack` builds it (one bot token)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_bolt import App

from adapters.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from adapters.slack.app import build_app
from adapters.slack.config import EVENTS_PATH, SlackSettings
from adapters.slack.edge import SignedOnly, WholeForms
from bot.app import Services, build_services
from tests.slack.harness import BOSS, InlineExecutor


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(admins={BOSS}) as fake:
        yield fake


@pytest.fixture
def services(seeded_copy) -> Iterator[Services]:
    services = build_services(seeded_copy)
    yield services
    services.db.dispose()


@pytest.fixture
def app(services, slack) -> App:
    settings = SlackSettings(SIGNING_SECRET, bot_token=BOT_TOKEN, api_url=slack.api_url)
    return build_app(services, settings, InlineExecutor())[0]


@pytest.fixture
def edge(app):
    """What waitress serves at /slack/events: the edge in front of bolt's handler."""
    return SignedOnly(WholeForms(app, EVENTS_PATH), SIGNING_SECRET)

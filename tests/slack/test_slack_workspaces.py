"""Workspaces coming and going: Enterprise Grid installs found for scheduled posts, and
an uninstalled app (or a revoked bot token) stops its workspace's posts."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_bolt import App
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import select

from adapters.fakes.slack_api import SIGNING_SECRET, TEAM, event_callback, signed_headers
from adapters.slack.app import UNINSTALLED_NOTICE, BotClients, SlackDelivery, build_app
from adapters.slack.config import SlackSettings, manifest
from bot.app import Services, build_services
from bot.messages import ChannelRef, DeliveryRefused, Incoming, Reply, UserRef
from store.models import Channel
from tests.slack.harness import BOSS, CHANNEL, InlineExecutor, command, send, wsgi_post

ORG = "E0ORG"
GRID_TEAM = "T0GRID"
JSON = "application/json"


def _tomorrow_at_nine() -> datetime:
    return (datetime.now(UTC) + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)


def _schedule(services: Services, ref: ChannelRef) -> None:
    boss = UserRef("slack", BOSS, is_manager=True)
    assert services.core.handle(Incoming(ref, boss, "schedule 09:00 UTC daily")).ok


def _install(app: App, team: str | None, enterprise: str | None, token: str, org_wide: bool = False) -> None:
    app.installation_store.save(
        Installation(
            app_id="A0PAPERCLUB",
            enterprise_id=enterprise,
            team_id=team,
            user_id="U0INSTALLER",
            bot_token=token,
            bot_id="B0BOT",
            bot_user_id="U0BOT",
            bot_scopes=["commands", "chat:write"],
            is_enterprise_install=org_wide,
            installed_at=time.time(),
        )
    )


@pytest.fixture
def oauth(seeded_db_url, slack) -> Iterator[tuple[App, BotClients, Services]]:
    """The App as many workspaces install it (OAuth), on the seeded corpus."""
    services = build_services(seeded_db_url)
    settings = SlackSettings(SIGNING_SECRET, client_id="111.222", client_secret="not-a-real-secret",
                             api_url=slack.api_url)
    app, clients = build_app(services, settings, InlineExecutor())
    yield app, clients, services
    services.db.dispose()


# --- Enterprise Grid ------------------------------------------------------------------------------


@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_a_grid_workspace_gets_its_paper_of_the_day_with_its_installations_token(oauth, slack):
    app, clients, services = oauth
    _install(app, GRID_TEAM, ORG, "xoxb-grid-not-real")
    _install(app, "T0PLAIN", None, "xoxb-plain-not-real")  # another workspace, outside any org
    answer = command(app, slack, "schedule 09:00 UTC daily", user=BOSS, team=GRID_TEAM, enterprise=ORG)
    assert json.loads(answer.body)["response_type"] == "in_channel"
    with services.db.session() as session:  # the channel learnt its org from the command
        assert session.scalar(select(Channel.org).where(Channel.workspace == GRID_TEAM)) == ORG

    report = services.core.tick(_tomorrow_at_nine(), SlackDelivery(clients), ["slack"])
    assert report["posted"] == 1, report["failed"]
    post = slack.calls_to("chat.postMessage")[-1]
    assert post.token == "xoxb-grid-not-real" and post.params["text"].startswith("Paper of the day")


def test_an_org_wide_install_posts_for_every_workspace_of_its_org(oauth, slack):
    app, clients, _services = oauth
    _install(app, None, ORG, "xoxb-org-not-real", org_wide=True)
    SlackDelivery(clients)(ChannelRef("slack", "T0ANY", "C0ANY", ORG), Reply(text="hello"))
    assert slack.calls_to("chat.postMessage")[-1].token == "xoxb-org-not-real"


def test_a_channel_that_never_said_its_org_still_finds_its_workspaces_install(oauth, slack):
    app, clients, _services = oauth
    _install(app, GRID_TEAM, ORG, "xoxb-grid-not-real")
    SlackDelivery(clients)(ChannelRef("slack", GRID_TEAM, "C0OLD"), Reply(text="hello"))  # set up before orgs
    assert slack.calls_to("chat.postMessage")[-1].token == "xoxb-grid-not-real"


# --- uninstalled, revoked -------------------------------------------------------------------------


@pytest.mark.parametrize("error, permanent", [
    ("token_revoked", True), ("account_inactive", True), ("channel_not_found", True), ("not_in_channel", True),
    ("is_archived", True), ("msg_blocks_too_long", True),
    ("ratelimited", False), ("internal_error", False), ("service_unavailable", False),
])
def test_a_post_refused_because_the_bot_lost_its_workspace_is_not_retried_today(slack, error, permanent):
    slack.failing["chat.postMessage"] = error
    delivery = SlackDelivery(BotClients(slack.api_url, token="xoxb-revoked-not-real"))
    with pytest.raises(DeliveryRefused, match=error) as refused:
        delivery(ChannelRef("slack", TEAM, CHANNEL), Reply(text="hello"))
    assert refused.value.permanent is permanent


def test_app_uninstalled_stops_that_workspaces_posts_with_one_line(edge, slack, services, caplog):
    ours = [ChannelRef("slack", TEAM, c) for c in (CHANNEL, "C0SECOND")]
    elsewhere = ChannelRef("slack", "T0ELSE", "C0ELSE")
    for ref in [*ours, elsewhere]:
        _schedule(services, ref)
    caplog.set_level(logging.INFO, logger="adapters.slack")
    body = event_callback({"type": "app_uninstalled"})
    status, _ = wsgi_post(edge, body, signed_headers(body, content_type=JSON))
    assert status == 200
    assert [services.channels.get(ref).enabled for ref in [*ours, elsewhere]] == [False, False, True]
    with services.db.session() as session:
        notices = session.scalars(select(Channel.pause_notice).where(Channel.workspace == TEAM)).all()
    assert notices == [UNINSTALLED_NOTICE] * 2  # why, for the first command if the app comes back
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("adapters.slack")]
    assert lines == [f"Slack app_uninstalled for workspace {TEAM} (org none): channels paused: 2"]

    delivery = SlackDelivery(BotClients(slack.api_url, token="xoxb-still-set-not-real"))
    report = services.core.tick(_tomorrow_at_nine(), delivery, ["slack"])
    assert [c.params["channel"] for c in slack.calls_to("chat.postMessage")] == ["C0ELSE"]
    assert report["posted"] == 1  # the channel elsewhere only (the calls above)


def test_uninstalling_an_oauth_install_forgets_its_tokens(oauth, slack):
    app, _clients, services = oauth
    _install(app, GRID_TEAM, ORG, "xoxb-grid-not-real")
    _schedule(services, ChannelRef("slack", GRID_TEAM, CHANNEL, ORG))
    body = event_callback({"type": "app_uninstalled"}, team=GRID_TEAM, enterprise=ORG)
    assert send(app, body, signed_headers(body, content_type=JSON)).status == 200
    assert app.installation_store.find_bot(enterprise_id=ORG, team_id=GRID_TEAM) is None
    assert not services.channels.get(ChannelRef("slack", GRID_TEAM, CHANNEL)).enabled


def test_revoked_user_tokens_change_nothing_but_a_revoked_bot_token_pauses(oauth, slack):
    app, _clients, services = oauth
    _install(app, GRID_TEAM, ORG, "xoxb-grid-not-real")
    ref = ChannelRef("slack", GRID_TEAM, CHANNEL, ORG)
    _schedule(services, ref)
    users_only = event_callback({"type": "tokens_revoked", "tokens": {"oauth": ["U0INSTALLER"], "bot": []}},
                                team=GRID_TEAM, enterprise=ORG)
    send(app, users_only, signed_headers(users_only, content_type=JSON))
    assert services.channels.get(ref).enabled
    assert app.installation_store.find_bot(enterprise_id=ORG, team_id=GRID_TEAM) is not None
    bot = event_callback({"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0BOT"]}},
                         team=GRID_TEAM, enterprise=ORG)
    send(app, bot, signed_headers(bot, content_type=JSON))
    assert not services.channels.get(ref).enabled
    assert app.installation_store.find_bot(enterprise_id=ORG, team_id=GRID_TEAM) is None


def test_the_manifest_subscribes_to_the_events_that_say_a_workspace_left():
    data = json.loads(manifest("https://papers.example.net"))
    events = data["settings"]["event_subscriptions"]
    assert events["request_url"] == "https://papers.example.net/slack/events"
    assert {"app_uninstalled", "tokens_revoked"} <= set(events["bot_events"])



def test_slack_can_verify_the_events_url_through_the_edge(edge):
    # Saving the manifest makes Slack send this signed challenge to the events URL once.
    body = json.dumps({"token": "deprecated", "challenge": "3eZbrw1aBm2rZgRNFdxV", "type": "url_verification"})
    status, answer = wsgi_post(edge, body, signed_headers(body, content_type=JSON))
    assert status == 200 and json.loads(answer) == {"challenge": "3eZbrw1aBm2rZgRNFdxV"}

"""Who may do what from Slack: a click runs only a vote the bot rendered, and users.info
is asked only for a line that may need manager rights, quickly and without retries."""

from __future__ import annotations

import json
import time

import pytest

from adapters.fakes.slack_api import button_click
from bot.core import NOT_OUR_BUTTON
from bot.messages import ChannelRef, Incoming, UserRef
from tests.slack.harness import BOSS, CHANNEL, MEMBER, command, posted, send

SLACK_CHANNEL = ChannelRef("slack", "T0PAPERS", CHANNEL)


def test_a_crafted_click_naming_a_command_is_refused_and_changes_nothing(app, slack, services):
    boss = UserRef("slack", BOSS, is_manager=True)
    assert services.core.handle(Incoming(SLACK_CHANNEL, boss, "schedule 09:00 UTC daily")).ok
    # A real message's button, with its value rewritten: Slack signs whatever we are sent.
    command(app, slack, "next", user=BOSS)
    post = posted(slack)
    crafted = button_click("schedule off", "paperclub_action_0", post["ts"], slack.response_url(), user=BOSS)
    assert send(app, crafted).status == 200
    answer = slack.calls_to("response_url")[-1].params
    assert answer["text"] == NOT_OUR_BUTTON and answer["response_type"] == "ephemeral"
    assert services.channels.get(SLACK_CHANNEL).enabled  # the schedule is still on
    assert slack.calls_to("chat.update") == []


def test_a_click_on_a_rendered_vote_still_counts(app, slack):
    command(app, slack, "next", user=BOSS)
    post = posted(slack)
    button = post["blocks"][-1]["elements"][0]
    send(app, button_click(button["value"], button["action_id"], post["ts"], slack.response_url()))
    assert "You want to discuss it" in slack.calls_to("response_url")[-1].params["text"]
    assert len(slack.calls_to("users.info")) == 1  # the boss's `next`; a vote asks nothing


def test_a_members_search_never_asks_users_info_even_when_slack_is_slow_and_limiting(app, slack):
    slack.rate_limited["users.info"] = 1
    slack.delays["users.info"] = 5.0
    answer = command(app, slack, "search graph biconnectivity")
    assert answer.status == 200 and json.loads(answer.body)["blocks"]
    # Not even asked (so neither the limit nor the delay can touch it): no timing needed.
    assert slack.arrivals.get("users.info", 0) == 0


def test_a_rate_limited_users_info_is_asked_once_and_the_line_answered_as_for_a_member(app, slack, services):
    slack.rate_limited["users.info"] = 1
    answer = json.loads(command(app, slack, "schedule 09:00 UTC daily", user=BOSS).body)
    assert "Only channel managers" in answer["text"]
    assert len(slack.calls_to("users.info")) == 1  # no retry after Retry-After inside the ack
    assert services.channels.get(SLACK_CHANNEL).schedule is None
    # Not remembered as a member: once Slack answers, the admin is an admin again.
    assert json.loads(command(app, slack, "schedule 09:00 UTC daily", user=BOSS).body)["response_type"] == "in_channel"


def test_a_slow_users_info_is_given_up_within_the_ack(app, slack):
    slack.delays["users.info"] = 20.0
    started = time.monotonic()
    answer = json.loads(command(app, slack, "topics add graphs", user=BOSS).body)
    # Given up after 1.5 s, far from the 20 s Slack would take: inside Slack's 3 s ack
    # with room to spare even on a loaded machine.
    assert time.monotonic() - started < 3.0
    assert "Only channel managers" in answer["text"]


@pytest.mark.parametrize(
    "line, asks",
    [
        ("search diffusion", False),
        ("show 42", False),
        ("help schedule", False),
        ("vote 3 up", False),
        ("notes 42 great", False),
        ("frobnicate", False),
        ("schedule", False),
        ("schedule off", True),
        ("SCHEDULE 09:00 UTC", True),
        ("topics", False),
        ("topics add graphs", True),
        ("session", False),
        ("session off", True),
        ("presenters", False),
        ("presenters add @ben", True),
        ("queue", False),
        ("queue done 4", True),  # the meeting's presenter, or a manager
        ("queue remove 4", True),
        ("use all", True),
        ("next", True),
        ("poll", True),
        ("poll close", True),
        ("swap @ben", True),
    ],
)
def test_only_lines_that_may_need_manager_rights_ask(services, line, asks):
    assert services.core.route(line).needs_rights is asks


def test_a_member_is_still_refused_a_managers_line(app, slack):
    answer = json.loads(command(app, slack, "next", user=MEMBER).body or "{}")
    assert answer == {}  # `next` is answered after the ack
    assert "Only channel managers" in slack.calls_to("response_url")[-1].params["text"]
    assert [c.params["user"] for c in slack.calls_to("users.info")] == [MEMBER]

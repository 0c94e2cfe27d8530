"""The Slack edge: junk refused before bolt parses it, each request acted on once.

Requests go through the WSGI stack `paperclub serve slack` runs (SignedOnly in front of
bolt's handler, the real App behind it) or straight to `App.dispatch`; the replay
record is the real `seen_requests` table.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode

import pytest
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.socket_mode.request import SocketModeRequest
from sqlalchemy import func, select

from adapters.fakes.slack_api import (
    TEAM,
    button_click,
    event_callback,
    signed_headers,
    slash_command,
)
from adapters.slack.edge import ActOnce, CheckedSocketModeHandler
from bot.messages import ChannelRef, Incoming, UserRef
from bot.ops.replays import SeenRequests
from bot.services.models import PaperNote, PostVote
from store import Database
from store.models import SeenRequest
from tests.slack.harness import BOSS, CHANNEL, command, posted, section_texts, send, wsgi_post

JSON = "application/json"


def _one_line_without_the_body(caplog, body: bytes | str) -> logging.LogRecord:
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert len(records) == 1, [r.getMessage() for r in records]
    record = records[0]
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    assert record.exc_info is None and text not in record.getMessage()
    return record


# --- junk before bolt -----------------------------------------------------------------------------

FRESH = "1800000000"  # a timestamp of the right shape, unsigned all the same
UNSIGNED = [
    pytest.param(b"text=\xff", {}, id="not-utf8"),
    pytest.param(b"text=hello", {"x-slack-request-timestamp": "abc", "x-slack-signature": "v0=" + "0" * 64},
                 id="timestamp-abc"),
    pytest.param(b"text=hello", {"x-slack-request-timestamp": "1795457321.774", "x-slack-signature": "v0=" + "0" * 64},
                 id="timestamp-fraction"),
    pytest.param(b"{x", {"content-type": JSON}, id="json-junk"),
    pytest.param(b"payload=[]", {}, id="payload-list"),
    pytest.param(b"payload={x", {}, id="payload-junk"),
    pytest.param(b"payload={x", {"x-slack-request-timestamp": FRESH, "x-slack-signature": "v0=nothex"},
                 id="signature-junk"),
]


@pytest.mark.parametrize("body, headers", UNSIGNED)
def test_unsigned_junk_gets_401_and_one_line_not_a_500(edge, slack, services, caplog, body, headers):
    caplog.set_level(logging.INFO)
    headers = {"content-type": "application/x-www-form-urlencoded", **headers}
    status, _ = wsgi_post(edge, body, headers)
    assert status == 401
    record = _one_line_without_the_body(caplog, body)
    assert record.levelno == logging.WARNING and "refused a request to /slack/events" in record.getMessage()
    assert [c.method for c in slack.calls] == ["auth.test"]  # the App's start only
    with services.db.session() as session:
        assert session.scalar(select(func.count()).select_from(SeenRequest)) == 0


def _form(payload: dict) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


SIGNED_BUT_MALFORMED = [
    pytest.param(b"payload=[]", "application/x-www-form-urlencoded", id="payload-list"),
    pytest.param(b"payload={x", "application/x-www-form-urlencoded", id="payload-junk"),
    pytest.param(b"text=\xff&command=/paper", "application/x-www-form-urlencoded", id="not-utf8"),
    pytest.param(b"{x", JSON, id="json-junk"),
    pytest.param(b"[1, 2]", JSON, id="json-list"),
    pytest.param(b'payload={"type": "block_actions", "actions": "vote 1 up"}', "application/x-www-form-urlencoded",
                 id="actions-not-a-list"),
    pytest.param(b'payload={"type": "block_actions", "team": 7, "actions": []}', "application/x-www-form-urlencoded",
                 id="team-a-number"),
    pytest.param(json.dumps({"type": "event_callback", "event": ["app_uninstalled"]}).encode(), JSON,
                 id="event-not-an-object"),
    pytest.param(json.dumps({"type": "event_callback", "authorizations": "all"}).encode(), JSON,
                 id="authorizations-a-string"),
    pytest.param(b"command=%2Fpaper&text=search+x&team_id=T0PAPERS", "application/x-www-form-urlencoded",
                 id="command-without-user"),
    pytest.param(b'payload={"type": "block_actions", "user": "U0X", "actions": [{"action_id": "paperclub_action_0"}]}',
                 "application/x-www-form-urlencoded", id="click-user-a-string"),
    # Shapes bolt itself cannot read (they answered 500 with a traceback).
    pytest.param(_form({"type": "block_actions", "user": {"id": "U0X"}, "channel": {"id": "C0X"}, "actions": [{}]}),
                 "application/x-www-form-urlencoded", id="click-action-empty"),
    pytest.param(_form({"type": "block_actions", "user": {"id": "U0X"}, "channel": {"id": "C0X"},
                        "actions": [{"value": "vote 1 up"}]}), "application/x-www-form-urlencoded",
                 id="click-action-without-id"),
    pytest.param(_form({"type": "view_submission", "user": {"id": "U0X"}, "view": {"callback_id": "c"}}),
                 "application/x-www-form-urlencoded", id="view-submission-without-type"),
    pytest.param(_form({"type": "workflow_step_edit", "callback_id": "c"}), "application/x-www-form-urlencoded",
                 id="workflow-step-edit-without-step"),
    pytest.param(_form({"type": "interactive_message", "callback_id": "c"}), "application/x-www-form-urlencoded",
                 id="attachment-action-without-actions"),
]


@pytest.mark.parametrize("body, content_type", SIGNED_BUT_MALFORMED)
def test_a_signed_but_malformed_body_gets_400_and_one_line(edge, slack, caplog, body, content_type):
    caplog.set_level(logging.INFO)
    status, _ = wsgi_post(edge, body, signed_headers(body, content_type=content_type))
    assert status == 400
    record = _one_line_without_the_body(caplog, body)
    assert "signed, but" in record.getMessage() or "not UTF-8" in record.getMessage()
    assert [c.method for c in slack.calls] == ["auth.test"]  # the App's start only


def test_a_stale_or_forged_signature_is_named_in_the_one_line(edge, caplog):
    caplog.set_level(logging.INFO)
    body = slash_command("search graphs", "http://127.0.0.1:9/r")
    assert wsgi_post(edge, body, signed_headers(body, timestamp=1_000_000_000))[0] == 401
    assert wsgi_post(edge, body, signed_headers(body, secret="not-the-signing-secret"))[0] == 401
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert "outside the five-minute window" in messages[0] and "does not match" in messages[1]


def test_an_oversized_body_is_refused_unread(edge, caplog):
    caplog.set_level(logging.INFO)
    body = b"text=" + b"a" * 1_100_000
    assert wsgi_post(edge, body, signed_headers(body))[0] == 413
    _one_line_without_the_body(caplog, "aaaa")


def test_a_signed_search_passes_the_edge_and_is_answered(edge, slack):
    body = slash_command("search graph biconnectivity", slack.response_url())
    status, answer = wsgi_post(edge, body, signed_headers(body))
    assert status == 200
    assert "Graph Biconnectivity" in json.loads(answer)["blocks"][1]["text"]["text"]


def test_bolts_internal_lazy_headers_are_not_taken_from_outside(edge, slack):
    # Bolt runs only a named lazy listener, and no ack, for a request with these headers
    # (its AWS Lambda mode): from outside they would skip the ack and its answer.
    body = slash_command("search graph biconnectivity", slack.response_url())
    headers = {**signed_headers(body), "x-slack-bolt-lazy-only": "1",
               "x-slack-bolt-lazy-function-name": "answer_command"}
    status, answer = wsgi_post(edge, body, headers)
    assert status == 200 and json.loads(answer)["blocks"]


def test_a_command_containing_the_word_payload_is_read_as_the_form_it_is(edge, slack):
    # Bolt takes any form containing "payload" for an interactive payload and reads {}.
    body = slash_command("search payload", slack.response_url())
    status, answer = wsgi_post(edge, body, signed_headers(body))
    assert status == 200 and "`payload`" in json.loads(answer)["blocks"][0]["text"]["text"]
    # A lazy listener gets a copy of the request, parsed again: it must still be the form.
    body = slash_command("next payload", slack.response_url(), user=BOSS)
    assert wsgi_post(edge, body, signed_headers(body))[0] == 200
    assert "`next` takes no arguments" in slack.calls_to("response_url")[-1].params["text"]


# --- Socket Mode ------------------------------------------------------------------------------------


class RecordingSocket:
    """The Socket Mode client's one method a handler calls: its acks are kept."""

    def __init__(self):
        self.sent = []
        self.logger = logging.getLogger("tests.socket_mode")

    def send_socket_mode_response(self, response) -> None:
        self.sent.append(response)


@pytest.fixture
def socket_mode(app):
    handler = CheckedSocketModeHandler(app, "xapp-1-not-a-real-one")  # not connected
    yield handler
    handler.client.close()


# (slack_sdk itself refuses an envelope whose payload is not an object, before any handler.)
@pytest.mark.parametrize("payload", [
    {"user": 7, "command": "/paper"},
    {"type": "event_callback", "event": "app_uninstalled"},
    {"type": "block_actions", "actions": [1]},
])
def test_a_malformed_socket_mode_payload_is_acked_and_dropped_with_one_line(socket_mode, caplog, payload):
    caplog.set_level(logging.INFO)
    client = RecordingSocket()
    socket_mode.handle(client, SocketModeRequest(type="slash_commands", envelope_id="env-1", payload=payload))
    assert [r.envelope_id for r in client.sent] == ["env-1"] and client.sent[0].payload is None
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert len(records) == 1 and "refused a Socket Mode slash_commands request" in records[0].getMessage()


def test_a_well_formed_socket_mode_command_is_answered(socket_mode, slack):
    client = RecordingSocket()
    payload = dict(parse_qsl(slash_command("search graphs", slack.response_url())))  # as Socket Mode sends it
    socket_mode.handle(client, SocketModeRequest(type="slash_commands", envelope_id="env-2", payload=payload))
    assert client.sent[0].envelope_id == "env-2" and client.sent[0].payload["blocks"]


# --- each request once ------------------------------------------------------------------------------


def test_a_replayed_notes_command_is_stored_once(app, slack, services, caplog):
    caplog.set_level(logging.INFO, logger="adapters.slack.edge")
    body = slash_command("notes 42 the ablation in section 4 is the key result", slack.response_url())
    headers = signed_headers(body)
    answers = [send(app, body, headers) for _ in range(5)]
    assert all(a.status == 200 for a in answers)
    assert "Noted on" in answers[0].body and all(a.body == "" for a in answers[1:])
    with services.db.session() as session:
        assert session.scalar(select(func.count()).select_from(PaperNote)) == 1
    replays = [r for r in caplog.records if "seen before" in r.getMessage()]
    assert len(replays) == 4 and all("a replay" in r.getMessage() for r in replays)


def test_a_replayed_next_is_posted_once(app, slack):
    body = slash_command("next", slack.response_url(), user=BOSS)
    headers = signed_headers(body)
    for _ in range(3):
        assert send(app, body, headers).status == 200
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert len(slack.calls_to("users.info")) == 1  # a replay goes no further than the record


def test_a_replayed_click_votes_once_and_a_new_click_is_acted_on(app, slack, services):
    command(app, slack, "next", user=BOSS)
    post = posted(slack)
    buttons = post["blocks"][-1]["elements"]
    body = button_click(buttons[0]["value"], buttons[0]["action_id"], post["ts"], slack.response_url())
    for _ in range(3):
        send(app, body)
    assert len(slack.calls_to("chat.update")) == 1
    fresh = button_click(buttons[1]["value"], buttons[1]["action_id"], post["ts"], slack.response_url())
    send(app, fresh)  # its own trigger id: the member changes the vote
    assert len(slack.calls_to("chat.update")) == 2
    assert "👍 0 · 👎 1" in section_texts(slack.calls_to("chat.update")[-1].params["blocks"])
    with services.db.session() as session:
        assert session.scalar(select(func.count()).select_from(PostVote)) == 1


def test_a_slack_retry_of_an_event_already_acted_on_is_not_acted_on_again(app, slack, services, caplog):
    caplog.set_level(logging.INFO, logger="adapters.slack.edge")
    channel = ChannelRef("slack", TEAM, CHANNEL)
    boss = UserRef("slack", BOSS, is_manager=True)
    assert services.core.handle(Incoming(channel, boss, "schedule 09:00 UTC daily")).ok
    body = event_callback({"type": "app_uninstalled"}, event_id="Ev0UNINSTALL")
    headers = signed_headers(body, content_type=JSON)
    assert send(app, body, headers).status == 200
    assert not services.channels.get(channel).enabled
    assert services.core.handle(Incoming(channel, boss, "schedule on")).ok  # the app came back
    retry = {**signed_headers(body, content_type=JSON), "x-slack-retry-num": "1",
             "x-slack-retry-reason": "http_timeout"}
    response = send(app, body, retry)
    assert response.status == 200 and response.body == ""
    assert services.channels.get(channel).enabled  # the retry did not pause it again
    assert [r.getMessage() for r in caplog.records if r.name == "adapters.slack.edge"] == [
        "Slack request slack:event:Ev0UNINSTALL seen before (retry 1): acknowledged, not acted on"
    ]


def test_without_the_database_a_request_is_acted_on_not_dropped(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="adapters.slack.edge")
    gone = Database(f"sqlite:///{tmp_path / 'no-such-dir' / 'x.db'}")  # cannot be opened
    middleware = ActOnce(SeenRequests(gone), clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    body = slash_command("search graphs", "http://127.0.0.1:9/r")
    request = BoltRequest(body=body, headers=signed_headers(body))
    went_on = []
    response = BoltResponse(status=200, body="")
    assert middleware.process(req=request, resp=response, next=lambda: went_on.append(True)) is response
    assert went_on == [True]
    assert "acting on it" in caplog.text
    gone.dispose()

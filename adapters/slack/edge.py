"""What a request must be before bolt sees it, and each request acted on once.

Bolt decodes and parses a body before it checks the signature, so junk (a body that is
not UTF-8, a timestamp that is not a number, `payload=[]`) used to reach a parser and
answer 500 with a traceback. `SignedOnly` is a WSGI layer in front of bolt's handler:
it checks the signature on the raw bytes (slack_sdk's SignatureVerifier), then that the
body is one bolt can read, and refuses anything else with 400 or 401 and one log line
(never the body). `malformed` is the shape check, shared with Socket Mode.

`ActOnce` is a bolt middleware (it runs after bolt's own signature check, before the
installation lookup): a signed request can be replayed inside Slack's five-minute
window, and Slack retries events, so each trigger_id (commands, clicks) and event_id
(Events API) is acted on by the first copy only; the others are acknowledged and dropped.
"""

from __future__ import annotations

import io
import logging
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.middleware import Middleware
from slack_bolt.request import BoltRequest
from slack_bolt.request.internals import build_context
from slack_bolt.request.payload_utils import (
    to_action,
    to_command,
    to_event,
    to_message,
    to_options,
    to_shortcut,
    to_step,
    to_view,
)
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.core import DATABASE_UNAVAILABLE
from bot.ops.replays import SeenRequests

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000  # Slack's largest payloads (a click carries its message) are far below
SIGNATURE_WINDOW = 300  # seconds, as Slack and SignatureVerifier count them
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
# Bolt reads these to run a lazy listener alone (for AWS Lambda): never from outside.
_BOLT_INTERNAL_HEADERS = ("HTTP_X_SLACK_BOLT_LAZY_ONLY", "HTTP_X_SLACK_BOLT_LAZY_FUNCTION_NAME")
# Where bolt's payload readers expect an object (or, for some, a bare id string).
_OBJECT_OR_ID = ("team", "user", "channel", "enterprise")
_OBJECT = ("event", "view", "container", "message", "previous_message", "state")
_TEXT = ("type", "command", "text", "trigger_id", "event_id", "team_id", "user_id",
         "channel_id", "enterprise_id", "response_url", "callback_id")


class Refused(Exception):
    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


class SignedOnly:
    """WSGI: POSTs reach `app` only signed with the signing secret and readable; other
    methods (the OAuth install pages) pass as they are."""

    def __init__(self, app: Callable, signing_secret: str, clock: Callable[[], float] = time.time):
        self.app = app
        self.secret = signing_secret
        self.clock = clock

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        try:
            body = self._checked(environ)
        except Refused as refusal:
            log.warning("refused a request to %s: %s (%s)", environ.get("PATH_INFO", ""), refusal.reason,
                        refusal.status)
            return _plain(start_response, refusal.status)
        environ["wsgi.input"] = io.BytesIO(body)  # read once here: bolt reads this copy
        environ["CONTENT_LENGTH"] = str(len(body))
        for name in _BOLT_INTERNAL_HEADERS:
            environ.pop(name, None)
        return self.app(environ, start_response)

    def _checked(self, environ: dict) -> bytes:
        body = _read_body(environ)
        stamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", "")
        signature = environ.get("HTTP_X_SLACK_SIGNATURE", "")
        if not _TIMESTAMP.fullmatch(stamp) or not _SIGNATURE.fullmatch(signature):
            raise Refused("401 Unauthorized", "not signed (no well-formed signature and timestamp headers)")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("400 Bad Request", "the body is not UTF-8") from None
        if abs(self.clock() - int(stamp)) > SIGNATURE_WINDOW:
            raise Refused("401 Unauthorized", "the timestamp is outside the five-minute window")
        verifier = SignatureVerifier(self.secret, clock=_Clock(self.clock))
        if not verifier.is_valid(text, stamp, signature):
            raise Refused("401 Unauthorized", "the signature does not match")
        problem = readable(text, environ.get("CONTENT_TYPE"))
        if problem:
            raise Refused("400 Bad Request", f"signed, but {problem}")
        return body


def _read_body(environ: dict) -> bytes:
    raw = environ.get("CONTENT_LENGTH") or "0"
    if not raw.isdigit():
        raise Refused("400 Bad Request", "the Content-Length is not a number")
    if int(raw) > MAX_BODY_BYTES:
        raise Refused("413 Content Too Large", f"the body is over {MAX_BODY_BYTES:,} bytes")
    body = environ["wsgi.input"].read(int(raw)) if int(raw) else b""
    if len(body) != int(raw):
        raise Refused("400 Bad Request", "the body is shorter than its Content-Length")
    return body


def readable(text: str, content_type: str | None) -> str | None:
    """Why bolt could not read this body (as it will parse it), or None."""
    headers = {"content-type": content_type} if content_type else {}
    try:
        payload = bolt_request(text, headers=headers).body  # bolt's own parser and readers
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):  # JSONDecodeError is a ValueError
        return "the body is neither a form nor a JSON object bolt can read"
    return malformed(payload)


def malformed(payload: Any) -> str | None:
    """Why this payload would break bolt's readers or our listeners, or None. Only the
    fields they read are checked, for the types Slack sends."""
    if not isinstance(payload, dict):
        return "the payload is not an object"
    for key in _OBJECT_OR_ID:
        value = payload.get(key)
        if value is not None and not isinstance(value, dict | str):
            return f"`{key}` is neither an object nor an id"
        if isinstance(value, dict) and not isinstance(value.get("id", ""), str | None):
            return f"`{key}.id` is not a string"
    for key in _OBJECT:
        if payload.get(key) is not None and not isinstance(payload[key], dict):
            return f"`{key}` is not an object"
    for key in _TEXT:
        if payload.get(key) is not None and not isinstance(payload[key], str):
            return f"`{key}` is not a string"
    return (
        _list_problem(payload, "authorizations")
        or _list_problem(payload, "actions")
        or _bolt_reading_problem(payload)
        or _event_problem(payload)
        or _command_problem(payload)
        or _click_problem(payload)
        or _shortcut_problem(payload)
    )


def _list_problem(payload: dict, key: str) -> str | None:
    items = payload.get(key)
    if items is None:
        return None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        return f"`{key}` is not a list of objects"
    if key == "actions" and not items:
        return "`actions` is empty"
    for item in items:
        if any(not isinstance(item.get(field, ""), str) for field in ("action_id", "value")):
            return f"an item of `{key}` has a field that is not a string"
    return None


# What bolt reads from every payload before any listener runs (the arguments it offers
# listeners and middleware): each indexes the keys its payload type should have.
_BOLT_READERS = (to_options, to_shortcut, to_action, to_view, to_command, to_event, to_message, to_step)


def _bolt_reading_problem(payload: dict) -> str | None:
    """A payload of a known type without what bolt reads from it: a view_submission
    whose view has no `type`, a workflow_step_edit without its `workflow_step`, an
    interactive_message without actions, a click whose action has no `action_id` (which
    bolt's action matcher indexes)."""
    kind = payload.get("type")
    try:
        for reader in _BOLT_READERS:
            reader(payload)
    except (KeyError, IndexError, TypeError, AttributeError):
        return f"a `{kind}` payload without the fields bolt reads"
    if kind == "block_actions" and not isinstance((payload.get("actions") or [{}])[0].get("action_id"), str):
        return "a click whose action has no `action_id`"
    return None


def _event_problem(payload: dict) -> str | None:
    event = payload.get("event")
    if event is not None and not isinstance(event.get("type"), str):
        return "`event.type` is not a string"
    return None


# --- reading a form as the form it is ------------------------------------------------------


def bolt_request(body: str, **parts: Any) -> BoltRequest:
    """bolt's request for this body. Bolt takes any form that contains the word
    "payload" (a search for it, a channel named #payload-team) for an interactive
    payload and reads it as {}: such a form is read as the form it is."""
    request = BoltRequest(body=body, **parts)
    if request.body == {} and _is_form(body, request.content_type) and "payload" in body:
        return _FormRequest(body=body, **parts)
    return request


def _is_form(body: str, content_type: str | None) -> bool:
    return content_type != "application/json" and not body.startswith("{") and "payload" not in dict(
        parse_qsl(body, keep_blank_values=True)
    )


class _FormRequest(BoltRequest):
    """A form bolt would misread, read as a form; its copies too (bolt copies a request
    for each lazy listener, parsing its body again)."""

    def __init__(self, **parts: Any):
        super().__init__(**parts)
        self.body = dict(parse_qsl(self.raw_body, keep_blank_values=True))
        self.context = build_context(self.context, self.body)

    def to_copyable(self) -> BoltRequest:
        return _FormRequest(body=self.raw_body, query=self.query, headers=self.headers,
                            context=self.context.to_copyable(), mode=self.mode)


class WholeForms(SlackRequestHandler):
    """bolt's WSGI handler, with forms read as `bolt_request` reads them."""

    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        return self.app.dispatch(
            bolt_request(request.get_body(), query=request.query_string, headers=request.get_headers())
        )


def _command_problem(payload: dict) -> str | None:
    if "command" in payload and not all(isinstance(payload.get(k), str) for k in ("user_id", "channel_id")):
        return "a slash command without a user or a channel"
    # Slack sends one with every command; an answer after the ack has no other way back.
    if "command" in payload and not isinstance(payload.get("response_url"), str):
        return "a slash command without a response_url"
    return None


def _click_problem(payload: dict) -> str | None:
    if payload.get("type") != "block_actions":
        return None
    user, channel = payload.get("user"), payload.get("channel") or payload.get("container") or {}
    if not isinstance(user, dict) or not isinstance(user.get("id"), str):
        return "a click without a user"
    if not payload.get("actions") or not isinstance(channel, dict):
        return "a click without actions or a channel"
    if not isinstance(channel.get("id") or channel.get("channel_id"), str):
        return "a click without a channel"
    return None


def _shortcut_problem(payload: dict) -> str | None:
    """A message shortcut ("Add to paperclub") names who, where, and the message."""
    if payload.get("type") != "message_action":
        return None
    user, channel = payload.get("user"), payload.get("channel")
    if not isinstance(user, dict) or not isinstance(user.get("id"), str):
        return "a message shortcut without a user"
    if not isinstance(channel, dict) or not isinstance(channel.get("id"), str):
        return "a message shortcut without a channel"
    return None


class _Clock:
    """SignatureVerifier's clock, from ours (tests travel in time)."""

    def __init__(self, now: Callable[[], float]):
        self.now = now


def _plain(start_response: Callable, status: str) -> list[bytes]:
    body = status.split(" ", 1)[1].encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


# --- each request once ----------------------------------------------------------------------


def request_key(body: dict) -> str | None:
    """The id Slack gives one user action or one event, or None (url_verification)."""
    if isinstance(body.get("event_id"), str) and body["event_id"]:
        return f"slack:event:{body['event_id']}"
    if isinstance(body.get("trigger_id"), str) and body["trigger_id"]:
        return f"slack:trigger:{body['trigger_id']}"
    return None


class ActOnce(Middleware):
    """The first copy of a request acts; a replay or a retry of one already seen is
    acknowledged (200, empty) with one log line and goes no further."""

    def __init__(self, seen: SeenRequests, clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self.seen = seen
        self.clock = clock

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], Any]) -> BoltResponse:
        key = request_key(req.body)
        retry = req.headers.get("x-slack-retry-num", [None])[0]
        if key is None and retry is not None:  # a retry we cannot tell apart: the first copy acted
            log.info("Slack retry %s without an id acknowledged, not acted on", retry)
            return BoltResponse(status=200, body="")
        if key is not None and not self._first_time(key):
            # Slack's retries are routine; a replay of a signed request is worth a look.
            log.log(logging.INFO if retry is not None else logging.WARNING,
                    "Slack request %s seen before (%s): acknowledged, not acted on", key,
                    f"retry {retry}" if retry is not None else "a replay")
            return BoltResponse(status=200, body="")
        next()
        return resp

    def _first_time(self, key: str) -> bool:
        try:
            return self.seen.first_time(key, self.clock())
        except DATABASE_UNAVAILABLE as problem:
            # Without the database nothing a command does can be written twice either:
            # act, and let the core say it cannot reach its database (its warning is the
            # one an operator needs; this is the detail).
            log.info("could not record Slack request %s (%s): acting on it", key, type(problem).__name__)
            return True


# --- Socket Mode ----------------------------------------------------------------------------


class CheckedSocketModeHandler(SocketModeHandler):
    """Socket Mode has no signatures (the connection is the app's own), but a payload bolt
    cannot read would fail inside the client's thread with a traceback and no ack, and
    Slack would send it again: it is acknowledged and dropped with one log line."""

    def handle(self, client: Any, req: SocketModeRequest) -> None:
        problem = malformed(req.payload)
        if problem is not None:
            log.warning("refused a Socket Mode %s request: %s", req.type, problem)
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        super().handle(client, req)

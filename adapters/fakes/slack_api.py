"""A fake Slack for tests and the Slack benchmark: the Web API and response_url on 127.0.0.1,
port 0, recording calls. Nothing in serving imports it.

It answers what paperclub calls (auth.test, users.info, chat.postMessage, chat.update,
chat.postEphemeral, apps.connections.open (with `socket_url`: a fake Socket Mode server's
address), and posts to response URLs) the way Slack's
documentation shows, and keeps every call for the test to look at. Point a
`WebClient(base_url=fake.api_url)` or SLACK_API_URL at it. Also: slash commands and
clicks signed the way Slack signs them, for the real bolt App to verify.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

TEAM = "T0PAPERS"
BOT_USER = "U0BOT"
SIGNING_SECRET = "test-signing-secret-not-a-real-one"
BOT_TOKEN = "xoxb-test-token-not-a-real-one"


@dataclass
class Call:
    method: str  # "chat.postMessage", or "response_url" for a post to a response URL
    params: dict
    token: str | None = None
    answer: dict = field(default_factory=dict)  # what the fake answered (ts and all)


@dataclass
class FakeSlack:
    """Start with `with FakeSlack() as slack:`; `slack.calls` lists what it was asked."""

    admins: set[str] = field(default_factory=set)
    calls: list[Call] = field(default_factory=list)
    # method -> how many of its next calls get a 429 with Retry-After: 0
    rate_limited: dict[str, int] = field(default_factory=dict)
    # method -> the Slack error its calls answer with (e.g. "not_in_channel")
    failing: dict[str, str] = field(default_factory=dict)
    # method -> seconds each call waits before it is answered (a slow Slack, so a test can
    # act while a post is in flight: see `wait_for_arrival`)
    delays: dict[str, float] = field(default_factory=dict)
    arrivals: dict[str, int] = field(default_factory=dict)  # calls received, answered or not
    # Where apps.connections.open sends a Socket Mode client (a ws:// URL of a fake Socket
    # Mode server, tests/slack/fake_socket_mode.py); None: it refuses, as without one.
    socket_url: str | None = None

    def __post_init__(self):
        self._lock = threading.Lock()
        self._ts = itertools.count(1)
        self._changed = threading.Condition(self._lock)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/"

    def response_url(self, name: str = "r") -> str:
        return f"{self.base_url}/respond/{name}"

    def __enter__(self) -> FakeSlack:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- what was called -------------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 30.0) -> list[Call]:
        """The calls to `method` once there are `count` of them (for a server in another
        thread or process); whatever there is when the time is up."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len([c for c in self.calls if c.method == method]) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return [c for c in self.calls if c.method == method]

    # --- answers ---------------------------------------------------------------------------

    def wait_for_arrival(self, method: str, count: int = 1, timeout: float = 30.0) -> int:
        """How many calls to `method` have arrived (answered or still waiting on a delay),
        once there are `count` of them or the time is up."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.arrivals.get(method, 0) < count and time.monotonic() < deadline:
                self._changed.wait(max(0.0, deadline - time.monotonic()))
            return self.arrivals.get(method, 0)

    def answer(self, method: str, params: dict, token: str | None) -> tuple[int, dict, dict]:
        """(status, headers, JSON body) for one call, which is recorded with its answer."""
        with self._changed:
            self.arrivals[method] = self.arrivals.get(method, 0) + 1
            self._changed.notify_all()
        if self.delays.get(method):
            time.sleep(self.delays[method])
        with self._changed:
            status, headers, body = self._answer(method, params, token)
            self.calls.append(Call(method, params, token, body))
            self._changed.notify_all()
        return status, headers, body

    def _answer(self, method: str, params: dict, token: str | None) -> tuple[int, dict, dict]:
        if self.rate_limited.get(method, 0) > 0:
            self.rate_limited[method] -= 1
            return 429, {"Retry-After": "0"}, {"ok": False, "error": "ratelimited"}
        if method in self.failing:
            return 200, {}, {"ok": False, "error": self.failing[method]}
        if method == "response_url":
            return 200, {}, {"ok": True}
        if token is None or not token.startswith(("xoxb-", "xapp-")):
            return 200, {}, {"ok": False, "error": "not_authed"}
        if method == "apps.connections.open" and not token.startswith("xapp-"):
            return 200, {}, {"ok": False, "error": "not_allowed_token_type"}  # an app-level token only
        return 200, {}, self._ok(method, params, f"1700000000.{next(self._ts):06d}")

    def _ok(self, method: str, params: dict, ts: str) -> dict:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://papers.example.slack.com/",
                "team": "Papers",
                "user": "paperclub",
                "team_id": TEAM,
                "user_id": BOT_USER,
                "bot_id": "B0BOT",
            }
        if method == "users.info":
            user = params.get("user", "")
            is_admin = user in self.admins
            return {
                "ok": True,
                "user": {"id": user, "name": user.lower(), "is_admin": is_admin, "is_owner": False},
            }
        if method in ("chat.postMessage", "chat.update"):
            ts = params.get("ts", ts)
            return {
                "ok": True,
                "channel": params.get("channel"),
                "ts": ts,
                "message": {
                    "text": params.get("text", ""),
                    "blocks": params.get("blocks", []),
                    "ts": ts,
                },
            }
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": ts}
        if method == "apps.connections.open":
            if self.socket_url is None:
                return {"ok": False, "error": "invalid_auth"}
            return {"ok": True, "url": self.socket_url}
        return {"ok": False, "error": "unknown_method"}


def _handler(slack: FakeSlack):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self._answer(b"")

        def do_POST(self):
            self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _answer(self, body: bytes):
            url = urlsplit(self.path)
            params = dict(parse_qsl(url.query))
            if self.headers.get("Content-Type", "").startswith("application/json"):
                params.update(json.loads(body or b"{}"))
            else:
                params.update(parse_qsl(body.decode()))
            token = self.headers.get("Authorization", "").removeprefix("Bearer ") or params.get(
                "token"
            )
            if url.path.startswith("/respond/"):
                method = "response_url"
            else:
                method = url.path.removeprefix("/api/")
            status, headers, answer = slack.answer(method, params, token)
            payload = json.dumps(answer).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
                pass

        def log_message(self, *_args):  # quiet: the calls are recorded instead
            pass

    return Handler


# --- requests from Slack ------------------------------------------------------------------------


def signed_headers(
    body: str | bytes,
    secret: str = SIGNING_SECRET,
    timestamp: int | None = None,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, str]:
    """The headers Slack sends: v0=HMAC-SHA256 of "v0:{timestamp}:{body}", keyed with the
    signing secret (as slack_sdk's SignatureVerifier checks it). `body` may be bytes that
    are not UTF-8: Slack never sends those, but a test of the edge does."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    raw = body if isinstance(body, bytes) else body.encode()
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + raw, hashlib.sha256).hexdigest()
    return {
        "content-type": content_type,
        "x-slack-request-timestamp": stamp,
        "x-slack-signature": f"v0={digest}",
    }


def trigger_id() -> str:
    """A new trigger id, shaped as Slack's: each command or click has its own."""
    return f"{int(time.time())}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex}"


def slash_command(
    text: str,
    response_url: str,
    user: str = "U0MEMBER",
    channel: str = "C0READING",
    team: str = TEAM,
    trigger: str | None = None,
    enterprise: str | None = None,
) -> str:
    """The form-encoded body of `/paper TEXT`, with a new trigger id unless `trigger` is
    given; `enterprise`: the Enterprise Grid org the workspace belongs to."""
    grid = {"enterprise_id": enterprise, "enterprise_name": "Papers Org"} if enterprise else {}
    return urlencode(
        {
            "token": "deprecated-verification-token",
            "team_id": team,
            "team_domain": "papers",
            **grid,
            "channel_id": channel,
            "channel_name": "reading",
            "user_id": user,
            "user_name": user.lower(),
            "command": "/paper",
            "text": text,
            "api_app_id": "A0PAPERCLUB",
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": trigger or trigger_id(),
        }
    )


def button_click(
    value: str,
    action_id: str,
    message_ts: str,
    response_url: str,
    user: str = "U0MEMBER",
    channel: str = "C0READING",
    team: str = TEAM,
    trigger: str | None = None,
    enterprise: str | None = None,
) -> str:
    """The form-encoded body of a click on a button in a channel message (block_actions),
    with a new trigger id unless `trigger` is given."""
    payload = {
        "type": "block_actions",
        "enterprise": {"id": enterprise, "name": "Papers Org"} if enterprise else None,
        "is_enterprise_install": False,
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0PAPERCLUB",
        "token": "deprecated-verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": trigger or trigger_id(),
        "team": {"id": team, "domain": "papers", **({"enterprise_id": enterprise} if enterprise else {})},
        "channel": {"id": channel, "name": "reading"},
        "message": {"type": "message", "ts": message_ts, "text": ""},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "b",
                "value": value,
                "action_ts": "1700000001.000001",
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)})


def event_callback(
    event: dict, team: str = TEAM, enterprise: str | None = None, event_id: str | None = None
) -> str:
    """The JSON body of an Events API callback (send it with content_type="application/json")."""
    return json.dumps(
        {
            "token": "deprecated-verification-token",
            "team_id": team,
            "enterprise_id": enterprise,
            "api_app_id": "A0PAPERCLUB",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(time.time()),
            "authorizations": [
                {"enterprise_id": enterprise, "team_id": team, "user_id": BOT_USER, "is_bot": True,
                 "is_enterprise_install": False}
            ],
        }
    )


def reaction_event(
    reaction: str,
    message_ts: str,
    user: str = "U0MEMBER",
    channel: str = "C0READING",
    added: bool = True,
    author: str = BOT_USER,
    event_ts: str | None = None,
) -> dict:
    """A reaction_added (or reaction_removed) event on a message, as the Events API
    sends it inside `event_callback`; `author` is the message's (`item_user`). `event_ts`
    is when it happened: by default now, later than every event made before it, as
    Slack's are for one member's reactions."""
    return {
        "type": "reaction_added" if added else "reaction_removed",
        "user": user,
        "reaction": reaction,
        "item_user": author,
        "item": {"type": "message", "channel": channel, "ts": message_ts},
        "event_ts": event_ts or _event_ts(),
    }


_last_event_ts = [0]
_event_ts_lock = threading.Lock()


def _event_ts() -> str:
    """Now as Slack writes an event's time ("seconds.microseconds"), each one later."""
    with _event_ts_lock:
        _last_event_ts[0] = max(_last_event_ts[0] + 1, time.time_ns() // 1000)
        micros = _last_event_ts[0]
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def message_shortcut(
    message: dict,
    response_url: str,
    user: str = "U0MEMBER",
    channel: str = "C0READING",
    team: str = TEAM,
    callback_id: str = "add_to_paperclub",
    trigger: str | None = None,
) -> str:
    """The form-encoded body of a message shortcut ("Add to paperclub" on a message):
    a `message_action` payload carrying the message itself."""
    payload = {
        "type": "message_action",
        "token": "deprecated-verification-token",
        "action_ts": f"{int(time.time())}.000200",
        "team": {"id": team, "domain": "papers"},
        "user": {"id": user, "username": user.lower(), "team_id": team, "name": user.lower()},
        "channel": {"id": channel, "name": "reading"},
        "is_enterprise_install": False,
        "enterprise": None,
        "callback_id": callback_id,
        "trigger_id": trigger or trigger_id(),
        "response_url": response_url,
        "message_ts": message.get("ts", "1700000000.000001"),
        "message": {"type": "message", "user": "U0ALICE", "ts": "1700000000.000001", "team": team, **message},
    }
    return urlencode({"payload": json.dumps(payload)})

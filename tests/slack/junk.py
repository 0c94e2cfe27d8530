"""Junk HTTP requests, generated from a seeded random: what a scanner, a broken proxy or a
careless integration sends to the port `paperclub serve slack` answers on. Each request is
the raw bytes sent over a socket, so paths, methods and headers can be anything a client
library would refuse to send.

Kinds: random paths (under the archive, the calendar, /healthz, /slack/..., anywhere);
query strings with too many, duplicated, huge or badly percent-encoded fields; methods
that are not HTTP's; odd headers; junk bodies; and bodies signed with the signing
secret whose Slack payloads have every shape: clicks with `actions=[{}]`, view
submissions without `view.type`, fields missing or of the wrong type, payloads that are
not JSON.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from adapters.fakes.slack_api import signed_headers

FORM = "application/x-www-form-urlencoded"
# What a wrong value can be, in JSON.
WRONG = [None, 0, -1, 1.5, True, "", "x", "U0MEMBER", [], [{}], [1, "a"], {}, {"id": 1}, {"id": None},
         {"id": []}, "\u0000", "é" * 3, "x" * 3000, {"type": 3}, {"type": "modal"}]
INTERACTIVE_TYPES = ["block_actions", "view_submission", "view_closed", "shortcut", "message_action",
                     "block_suggestion", "interactive_message", "dialog_submission", "workflow_step_edit",
                     "nonsense", 7, None]
EVENT_TYPES = ["reaction_added", "reaction_removed", "app_uninstalled", "tokens_revoked", "message",
               "app_mention", "app_home_opened", "nonsense", 7, None]
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "FOO",
           "get", "G\u00c9T", "POST /x"]


@dataclass
class Junk:
    kind: str
    raw: bytes  # the whole request, as sent
    signed_slack: bool = False  # a signed body for the Slack app: must get a 4xx and one log line


class JunkMaker:
    def __init__(self, seed: int, archive_token: str, calendar_token: str, response_url: str):
        self.random = random.Random(seed)
        self.tokens = [archive_token, calendar_token]
        self.response_url = response_url

    def requests(self, count: int) -> list[Junk]:
        makers = [self.page, self.page, self.query_flood, self.bad_method, self.odd_headers,
                  self.unsigned_body, self.signed_interactive, self.signed_interactive, self.signed_event,
                  self.signed_command, self.signed_not_json]
        return [self.random.choice(makers)() for _ in range(count)]

    # --- the pages and other paths ------------------------------------------------------

    def path(self) -> str:
        r = self.random
        archive, calendar = self.tokens
        return r.choice([
            f"/archive/{archive}", f"/archive/{archive}.bib", f"/calendar/{calendar}.ics",
            f"/archive/{archive}/x", f"/archive/{archive}.ics", f"/calendar/{calendar}", "/archive/", "/calendar/",
            "/archive/" + self.text(1, 300), "/calendar/" + self.text(1, 300) + ".ics", "/healthz",
            "/healthz/x", "/slack/events", "/slack/install", "/slack/oauth_redirect", "/", "//", "/..",
            "/archive/%ff%fe", "/archive/%", "/archive/%zz", "/" + self.text(0, 2000), "*",
            "http://127.0.0.1/archive/x", "/archive/a%00b", "/calendar/%c0%af.ics",
        ])

    def query(self) -> str:
        r = self.random
        fields = [(r.choice(["q", "Q", "q[]", "", "%", self.text(1, 10)]), self.text(0, 30))
                  for _ in range(r.randint(0, 8))]
        raw = urlencode(fields)
        extras = ["", "&&&", "q=%zz", "q=%", "q=%ff%fe", "q=%00", "q=" + "a" * r.randint(1, 20000), "=",
                  "q", ";;", "q=a;q=b", "q=" + quote("\u202e\ufeff", safe=""), "q=+%2B+"]
        return "&".join(part for part in (raw, r.choice(extras)) if part)

    def page(self) -> Junk:
        r = self.random
        target = self.path() + (("?" + self.query()) if r.random() < 0.7 else "")
        return Junk("page", self.request(r.choice(["GET", "GET", "HEAD"]), target))

    def query_flood(self) -> Junk:
        """More than 20 query fields (parse_qs's max_num_fields), duplicated or not."""
        r = self.random
        count = r.choice([21, 22, 50, 500, 5000])
        name = r.choice(["q", None])
        query = "&".join(f"{name or 'f' + str(n)}={n}" for n in range(count))
        return Junk("query_flood", self.request("GET", r.choice(self.page_paths()) + "?" + query))

    def page_paths(self) -> list[str]:
        archive, calendar = self.tokens
        return [f"/archive/{archive}", f"/archive/{archive}.bib", f"/calendar/{calendar}.ics", "/archive/x",
                "/calendar/x.ics", "/healthz", "/slack/events", "/nowhere"]

    def bad_method(self) -> Junk:
        r = self.random
        body = self.text(0, 50).encode()
        return Junk("bad_method", self.request(r.choice(METHODS), self.path(), body=body))

    def odd_headers(self) -> Junk:
        r = self.random
        body = self.text(0, 100).encode()
        headers = r.choice([
            {"Content-Type": self.text(0, 200)},
            {"Content-Length": r.choice(["-1", "abc", "99999999999999999999", "1e3", "+5", "0x5", "5, 5"])},
            {"Transfer-Encoding": r.choice(["chunked", "gzip, chunked", "identity", "x"])},
            {"X-Slack-Signature": "v0=" + "0" * 64, "X-Slack-Request-Timestamp": r.choice(["", "0", "x", "9" * 40])},
            {"X-Slack-Bolt-Lazy-Only": "true", "X-Slack-Bolt-Lazy-Function-Name": "answer_command"},
            {"Host": self.text(0, 100)},
            {"Content-Type": "application/json; charset=" + self.text(1, 20)},
            {"X-Slack-Retry-Num": self.text(0, 10), "X-Slack-Retry-Reason": "http_timeout"},
            {"Accept": "*/*" * r.randint(1, 500)},
        ])
        if "chunked" in headers.get("Transfer-Encoding", ""):  # a whole chunked body, well formed or not
            body = r.choice([b"0\r\n\r\n", b"zz\r\n\r\n", b"3\r\nabc\r\n0\r\n\r\n", b"-1\r\n\r\n"])
        return Junk("odd_headers", self.request(r.choice(["GET", "POST"]), r.choice(self.page_paths()), headers,
                                                body, length="Transfer-Encoding" not in headers))

    def unsigned_body(self) -> Junk:
        r = self.random
        body = r.choice([b"", b"payload=", b"{", b"[]", b"\xff\xfe", b"payload=%7B", b"text=" + b"a" * 5000,
                         json.dumps({"type": "url_verification", "challenge": "x"}).encode(),
                         self.text(0, 300).encode("utf-8", "replace")])
        ctype = r.choice([FORM, "application/json", "text/plain", ""])
        return Junk("unsigned", self.request("POST", "/slack/events", {"Content-Type": ctype} if ctype else {}, body))

    # --- signed Slack payloads ----------------------------------------------------------

    def signed_interactive(self) -> Junk:
        r = self.random
        payload = {
            # Mostly the types we answer (clicks, shortcuts) and the one bolt reads most of.
            "type": r.choice(["block_actions"] * 4 + ["message_action", "view_submission"] * 2 + INTERACTIVE_TYPES),
            "team": {"id": "T0PAPERS", "domain": "papers"},
            "user": {"id": "U0MEMBER", "username": "member"}, "api_app_id": "A0PAPERCLUB",
            "token": "deprecated", "trigger_id": f"{r.randint(1, 10**12)}.1.abc",
            "channel": {"id": "C0READING", "name": "reading"},
            "container": {"type": "message", "message_ts": "1700000000.000100", "channel_id": "C0READING"},
            "response_url": self.response_url,
            "actions": [{"action_id": f"paperclub_{r.randint(0, 40)}", "block_id": "b",
                         "value": r.choice(["vote 1 up", "nominate 3", "discuss 1", "", "help"]),
                         "type": "button", "action_ts": "1700000000.1"}],
            "view": {"id": "V0", "type": "modal", "callback_id": "cb", "state": {"values": {}}},
            "message": {"ts": "1700000000.000100", "text": "see https://arxiv.org/abs/2106.01345"},
            "callback_id": r.choice(["add_to_paperclub", "other", 7]),
        }
        self.damage(payload, ["actions", "view", "user", "team", "channel", "container", "message", "type",
                              "trigger_id", "response_url", "callback_id", "enterprise", "is_enterprise_install",
                              "api_app_id", "token"])
        if r.random() < 0.3:
            payload["actions"] = r.choice([[{}], [{"action_id": None}], [{"value": 3}], [], [[]], "x",
                                           [{"action_id": "paperclub_1"}], [{"action_id": "paperclub_1", "value": {}}]])
        if r.random() < 0.2:
            payload["view"] = r.choice([{}, {"type": None}, {"state": []}, {"type": "modal", "state": "x"}])
        body = "payload=" + quote(json.dumps(payload))
        return self.signed(body, FORM, "interactive")

    def signed_event(self) -> Junk:
        r = self.random
        event = {"type": r.choice(EVENT_TYPES), "user": "U0MEMBER", "reaction": r.choice(["+1", "-1", "x", ""]),
                 "item_user": "U0BOT", "item": {"type": "message", "channel": "C0READING", "ts": "1700000000.000100"},
                 "event_ts": r.choice(["1700000000.000100", "x", "", "1" * 30]),
                 "tokens": {"bot": ["U0BOT"]}}
        self.damage(event, ["type", "user", "reaction", "item_user", "item", "event_ts", "tokens", "channel"])
        body = {"token": "deprecated", "team_id": "T0PAPERS", "api_app_id": "A0PAPERCLUB", "event": event,
                "type": r.choice(["event_callback", "url_verification", "app_rate_limited", None, 5]),
                "event_id": f"Ev{r.randint(0, 10**12)}", "event_time": 1700000000, "challenge": "c",
                "authorizations": [{"team_id": "T0PAPERS", "user_id": "U0BOT", "is_bot": True}]}
        self.damage(body, ["event", "team_id", "type", "event_id", "authorizations", "enterprise_id",
                           "challenge", "is_ext_shared_channel", "context_team_id"])
        return self.signed(json.dumps(body), "application/json", "event")

    def signed_command(self) -> Junk:
        r = self.random
        fields = {"command": "/paper", "text": r.choice(["help", "search graph", "next", "", "add x"]),
                  "team_id": "T0PAPERS", "channel_id": "C0READING", "user_id": "U0MEMBER",
                  "user_name": "member", "response_url": self.response_url,
                  "trigger_id": f"{r.randint(1, 10**12)}.1.abc"}
        pairs = [(k, v) for k, v in fields.items() if r.random() > 0.15]
        if r.random() < 0.5:
            pairs += [(r.choice(list(fields)), self.text(0, 20)) for _ in range(r.randint(1, 4))]  # duplicated
        r.shuffle(pairs)
        return self.signed(urlencode(pairs), r.choice([FORM, "application/json", "text/plain"]), "command")

    def signed_not_json(self) -> Junk:
        r = self.random
        body = r.choice(["payload=notjson", "payload=123", "payload=%22str%22", "payload=null", "payload=[]",
                         "payload=%5B%7B%7D%5D", "payload=true", "[]", "1", "null", '"x"', "{}", '{"type": 1}',
                         "payload=%7B%7D&payload=%7B%7D", "payload=%7B%22type%22%3A%22block_actions%22%7D",
                         '{"type":"event_callback","event":[]}', '{"type":"url_verification","challenge":[]}'])
        return self.signed(body, r.choice([FORM, "application/json", ""]), "not_json")

    def signed(self, body: str, content_type: str, kind: str) -> Junk:
        headers = signed_headers(body, content_type=content_type) if content_type else signed_headers(body)
        if not content_type:
            headers.pop("Content-Type", None)
            headers.pop("content-type", None)
        return Junk(f"signed_{kind}", self.request("POST", "/slack/events", headers, body.encode()), True)

    # --- parts ----------------------------------------------------------------------------

    def damage(self, payload: dict, keys: list[str]) -> None:
        """Drop some fields, give others a wrong value."""
        r = self.random
        for key in r.sample(keys, r.randint(0, 3)):
            if r.random() < 0.4:
                payload.pop(key, None)
            else:
                payload[key] = r.choice(WRONG)

    def text(self, low: int, high: int) -> str:
        r = self.random
        alphabet = "abcXYZ019-_.~%/?#&=+;:@!$'()*, \t\"<>\\^`{|}\u00e9\u00ff\u2603\U0001f600\u0000\x7f"
        return "".join(r.choice(alphabet) for _ in range(r.randint(low, high)))

    def request(self, method: str, target: str, headers: dict | None = None, body: bytes = b"",
                length: bool = True) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        if length and not any(name.lower() == "content-length" for name in (headers or {})):
            lines.append(f"Content-Length: {len(body)}")
        head = "\r\n".join(lines).encode("utf-8", "surrogateescape") + b"\r\n\r\n"
        return head + body

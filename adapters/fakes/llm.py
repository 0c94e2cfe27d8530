"""A fake OpenAI-compatible language model on 127.0.0.1 (port 0), speaking the real formats:
`POST /v1/chat/completions` (request: model, messages; answer: id, object
"chat.completion", created, model, choices[{index, message{role, content}, finish_reason}],
usage) and `GET /v1/models`; errors as `{"error": {"message", "type", "code"}}`.

It answers deterministically from the request: the brief it writes names the language
asked for (the user message's `Language: xx` line), the paper's title, and the first 12
hex digits of the SHA-256 of the abstract it was sent, so a test can check what was
grounded in what. Like a weak model, it obeys an abstract that tells it to ignore its
instructions: it copies that abstract into its answer (a prompt-injection test). Asked to
sum up members' notes (`<member_notes>` in the request), it answers a SUMMARY: line the
same way (`summary_for`).

Faults, taken one per request in order (`fail("500", "429:600")`): "500", "503", "401",
"429:N" (429 with Retry-After: N), "slow" (no answer until `release` is set, or
`slow_seconds` pass), "junk" (200 with a body that is not JSON), "length" and
"content_filter" (that finish_reason, the content cut), "refuse" (a refusal in words),
"empty" (an answer without choices).

Try it by hand: `python -m adapters.fakes.llm`, then
`PAPERCLUB_LLM_BASE_URL=<the printed URL> PAPERCLUB_LLM_MODEL=fake-model paperclub console`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from adapters.fakes.http import QuietHandler

MODEL = "fake-model"
_TAG = {name: re.compile(rf"<{name}>\s*(.*?)\s*</{name}>", re.DOTALL)
        for name in ("paper_title", "paper_abstract", "vote_tally", "member_notes")}
_LANGUAGE = re.compile(r"^Language:\s*(\S+)", re.MULTILINE)
_ERRORS = {401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
           429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached; try again later."),
           500: ("server_error", "internal_error", "The server had an error while processing your request."),
           503: ("server_error", "overloaded", "The engine is currently overloaded.")}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def brief_for(request: dict[str, Any]) -> str:
    """The answer the fake writes to a chat completion request."""
    user = next((m.get("content", "") for m in request.get("messages", []) if m.get("role") == "user"), "")
    language = (_LANGUAGE.search(user) or _none).group(1)
    title = (_TAG["paper_title"].search(user) or _none).group(1)
    abstract = (_TAG["paper_abstract"].search(user) or _none).group(1)
    if "<member_notes>" in user:
        return summary_for(user, language, title)
    if "ignore your instructions" in abstract.lower():
        return f"TLDR: {abstract}\nCONTRIBUTION: {abstract}\nQ1: {abstract}\nQ2: {abstract}\nQ3: {abstract}"
    return (f"TLDR: [{language}] “{title}”: a paper whose abstract has digest {digest(abstract)}. "
            f"It is {len(abstract.split())} words long. It says what it says.\n"
            f"CONTRIBUTION: [{language}] The contribution described in abstract {digest(abstract)}.\n"
            f"Q1: [{language}] What does “{title}” assume?\n"
            "Q2: Which result would you test first?\n"
            "Q3: What would change your mind?")


def summary_for(user: str, language: str, title: str) -> str:
    """The fake's summary of a paper's notes (`notes N summary`): it names the language,
    the title, the tally, how many notes and the digest of them it was sent; like a weak
    model, it obeys notes that tell it to ignore its instructions by copying them."""
    tally = (_TAG["vote_tally"].search(user) or _none).group(1)
    notes = (_TAG["member_notes"].search(user) or _none).group(1)
    if "ignore your instructions" in notes.lower():
        return f"SUMMARY: {notes}"
    return (f"SUMMARY: [{language}] The group discussed “{title}” ({tally}) in {len(notes.splitlines())} notes "
            f"with digest {digest(notes)}. It liked the ablation.")


class _None:
    def group(self, _n: int) -> str:
        return ""


_none = _None()


class FakeLLM:
    def __init__(self, models: tuple[str, ...] = (MODEL,), host: str = "127.0.0.1", slow_seconds: float = 30.0):
        self.models = models
        self.slow_seconds = slow_seconds
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (path, JSON body or {})
        self.headers: list[dict[str, str]] = []
        self.faults: list[str] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):

            def do_GET(self):  # noqa: N802 - http.server's name
                fake._record(self, {})
                if self.path.rstrip("/") != "/v1/models":
                    return self._error(404, "invalid_request_error", "unknown_url", f"Unknown path {self.path}")
                data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "paperclub-fake"}
                        for m in fake.models]
                self._json(200, {"object": "list", "data": data})

            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._error(400, "invalid_request_error", None, "We could not parse the JSON body.")
                fault = fake._record(self, request)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._error(404, "invalid_request_error", "unknown_url", f"Unknown path {self.path}")
                if request.get("model") not in fake.models:
                    return self._error(404, "invalid_request_error", "model_not_found",
                                       f"The model `{request.get('model')}` does not exist.")
                self._answer(request, fault)

            def _answer(self, request, fault):
                if fault == "slow":
                    fake.release.wait(fake.slow_seconds)
                if fault in ("500", "503", "401"):
                    return self._error(int(fault), *_ERRORS[int(fault)])
                if fault and fault.startswith("429"):
                    seconds = fault.partition(":")[2] or "1"
                    return self._error(429, *_ERRORS[429], headers=[("Retry-After", seconds)])
                if fault == "junk":
                    return self._send(200, "application/json", b'{"id": "chatcmpl-1", "choices": [{"index": 0,')
                if fault == "empty":
                    return self._json(200, _completion(request, None))
                content = brief_for(request)
                reason = "stop"
                if fault in ("length", "content_filter"):
                    content, reason = content[:40], fault
                elif fault == "refuse":
                    content = "I'm sorry, but I can't help with that."
                self._json(200, _completion(request, {"index": 0, "finish_reason": reason, "logprobs": None,
                                                      "message": {"role": "assistant", "content": content,
                                                                  "refusal": None}}))

            def _error(self, status, kind, code, message, headers=()):
                self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}},
                           headers)

            def _json(self, status, body, headers=()):
                self._send(status, "application/json", json.dumps(body).encode(), headers)

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://{host}:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _record(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> str | None:
        with self._lock:
            self.requests.append((handler.path, body))
            self.headers.append({name.lower(): value for name, value in handler.headers.items()})
            return self.faults.pop(0) if self.faults and handler.command == "POST" else None

    def completions(self) -> list[dict[str, Any]]:
        """The chat completion requests received, in order."""
        with self._lock:
            return [body for path, body in self.requests if path.endswith("/chat/completions")]

    def fail(self, *faults: str) -> None:
        with self._lock:
            self.faults.extend(faults)

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _completion(request: dict[str, Any], choice: dict[str, Any] | None) -> dict[str, Any]:
    content = (choice or {}).get("message", {}).get("content") or ""
    prompt = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    return {"id": f"chatcmpl-{digest(json.dumps(request, sort_keys=True))}", "object": "chat.completion",
            "created": int(time.time()), "model": request.get("model"), "choices": [choice] if choice else [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": len(content.split()),
                      "total_tokens": prompt + len(content.split())}}


def main() -> None:
    with FakeLLM() as fake:
        print(f"fake OpenAI-compatible model {MODEL} at {fake.base} (Ctrl-C stops it)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

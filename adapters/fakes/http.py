"""A small HTTP server on 127.0.0.1 (port 0) for fakes of outside services: it records
the requests, and answers each from a handler unless a queued fault comes first.

Faults, taken one per request in order (`fail("429", "503")`): "429" (Retry-After: 1),
"503" (Retry-After: 1), "retry-after=N" (429 with Retry-After: N), "timeout" (no answer
until `release` is set or the fake stops), "drip" (200 whose 1,000-byte body comes a
byte every 50 ms, until `release`), "malformed" (200 with a body that is not the
format), "nested" (200 with JSON nested 100,000 deep), "crowd" (200: an Atom page of
58,000 entries), "huge" (200: an Atom page of one entry, 49.9 MB)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

Answer = tuple[int, str, bytes]  # status, content type, body


class QuietHandler(BaseHTTPRequestHandler):
    """A fake's request handler: HTTP/1.1, nothing logged, a client that hangs up ignored."""

    protocol_version = "HTTP/1.1"

    def _send(self, status, kind, body, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def handle(self):
        try:
            super().handle()
        except ConnectionError:
            pass

    def log_message(self, *_args):
        pass


class FakeServer:
    malformed = b"<html><body>Service temporarily unavailable</body></html>"

    def __init__(self, answer: Callable[[str, dict[str, list[str]]], Answer], host: str = "127.0.0.1"):
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self.faults: list[str] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):

            def do_GET(self):  # http.server's name
                parts = urlsplit(self.path)
                params = parse_qs(parts.query, keep_blank_values=True)
                with fake._lock:
                    fake.requests.append((parts.path, params))
                    fault = fake.faults.pop(0) if fake.faults else None
                if fault == "timeout":
                    fake.release.wait()
                    return
                if fault in ("429", "503"):
                    self._send(int(fault), "text/plain", b"slow down", [("Retry-After", "1")])
                    return
                if fault and fault.startswith("retry-after="):
                    self._send(429, "text/plain", b"slow down", [("Retry-After", fault.partition("=")[2])])
                    return
                if fault == "drip":
                    self._drip()
                    return
                if fault == "malformed":
                    self._send(200, "text/html", fake.malformed)
                    return
                if fault == "crowd":
                    self._send(200, "application/atom+xml", _atom([_ENTRY] * 58_000))
                    return
                if fault == "huge":
                    entry = _ENTRY.replace(b"<summary>x", b"<summary>" + b"x" * 49_900_000)
                    self._send(200, "application/atom+xml", _atom([entry]))
                    return
                if fault == "nested":
                    self._send(200, "application/json", b"[" * 100_000 + b"]" * 100_000)
                    return
                self._send(*answer(parts.path, params))

            def _drip(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                for _ in range(1000):
                    if fake.release.is_set():
                        return
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def fail(self, *faults: str) -> None:
        with self._lock:
            self.faults.extend(faults)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_exc):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


_ENTRY = (b"<entry><id>http://arxiv.org/abs/2611.00001v1</id><title>t</title><summary>x</summary>"
          b"<published>2026-11-25T00:00:00Z</published></entry>")


def _atom(entries: list[bytes]) -> bytes:
    return (b'<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            + b"".join(entries) + b"</feed>")

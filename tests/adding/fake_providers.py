"""A fake of the providers `add` reads, on 127.0.0.1 (port 0), in their real formats.

    with FakeProviders() as fake:
        monkeypatch.setenv(...)  # or: for k, v in fake.env().items()
        fake.url("/pages/P18-1031/")   # a page with citation_* tags

Routes (what the real service would answer):
    /api/query?id_list=a,b     arXiv API Atom (an entry per known id; none: an empty feed)
    /works/{doi}               Crossref work JSON; unknown DOI: 404 "Resource not found."
    /notes?id=ID               OpenReview API v2 {"notes": [...], "count": n}
    /pages/P18-1031/           an ACL Anthology page with citation_* meta tags
    /pages/plain/              a page without them
    /pages/latin1/             a latin-1 page whose charset only its <meta> declares
    /pages/spoofed/            a page whose citation_title carries U+202E and 50 combining marks
    /pages/long-title/         a page whose citation_title is 1.5 million characters long
    /busy/...                  429 with Retry-After: 120 (for every provider path under it)
    /flaky/...                 429 with Retry-After: 0 the first time, then the path under it
    /slow/...                  never answers (until the fake stops)
    /redirect?to=URL           302 to URL
    /huge                      3 MB of HTML
`requests` lists the paths asked, so tests can check what was (not) fetched.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from tests.adding import recorded


class FakeProviders:
    def __init__(self, host: str = "127.0.0.1"):
        self.requests: list[str] = []
        self.stopping = threading.Event()
        self._flaky_seen: set[str] = set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # http.server's name
                fake.requests.append(self.path)
                fake.answer(self)

            def handle(self):
                try:
                    super().handle()
                except ConnectionError:  # a client that stops reading after the status: fine
                    pass

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # --- lifecycle and addresses ------------------------------------------------------------

    def __enter__(self) -> FakeProviders:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def arxiv_url(self) -> str:
        return self.base + "/api/query"

    def env(self, prefix: str = "") -> dict[str, str]:
        """PAPERCLUB_*_API_URL for every provider, under `prefix` (/busy, /slow, /flaky)."""
        return {
            "PAPERCLUB_ARXIV_API_URL": self.base + prefix + "/api/query",
            "PAPERCLUB_CROSSREF_API_URL": self.base + prefix,
            "PAPERCLUB_OPENREVIEW_API_URL": self.base + prefix,
        }

    # --- answers --------------------------------------------------------------------------------

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        path, query = unquote(parts.path), parse_qs(parts.query)
        if path.startswith("/busy/"):
            return _send(handler, 429, "Too Many Requests", "text/plain", {"Retry-After": "120"})
        if path.startswith("/flaky/"):
            if handler.path not in self._flaky_seen:
                self._flaky_seen.add(handler.path)
                return _send(handler, 429, "Too Many Requests", "text/plain", {"Retry-After": "0"})
            path = path[len("/flaky"):]
        if path.startswith("/slow/"):
            self.stopping.wait(30)
            return None
        if path == "/redirect":
            return _send(handler, 302, "", "text/plain", {"Location": query.get("to", ["/"])[0]})
        if path == "/huge":
            return _send(handler, 200, "<html>" + "x" * 3_000_000, "text/html")
        return self._provider(handler, path, query)

    def _provider(self, handler, path: str, query: dict) -> None:
        if path == "/api/query":
            ids = [i for i in query.get("id_list", [""])[0].split(",") if i]
            return _send(handler, 200, recorded.atom(ids), "application/atom+xml; charset=utf-8")
        if path.startswith("/works/"):
            doi = path[len("/works/"):].lower()
            if doi in recorded.CROSSREF:
                return _send(handler, 200, recorded.crossref_json(doi), "application/json")
            return _send(handler, 404, recorded.CROSSREF_MISSING, "text/plain")
        if path == "/notes":
            note = recorded.OPENREVIEW.get(query.get("id", [""])[0], {"notes": [], "count": 0})
            return _send(handler, 200, json.dumps(note), "application/json; charset=utf-8")
        if path == "/pages/P18-1031/":
            return _send(handler, 200, recorded.ACL_PAGE, "text/html; charset=utf-8")
        if path == "/pages/latin1/":
            return _send(handler, 200, recorded.LATIN1_PAGE, "text/html")
        if path == "/pages/spoofed/":
            return _send(handler, 200, recorded.SPOOFED_PAGE, "text/html; charset=utf-8")
        if path == "/pages/long-title/":
            return _send(handler, 200, recorded.LONG_TITLE_PAGE, "text/html; charset=utf-8")
        if path == "/pages/plain/":
            return _send(handler, 200, recorded.PLAIN_PAGE, "text/html; charset=utf-8")
        return _send(handler, 404, "Not Found", "text/plain")


def _send(handler: BaseHTTPRequestHandler, status: int, body: str | bytes, kind: str,
          headers: dict[str, str] | None = None) -> None:
    data = body if isinstance(body, bytes) else body.encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)

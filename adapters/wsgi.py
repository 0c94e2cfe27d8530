"""A few plain WSGI answers beside the Slack app on the same port: /healthz, the
channels' archive pages and calendar feeds (bot/memory/pages.py), and a server for them
in processes that run no Slack HTTP (a Discord worker with $PORT)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from bot.ops.defaults import DEFAULT_HOST

WSGIApp = Callable[[dict, Callable], Any]
HEALTH_PATH = "/healthz"
MAX_QUERY_FIELDS = 20  # the pages read one (the archive's search, q)

log = logging.getLogger(__name__)


def listening(address: str, port: int) -> str:
    """How a start-up error names where it tried to listen: PORT=3000 on every interface
    (the default), PAPERCLUB_HOST=127.0.0.1 PORT=3000 otherwise."""
    return f"PORT={port}" if address == DEFAULT_HOST else f"PAPERCLUB_HOST={address} PORT={port}"


def os_reason(problem: OSError) -> str:
    """Why a port or a server could not be reached, in a few words ("Address already in use")."""
    reason = getattr(problem, "reason", problem)  # URLError wraps the socket's error
    return getattr(reason, "strerror", None) or str(reason)


def route(default: WSGIApp, paths: Mapping[str, WSGIApp]) -> WSGIApp:
    """`paths[PATH_INFO]` where there is one, else the app of the path's prefix when a
    key ends with "/" (/archive/ answers /archive/TOKEN), else `default` (the Slack app)."""
    if not paths:
        return default
    prefixes = [(key, paths[key]) for key in sorted(paths, key=len, reverse=True) if key.endswith("/")]

    def app(environ: dict, start_response: Callable) -> Any:
        path = environ.get("PATH_INFO", "")
        chosen = paths.get(path) or next((a for prefix, a in prefixes if path.startswith(prefix)), default)
        return chosen(environ, start_response)

    return app


def pages_endpoint(answer: Callable[[str, dict[str, str]], Any]) -> WSGIApp:
    """GET and HEAD of the core's pages (`answer(path, query)` returns a Page with
    status, headers, body); a 404 is the same plain answer as every other one."""

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        method = environ.get("REQUEST_METHOD")
        if method not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Length", "0")])
            return [b""]
        query = _query(environ.get("QUERY_STRING", ""))
        if query is None:
            log.info("refused a request to %s: more than %d query fields (400)", _prefix(environ), MAX_QUERY_FIELDS)
            return bad_request(environ, start_response)
        page = answer(_path_text(environ.get("PATH_INFO", "")), query)
        if page.status == 404:
            return not_found(environ, start_response)
        start_response(f"{page.status} OK", page.headers)
        return [page.body] if method == "GET" else [b""]

    return app


def _query(raw: str) -> dict[str, str] | None:
    """The query's fields (the first of each name), or None past MAX_QUERY_FIELDS: no page
    takes more than one, and parse_qs would otherwise read any number."""
    try:
        return {k: v[0] for k, v in parse_qs(raw, max_num_fields=MAX_QUERY_FIELDS).items()}
    except ValueError:  # "Max number of fields exceeded"
        return None


def _prefix(environ: dict) -> str:
    """The path's first segment, for a log line: never the token after it."""
    return "/" + environ.get("PATH_INFO", "").lstrip("/").split("/", 1)[0] + "/..."


def _path_text(path: str) -> str:
    """PATH_INFO as text: WSGI hands it over as latin-1 decoded bytes."""
    try:
        return path.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return ""


def json_endpoint(report: Callable[[], tuple[bool, dict]]) -> WSGIApp:
    """GET: the report as JSON, 200 when healthy, 503 when not (what load balancers and
    uptime checks act on)."""

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Length", "0")])
            return [b""]
        healthy, data = report()
        body = json.dumps(data, indent=1).encode()
        start_response(
            "200 OK" if healthy else "503 Service Unavailable",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
             ("Cache-Control", "no-store")],
        )
        return [body] if environ["REQUEST_METHOD"] == "GET" else [b""]

    return app


def bad_request(_environ: dict, start_response: Callable) -> list[bytes]:
    start_response("400 Bad Request", [("Content-Type", "text/plain"), ("Content-Length", "11")])
    return [b"bad request"]


def not_found(_environ: dict, start_response: Callable) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
    return [b"not found"]


class HealthServer:
    """/healthz (and the `extra` paths: the archive pages, the calendar feeds) on `port`,
    for a process without Slack HTTP."""

    def __init__(self, port: int, endpoint: WSGIApp, extra: Mapping[str, WSGIApp] | None = None,
                 host: str = DEFAULT_HOST):
        import waitress

        self.server = waitress.create_server(
            route(not_found, {HEALTH_PATH: endpoint, **(extra or {})}), host=host, port=port, threads=2,
            ident="paperclub"
        )

    def start(self) -> None:
        self.thread = threading.Thread(target=self.server.run, name="health-http", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Close the sockets in waitress's loop thread (closing them from another thread
        races its select() on them) and let the loop end."""
        from waitress import wasyncore

        try:
            self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
        except OSError:  # the loop has closed everything already
            self.server.close()
        thread = getattr(self, "thread", None)
        if thread is not None:
            thread.join(timeout)

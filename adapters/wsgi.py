"""A few plain WSGI answers beside the Slack app on the same port: /healthz, and a
health-only server for processes that run no Slack HTTP (a Discord worker with $PORT)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

WSGIApp = Callable[[dict, Callable], Any]
HEALTH_PATH = "/healthz"


def route(default: WSGIApp, paths: Mapping[str, WSGIApp]) -> WSGIApp:
    """`paths[PATH_INFO]` where there is one, else `default` (the Slack app)."""
    if not paths:
        return default

    def app(environ: dict, start_response: Callable) -> Any:
        return paths.get(environ.get("PATH_INFO", ""), default)(environ, start_response)

    return app


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


def not_found(_environ: dict, start_response: Callable) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
    return [b"not found"]


class HealthServer:
    """/healthz alone on `port`, for a process without Slack HTTP."""

    def __init__(self, port: int, endpoint: WSGIApp):
        import waitress

        self.server = waitress.create_server(
            route(not_found, {HEALTH_PATH: endpoint}), host="0.0.0.0", port=port, threads=2, ident="paperclub"
        )

    def start(self) -> None:
        threading.Thread(target=self.server.run, name="health-http", daemon=True).start()

    def stop(self) -> None:
        self.server.close()

"""A fake of Slack's Socket Mode server on 127.0.0.1, port 0, speaking its websocket frames.

As Slack's "Using Socket Mode" page shows them: a client that opens the URL
apps.connections.open gave it gets `{"type": "hello", "num_connections": N, ...}` (N: the
app's open connections, this one included); envelopes `{"envelope_id", "type":
"slash_commands" | "interactive" | "events_api", "payload", "accepts_response_payload",
"retry_attempt", "retry_reason"}` go to one of the open connections (Slack spreads them),
and the app acknowledges each with `{"envelope_id", "payload"?}`. `disconnect(reason)`
sends `{"type": "disconnect", "reason": ...}`, as Slack does before it refreshes a
connection; `drop()` closes every connection (going away, 1001).

Point FakeSlack(socket_url=fake.url) at it: apps.connections.open then answers this URL.
The server runs on its own event loop in a thread (aiohttp, which discord.py brings).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from typing import Any

from aiohttp import WSMsgType, web


class FakeSocketMode:
    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._connections: list[web.WebSocketResponse] = []
        self._acks: dict[str, dict] = {}
        self._opened = 0
        self._next = itertools.count(1)
        self._turn = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/link/?ticket=fake-ticket&app_id=A0PAPERCLUB"

    def __enter__(self) -> FakeSocketMode:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name="fake-socket-mode",
                                        daemon=True)
        self._thread.start()
        if not self._started.wait(10.0) or not self.port:
            raise RuntimeError("the fake Socket Mode server did not start")
        return self

    def __exit__(self, *_exc) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(10.0)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        app = web.Application()
        app.router.add_get("/link/", self._link)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = runner.addresses[0][1]
        self._started.set()
        try:
            await self._stopping.wait()
        finally:
            for ws in list(self._connections):
                await ws.close(code=1001)
            await runner.cleanup()

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()  # answers pings with pongs, as Slack's server does
        await ws.prepare(request)
        with self._lock:
            self._connections.append(ws)
            self._opened += 1
            count = len(self._connections)
            self._lock.notify_all()
        await ws.send_str(json.dumps({
            "type": "hello", "num_connections": count,
            "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
            "connection_info": {"app_id": "A0PAPERCLUB"},
        }))
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    ack = json.loads(message.data)
                    with self._lock:
                        self._acks[ack.get("envelope_id", "")] = ack
                        self._lock.notify_all()
        finally:
            with self._lock:
                self._connections.remove(ws)
                self._lock.notify_all()
        return ws

    # --- what a test does and sees -----------------------------------------------------------

    @property
    def opened(self) -> int:
        """Connections opened so far (a reconnection opens one more)."""
        with self._lock:
            return self._opened

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    def wait_until(self, condition, timeout: float = 30.0) -> bool:
        """Whether `condition` held within `timeout`; it may read the client's side too, so it
        is asked again at each change here and every 50 ms."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not condition():
                if time.monotonic() > deadline:
                    return False
                self._lock.wait(0.05)
            return True

    def send(self, kind: str, payload: dict[str, Any]) -> str:
        """An envelope of `kind` to one open connection (in turn, as Slack spreads them);
        its envelope id, for `ack`."""
        envelope_id = f"env-{next(self._next)}"
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": kind != "events_api", "retry_attempt": 0, "retry_reason": ""}
        with self._lock:
            if not self._lock.wait_for(lambda: self._connections, 30.0):
                raise AssertionError("no Socket Mode connection is open")
            ws = self._connections[next(self._turn) % len(self._connections)]
        self._run(ws.send_str(json.dumps(envelope)))
        return envelope_id

    def ack(self, envelope_id: str, timeout: float = 30.0) -> dict | None:
        """The app's acknowledgement of an envelope, once it came (None if it never did)."""
        with self._lock:
            self._lock.wait_for(lambda: envelope_id in self._acks, timeout)
            return self._acks.get(envelope_id)

    def disconnect(self, reason: str = "refresh_requested") -> None:
        """What Slack sends before it closes a connection: the app opens a new one."""
        with self._lock:
            connections = list(self._connections)
        for ws in connections:
            self._run(ws.send_str(json.dumps({"type": "disconnect", "reason": reason,
                                              "debug_info": {"host": "applink-fake"}})))

    def drop(self) -> None:
        """Close every connection (1001, going away), as a restarting Slack server does."""
        with self._lock:
            connections = list(self._connections)
        for ws in connections:
            self._run(ws.close(code=1001))

    def _run(self, coroutine) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10.0)

"""Deadlines that hold against a server that drips: a watchdog that shuts connections down.

Both fetchers use it: the one a member waits on in chat (bot.adding.web) and the one the
scheduled provider work uses (bot.corpus.fetch), which also cuts everything in flight
when the process stops.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from typing import Any


class Cutoffs:
    """Shuts connections down at their deadlines, from one watchdog thread.

    A socket timeout bounds one read; a server that sends a byte every 0.2 s passes
    every such check while holding the reader for as long as it likes. Shutting the
    socket down wakes a read blocked in any thread at once. `cut_all` ends every
    request in flight (the process is stopping), and every one that connects after it:
    a fetch that was connecting while the process stopped would otherwise hold the exit
    until its deadline. The thread runs only while there are requests to watch."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._watched: dict[int, tuple[float, http.client.HTTPConnection]] = {}
        self._thread: threading.Thread | None = None
        self._stopped = False

    def watch(self, connection: http.client.HTTPConnection, deadline: float) -> None:
        with self._changed:
            self._watched[id(connection)] = (deadline, connection)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="add-cutoffs", daemon=True)
                self._thread.start()
            self._changed.notify()

    def connected(self, connection: http.client.HTTPConnection) -> None:
        """A watched connection has its socket now: cut it at once when `cut_all` came
        while it was connecting (it had no socket to shut down then)."""
        with self._changed:
            stopped = self._stopped
        if stopped:
            _cut(connection)

    def forget(self, connection: http.client.HTTPConnection) -> None:
        with self._changed:
            self._watched.pop(id(connection), None)
            self._changed.notify()  # the watchdog ends once nothing is left to watch

    @property
    def stopped(self) -> bool:
        """Whether `cut_all` came: everything since is cut."""
        with self._changed:
            return self._stopped

    def cut_all(self) -> None:
        with self._changed:
            self._stopped = True
            watched = [connection for _, connection in self._watched.values()]
        for connection in watched:
            _cut(connection)

    def _run(self) -> None:
        while True:
            with self._changed:
                if not self._watched:  # nothing in flight: the thread ends (`watch` starts another)
                    self._thread = None
                    return
                now = time.monotonic()
                due = [key for key, (deadline, _) in self._watched.items() if deadline <= now]
                expired = [self._watched.pop(key)[1] for key in due]
                nearest = min((deadline for deadline, _ in self._watched.values()), default=now)
                if not expired:
                    self._changed.wait(nearest - now)
            for connection in expired:
                _cut(connection)


def _cut(connection: http.client.HTTPConnection) -> None:
    # urllib drops `sock` once the headers are in, while the answer still reads from it:
    # a connection made for urllib (bot.corpus.fetch) keeps it as `held_sock`.
    sock = getattr(connection, "held_sock", None) or connection.sock
    if sock is None:
        return
    try:
        # socket.socket's own shutdown, also under TLS: SSLSocket.shutdown would drop its
        # SSL object under the reading thread's feet.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # closed already


# --- urllib, cut at a deadline ------------------------------------------------------------


class Late(TimeoutError):
    """An answer that did not come in full before its deadline (or was cut as the process
    stopped)."""


@dataclass(frozen=True)
class Answered:
    status: int
    headers: Message
    body: bytes


def read_until(request: urllib.request.Request, end: float, cutoffs: Cutoffs, timeout: float, max_bytes: int,
               *handlers: urllib.request.BaseHandler) -> Answered:
    """urllib's answer to `request`, all of it read by `end` (time.monotonic()): each socket
    operation waits at most `timeout` or the time left, and the watchdog cuts the
    connection at `end`, however the server drips. Late when it could not finish; an
    answer longer than `max_bytes` is ValueError; urllib's own errors (HTTPError for a
    refusal, URLError, OSError) pass through."""
    left = end - time.monotonic()
    if left <= 0:
        raise Late("no time was left to ask")
    watch = _Watch(cutoffs, end)
    opener = urllib.request.build_opener(*handlers, _WatchedHTTPHandler(watch), _WatchedHTTPSHandler(watch))
    try:
        with opener.open(request, timeout=min(timeout, left)) as response:
            body: bytes = response.read(max_bytes + 1)
            answered = Answered(response.status, response.headers, body)
    except (OSError, http.client.HTTPException) as problem:
        if isinstance(problem, urllib.error.HTTPError) or not watch.cut():
            raise
        raise Late(f"the answer did not come in the {end - watch.started:.0f} s it had") from None
    finally:
        watch.done()
    if watch.cut():  # a cut answer without a length reads as a short one
        raise Late(f"the answer did not come in the {end - watch.started:.0f} s it had")
    if len(body) > max_bytes:
        raise ValueError(f"the answer is larger than {max_bytes:,} bytes")
    return answered


class _Watch:
    """The connections one request made (a redirect makes another), each watched until `end`."""

    def __init__(self, cutoffs: Cutoffs, end: float):
        self.cutoffs = cutoffs
        self.end = end
        self.started = time.monotonic()
        self.connections: list[http.client.HTTPConnection] = []

    def connecting(self, connection: http.client.HTTPConnection) -> None:
        self.connections.append(connection)
        self.cutoffs.watch(connection, self.end)

    def cut(self) -> bool:
        """Whether the watchdog may have cut this request: its end came, or everything was cut."""
        return time.monotonic() >= self.end or self.cutoffs.stopped

    def done(self) -> None:
        for connection in self.connections:
            self.cutoffs.forget(connection)


class _Held:
    """A connection that tells its watch before connecting and keeps its socket as
    `held_sock` (urllib drops `sock` once the headers are in)."""

    watch: _Watch
    held_sock: socket.socket | None = None

    def connect(self) -> None:
        connection: Any = self
        self.watch.connecting(connection)
        super().connect()  # type: ignore[misc]  # the connection class this is mixed into
        self.held_sock = connection.sock
        self.watch.cutoffs.connected(connection)


class _HeldHTTP(_Held, http.client.HTTPConnection):
    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.watch = watch


class _HeldHTTPS(_Held, http.client.HTTPSConnection):
    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.watch = watch


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch):
        super().__init__()
        self.watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HeldHTTP, watch=self.watch), req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watch):
        super().__init__()
        self.watch = watch

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HeldHTTPS, watch=self.watch), req,
                            context=ssl.create_default_context())

"""Pages that hold a reader on 127.0.0.1 (port 0): the slow links of issue 28.

    with SlowPages() as slow:
        slow.url("drip-headers", 1)   # headers a byte every 0.2 s
        slow.url("drip-body", 2)      # headers at once, then the body a byte every 0.2 s
        slow.url("silent", 3)         # accepts, reads the request, never answers

Each connection ends on its own after `DRIP_BYTES` bytes (or as long, silent), so a
reader with no deadline is slow but not stuck forever. `accepted` counts connections
and `most_at_once` the most open at one time; `wait_for_connections` lets a test act
once readers are inside (no sleeps racing).
"""

from __future__ import annotations

import socket
import threading

DRIP_SECONDS = 0.2
DRIP_BYTES = 75  # 15 s of dripping: far past any budget, short enough not to hang a run


class SlowPages:
    def __init__(self):
        self.stopping = threading.Event()
        self.accepted = 0
        self.open = 0
        self.most_at_once = 0
        self._changed = threading.Condition()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> SlowPages:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stopping.set()
        self._listener.close()

    def url(self, kind: str, n: int = 0) -> str:
        return f"{self.base}/{kind}/{n}"

    def wait_for_connections(self, count: int, timeout: float = 10.0) -> int:
        with self._changed:
            self._changed.wait_for(lambda: self.accepted >= count, timeout)
            return self.accepted

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with self._changed:
            self.accepted += 1
            self.open += 1
            self.most_at_once = max(self.most_at_once, self.open)
            self._changed.notify_all()
        try:
            with connection:
                request = connection.recv(4096).decode("latin-1")
                kind = request.split(" ")[1].split("/")[1] if request.count(" ") >= 2 else ""
                self._answer(connection, kind)
        except OSError:
            pass  # the reader gave up: what it should do
        finally:
            with self._changed:
                self.open -= 1

    def _answer(self, connection: socket.socket, kind: str) -> None:
        if kind == "drip-headers":
            self._drip(connection, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * DRIP_BYTES)
        elif kind == "drip-body":
            head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {DRIP_BYTES}\r\n\r\n"
            connection.sendall(head.encode())
            self._drip(connection, b"x" * DRIP_BYTES)
        else:  # silent, until the reader hangs up (so `open` counts readers still waiting)
            connection.settimeout(DRIP_SECONDS)
            for _ in range(DRIP_BYTES):
                try:
                    if not connection.recv(1) or self.stopping.is_set():
                        return
                except TimeoutError:
                    continue

    def _drip(self, connection: socket.socket, data: bytes) -> None:
        for n in range(len(data)):
            if self.stopping.wait(DRIP_SECONDS):
                return
            connection.sendall(data[n:n + 1])

"""HTTP for a member waiting in chat: the feed fetcher's manners on a short leash.

Like bot.corpus.fetch (User-Agent, per-host spacing, backoff on 429/503 honouring
Retry-After), but with a few seconds for everything, one retry at most, a Retry-After
longer than a couple of seconds taken as "busy, try again in a minute", and answers
capped in size. A link a member pasted is fetched with `vet=True`: every address its
host resolves to must pass the address policy, the connection goes to that vetted
address (HTTPS still checks the certificate of the host named), and every redirect is
vetted again. The providers' own base URLs are the operator's choice and not vetted.
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import os
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from bot.adding.addresses import AddressPolicy, public_only
from bot.corpus.fetch import HostLimiter, retry_after_seconds, user_agent
from bot.ops.settings import AddSettings

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
CHUNK = 65536


@dataclass(frozen=True)
class ChatFetchPolicy:
    timeout: float = 5.0  # seconds in all for one request: lookups, connects, reads, a retry
    max_bytes: int = 2_000_000  # per answer: a paper's metadata is a few kilobytes
    max_retry_after: float = 2.0  # longer: "busy, try again in a minute" rather than a wait
    attempts: int = 2  # the first and one retry
    max_redirects: int = 4
    spacing: float = 1.0  # seconds between two requests to one host

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> ChatFetchPolicy:
        """PAPERCLUB_ADD_TIMEOUT (seconds, default 5): how long a member waits at most;
        ConfigError naming it when it is not a number from above 0 to 60."""
        return cls(timeout=AddSettings.from_env(env).add_timeout)


class FetchFailed(Exception):
    """Why an answer did not come: `kind` is unreachable | busy | refused | not_found |
    too_large; str() is for the log (it may name addresses), never for members."""

    def __init__(self, kind: str, detail: str, status: int | None = None):
        super().__init__(detail)
        self.kind = kind
        self.status = status


@dataclass
class Answer:
    url: str  # after redirects
    status: int
    body: bytes
    content_type: str

    def text(self) -> str:
        charset = "utf-8"
        if "charset=" in self.content_type:
            charset = self.content_type.split("charset=", 1)[1].split(";")[0].strip() or charset
        try:
            return self.body.decode(charset, "replace")
        except LookupError:
            return self.body.decode("utf-8", "replace")


class ChatFetcher:
    def __init__(
        self,
        policy: ChatFetchPolicy | None = None,
        addresses: AddressPolicy = public_only,
        limiter: HostLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        resolve: Callable[[str, int], list[str]] | None = None,
    ):
        self.policy = policy or ChatFetchPolicy()
        self.addresses = addresses
        self.limiter = limiter or HostLimiter(self.policy.spacing)
        self.sleep = sleep
        self.resolve = resolve or _resolve
        self.agent = user_agent().replace("scheduled corpus feeds", "papers added in chat")

    def get(self, url: str, vet: bool = False, accept: str = "*/*") -> Answer:
        """A 2xx answer, or FetchFailed."""
        deadline = time.monotonic() + self.policy.timeout
        for attempt in range(1, self.policy.attempts + 1):
            self.limiter.wait(urlsplit(url).hostname or "")
            answer = self._follow(url, vet, accept, deadline)
            if 200 <= answer.status < 300:
                return answer
            if answer.status in (404, 410):
                raise FetchFailed("not_found", f"{url}: HTTP {answer.status}", answer.status)
            if answer.status not in RETRY_STATUSES:
                raise FetchFailed("unreachable", f"{url}: HTTP {answer.status}", answer.status)
            wait = retry_after_seconds(answer.headers) if answer.headers is not None else None
            left = deadline - time.monotonic()
            if (wait or 0) > min(self.policy.max_retry_after, left) or attempt == self.policy.attempts:
                raise FetchFailed("busy", f"{url}: HTTP {answer.status}, Retry-After {wait}", answer.status)
            self.sleep(wait if wait is not None else min(0.5, left / 2))
        raise AssertionError("unreachable: the loop returns or raises")

    def _follow(self, url: str, vet: bool, accept: str, deadline: float) -> _Raw:
        for _hop in range(self.policy.max_redirects + 1):
            raw = self._once(url, vet, accept, deadline)
            if raw.status not in REDIRECTS or not raw.location:
                return raw
            url = urljoin(url, raw.location)  # vetted again on the next hop
        raise FetchFailed("unreachable", f"{url}: more than {self.policy.max_redirects} redirects")

    def _once(self, url: str, vet: bool, accept: str, deadline: float) -> _Raw:
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
        if scheme not in ("http", "https") or not host:
            raise FetchFailed("refused", f"{url}: only http and https links are fetched")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise FetchFailed("refused", f"{url}: not a valid port") from None
        address = self._vetted(host, port) if vet else None
        connection = _connection(scheme, host, port, address, _left(deadline, url))
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request("GET", path, headers={
                "User-Agent": self.agent, "Accept": accept, "Accept-Encoding": "identity",
            })
            response = connection.getresponse()
            if response.status in REDIRECTS:
                return _Raw(url, response.status, b"", "", response.headers, response.getheader("Location"))
            body = self._read(response, connection, deadline, url) if response.status < 300 else b""
            return _Raw(url, response.status, body, response.getheader("Content-Type", ""), response.headers)
        except (OSError, http.client.HTTPException) as problem:
            raise FetchFailed("unreachable", f"{url}: {type(problem).__name__} {problem}") from None
        finally:
            connection.close()

    def _vetted(self, host: str, port: int) -> str:
        """The address to connect to: the host's first, when all of them pass."""
        try:
            found = self.resolve(host, port)
        except OSError as problem:
            raise FetchFailed("unreachable", f"{host}: lookup failed ({problem})") from None
        addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in found]
        refused = [a for a in addresses if not self.addresses(a)]
        if not addresses or refused:
            raise FetchFailed("refused", f"{host} resolves to {', '.join(map(str, refused)) or 'nothing'}")
        return str(addresses[0])

    def _read(self, response: http.client.HTTPResponse, connection: http.client.HTTPConnection,
              deadline: float, url: str) -> bytes:
        """The body, in chunks, each read given only the time left: a server that
        trickles bytes cannot hold a member past the deadline."""
        chunks, size = [], 0
        while True:
            left = _left(deadline, url)
            if connection.sock is not None:  # None once a closing answer took the socket over
                connection.sock.settimeout(left)
            chunk = response.read(CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > self.policy.max_bytes:
                raise FetchFailed("too_large", f"{url}: larger than {self.policy.max_bytes:,} bytes")
            chunks.append(chunk)


@dataclass
class _Raw(Answer):
    headers: object = None
    location: str | None = None


def _left(deadline: float, url: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchFailed("unreachable", f"{url}: out of time")
    return left


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def _connection(scheme: str, host: str, port: int, address: str | None, timeout: float):
    if scheme == "https":
        return _HTTPS(host, port, address=address, timeout=timeout, context=ssl.create_default_context())
    return _HTTP(host, port, address=address, timeout=timeout)


class _HTTP(http.client.HTTPConnection):
    """Connects to `address` when given (the vetted one), else to the host by name; the
    Host header names the host either way."""

    def __init__(self, host: str, port: int, address: str | None, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address or self.host, self.port), self.timeout)


class _HTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str | None, timeout: float, context: ssl.SSLContext):
        super().__init__(host, port, timeout=timeout, context=context)
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address or self.host, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # SNI and cert: the host

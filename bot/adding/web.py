"""HTTP for a member waiting in chat: the feed fetcher's manners on a short leash.

Like bot.corpus.fetch (User-Agent, per-host spacing, backoff on 429/503 honouring
Retry-After), but with a few seconds for everything, one retry at most, a Retry-After
longer than a couple of seconds taken as "busy, try again in a minute", and answers
capped in size. "A few seconds for everything" is one deadline over the lookup, the
connect, the headers and the body: every socket operation has a timeout of the time
left, and a watchdog (`Cutoffs`) shuts a connection down at its deadline, since a page
that drips a byte at a time keeps each single read short. Pages are decoded by the HTTP
charset, then the one their HTML declares, then UTF-8 (w3lib, as Scrapy does).

A link a member pasted is fetched with `vet=True`: every address its host resolves to
must pass the address policy, the connection goes to that vetted address (HTTPS still
checks the certificate of the host named), and every redirect is vetted again. The
providers' own base URLs are the operator's choice and not vetted.
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import os
import re
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import idna
from w3lib.encoding import html_to_unicode

from bot.adding.addresses import AddressPolicy, public_only
from bot.adding.settings import AddSettings
from bot.corpus.cutoffs import Cutoffs
from bot.corpus.fetch import HostLimiter, retry_after_seconds, user_agent

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
    """Why an answer did not come: `kind` is unreachable | timed_out | busy | refused |
    unreadable | not_found | too_large; str() is for the log (it may name addresses),
    never for members."""

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
        """The HTTP header's charset, else the one the page declares (<meta charset>,
        http-equiv, an XML declaration), else UTF-8; undecodable bytes replaced."""
        return html_to_unicode(self.content_type or None, self.body)[1]


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
        self.cutoffs = Cutoffs()

    def get(self, url: str, vet: bool = False, accept: str = "*/*", deadline: float | None = None) -> Answer:
        """A 2xx answer, or FetchFailed; `deadline` (time.monotonic()) is the line's,
        when the request is one of several sharing it."""
        own = time.monotonic() + self.policy.timeout
        deadline = own if deadline is None else min(deadline, own)
        for attempt in range(1, self.policy.attempts + 1):
            if self.limiter.wait(urlsplit(url).hostname or "", until=deadline) is None:
                raise FetchFailed("timed_out", f"{url}: no turn at its host before the deadline")
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
        port, host = readable_port(url), readable_host(host)
        address = self._vetted(host, port) if vet else None
        connection = _connection(scheme, host, port, address, _left(deadline, url))
        self.cutoffs.watch(connection, deadline)
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request("GET", path, headers={
                "User-Agent": self.agent, "Accept": accept, "Accept-Encoding": "identity",
            })
            self.cutoffs.connected(connection)
            # A connect that ended with the deadline left no socket for the watchdog to cut.
            connection.sock.settimeout(_left(deadline, url))
            response = connection.getresponse()
            if response.status in REDIRECTS:
                return _Raw(url, response.status, b"", "", response.headers, response.getheader("Location"))
            body = self._read(response, connection, deadline, url) if response.status < 300 else b""
            return _Raw(url, response.status, body, response.getheader("Content-Type", ""), response.headers)
        except (OSError, http.client.HTTPException, UnicodeError) as problem:
            # Past the deadline, whatever broke was the watchdog cutting the connection.
            late = isinstance(problem, TimeoutError) or time.monotonic() >= deadline
            raise FetchFailed("timed_out" if late else "unreachable",
                              f"{url}: {type(problem).__name__} {problem}") from None
        finally:
            self.cutoffs.forget(connection)
            connection.close()

    def _vetted(self, host: str, port: int) -> str:
        """The address to connect to: the host's first, when all of them pass."""
        try:
            found = self.resolve(host, port)
        except UnicodeError:  # the codec's check, should a name pass readable_host's
            raise FetchFailed("unreadable", f"{host}: not a host name") from None
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
        chunks: list[bytes] = []
        size = 0
        while True:
            left = _left(deadline, url)
            if connection.sock is not None:  # None once a closing answer took the socket over
                connection.sock.settimeout(left)
            chunk = response.read(CHUNK)
            if not chunk:
                _left(deadline, url)  # an end that came with the deadline: the watchdog's cut
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
        raise FetchFailed("timed_out", f"{url}: out of time")
    return left


def link_problem(url: str) -> str | None:
    """Why a link cannot be fetched as written (a host name IDNA refuses, a label over 63
    characters, a port that is no port), or None: said before any lookup, for that
    link alone."""
    try:
        parts = urlsplit(url)
        readable_port(url)
        readable_host(parts.hostname or "")
    except FetchFailed as problem:
        return str(problem)
    except ValueError as problem:  # urlsplit's own refusals (a bad IPv6 literal)
        return f"{url}: {problem}"
    return None


def readable_port(url: str) -> int:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # :abc, :99999
        port = 0
    if port == 0:
        raise FetchFailed("unreadable", f"{url}: not a valid port")
    return port or (443 if parts.scheme.lower() == "https" else 80)


_ASCII_LABEL = re.compile(r"[A-Za-z0-9_-]{1,63}")


def readable_host(host: str) -> str:
    """The host in the ASCII form DNS, SNI and the Host header take. It must be an IP
    address, or a name of at most 253 characters whose labels are 1-63 characters each:
    ASCII ones letters, digits, `-` and `_` (which DNS allows), the others what IDNA
    2008 (UTS 46 mapping, as browsers) encodes, `xn--` ones valid Punycode."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return host
    except ValueError:
        pass
    encoded = ".".join(_label(label, host) for label in host.removesuffix(".").split("."))
    if len(encoded) > 253:
        raise FetchFailed("unreadable", f"{host[:80]}...: a host name longer than 253 characters")
    return encoded


def _label(label: str, host: str) -> str:
    try:
        if label.isascii() and not label.lower().startswith("xn--"):
            if not _ASCII_LABEL.fullmatch(label):
                raise idna.IDNAError(f"label {label[:70]!r} is empty, too long or has characters a name cannot")
            return label
        encoded = idna.encode(label, uts46=True).decode("ascii")
        idna.decode(encoded)  # an xn-- label that is not valid Punycode fails here
    except (idna.IDNAError, UnicodeError) as problem:
        raise FetchFailed("unreadable", f"{host[:80]}: not a host name ({problem})") from None
    if len(encoded) > 63:
        raise FetchFailed("unreadable", f"{host[:80]}: a label longer than 63 characters")
    return encoded


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    hosts = (info[4][0] for info in infos)  # (host, port, ...); an int only in other families
    return list(dict.fromkeys(h for h in hosts if isinstance(h, str)))


def _connection(scheme: str, host: str, port: int, address: str | None,
                timeout: float) -> http.client.HTTPConnection:
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
        self.tls = context  # (HTTPSConnection keeps it as _context, which it does not declare)

    def connect(self) -> None:
        sock = socket.create_connection((self.address or self.host, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)  # SNI and cert: the host

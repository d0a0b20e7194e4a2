"""The wire under :class:`arena.transport.BotTransport`: :class:`BotConnection`, one kept-alive
HTTP/1.1 connection to a push bot's endpoint, on a plain socket.

A request is written in one piece: its head is made once per endpoint but for the signature and
the length, which the caller adds. The answer is read by :class:`arena.http_answer.Answer`: its
head at once, its body by the caller, in pieces.

A connection is new when there is none yet, when the last answer said it would close it, or when
the bot closed it (or sent something unasked) since the last answer: then it is not used again,
as a connection pool would not. A new connection resolves the host once, refuses unless every
address is public (``arena.addresses``; before any packet is sent) and connects only to an
address it checked (:func:`connect_public`): a name re-resolving to a private address (DNS
rebinding) never gets a connection. Over ``https`` it then shakes hands over TLS, verifying the
certificate against the URL's host name, although the socket is connected to an address. Each
socket is handed to the caller's watchdog as soon as it exists, so the deadline covers the
connection and the handshake too.

What happens is noted in the request's :class:`~arena.exchange.Exchange`: new or kept alive, how
long a new connection took to connect and to shake hands, the request's bytes and the instant
they went out, and each read from the socket (its bytes, and the instant of the last one that
brought any).
"""

from __future__ import annotations

import functools
import select
import socket
import ssl
from collections.abc import Iterable
from typing import Protocol
from urllib.parse import quote, urlsplit

import certifi

from arena.addresses import PrivateAddressError, ensure_public
from arena.exchange import Exchange, now_ns
from arena.http_answer import Answer, HttpAnswerError, Receive
from replays.log import Connection

CONNECT_TIMEOUT_S = 3.0
"""At most this long to open a connection, within the call's deadline."""
USER_AGENT = "gongzhu-arena"
_NODELAY = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
"""Each request is one write, and its answer is awaited: no reason to hold it back."""
_RECEIVE = 16 * 1024
"""The most bytes one read from the socket takes."""
_URL_SAFE = "!#$%&'()*+,/:;=?@[]~"
"""Characters a request target keeps as they are; others are percent-encoded."""

SocketOption = tuple[int, int, int | bytes]


class TransportError(Exception):
    """The request could not be sent, or its answer not read (the deadline and the size cap
    aside): a name that does not resolve, a private address, a refused or reset connection, a
    certificate that does not verify, a broken answer. The message says which; the error
    underneath is its ``__cause__``."""


class Watchdog(Protocol):
    """Whoever shuts a connection's socket down at the call's deadline."""

    def attach(self, sock: socket.socket | None) -> None: ...


@functools.cache
def default_tls() -> ssl.SSLContext:
    """Certificates verified against certifi's authorities (as ``requests`` verifies them),
    host names checked: one context for the process."""
    return ssl.create_default_context(cafile=certifi.where())


def connect_public(
    host: str,
    port: int,
    timeout: float | None,
    socket_options: Iterable[SocketOption] = (),
    *,
    allow_private: bool = False,
) -> socket.socket:
    """A TCP connection to ``host``: resolved once, refused (:class:`PrivateAddressError`, before
    any packet is sent) unless every address is public or ``allow_private``, then made to an
    address it checked, trying each in turn; the last failure if none connects."""
    host = host.strip("[]")
    infos = socket.getaddrinfo(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM)
    if not allow_private:
        ensure_public(host, [str(info[4][0]) for info in infos])
    error: OSError = OSError(f"{host} has no address")
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            for option in socket_options:
                sock.setsockopt(*option)
            sock.settimeout(timeout)
            sock.connect(address)
        except OSError as failed:
            sock.close()
            error = failed
            continue
        return sock
    raise error


class BotConnection:
    """One endpoint's kept-alive connection (see the module's doc)."""

    def __init__(
        self, endpoint: str, *, allow_private: bool, tls: ssl.SSLContext | None = None
    ) -> None:
        parts = urlsplit(endpoint)
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        """Resolved, and checked against the certificate: never the address connected to."""
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self._allow_private = allow_private
        self._tls = tls
        self.head = _head(parts.path, parts.query, _host_header(self.host, self.port, self.scheme))
        """The request's line and headers up to the signature's."""
        self._sock: socket.socket | None = None
        self._poll = select.poll()

    def request(
        self, message: bytes, exchange: Exchange, timeout: float, watchdog: Watchdog
    ) -> Answer:
        """Send ``message`` (a whole request) and read its answer's head, within ``timeout`` for
        each operation on the socket; raises :class:`TransportError`."""
        sock = self._sock
        if sock is not None and self._poll.poll(0):  # closed by the bot since, or babbling
            self.close()
            sock = None
        if sock is None:
            exchange.connection = Connection.NEW
            sock = self._open(exchange, min(CONNECT_TIMEOUT_S, timeout), watchdog)
        else:
            exchange.connection = Connection.REUSED
            watchdog.attach(sock)
        try:
            sock.settimeout(timeout)
            sock.sendall(message)
        except OSError as error:
            raise TransportError(f"the request could not be sent: {error}") from error
        exchange.bytes_sent = (exchange.bytes_sent or 0) + len(message)
        exchange.sent_ns = now_ns()
        try:
            return Answer(_receiver(sock, exchange))
        except (OSError, HttpAnswerError) as error:
            raise TransportError(f"the answer could not be read: {error}") from error

    def close(self) -> None:
        """Close the connection, if any: the next request opens a new one."""
        if self._sock is not None:
            self._poll.unregister(self._sock)
            self._sock.close()
            self._sock = None

    def _open(self, exchange: Exchange, timeout: float, watchdog: Watchdog) -> socket.socket:
        if self.scheme not in ("http", "https"):
            raise TransportError(f"the endpoint must be http:// or https://, not {self.scheme}://")
        start = now_ns()
        sock = self._connect(timeout)
        exchange.connect_ns = now_ns() - start
        watchdog.attach(sock)
        if self.scheme == "https":
            try:
                sock = (self._tls or default_tls()).wrap_socket(
                    sock, server_hostname=self.host, do_handshake_on_connect=False
                )
                watchdog.attach(sock)
                sock.do_handshake()
            except OSError as error:
                sock.close()
                raise TransportError(f"the TLS handshake failed: {error}") from error
            exchange.tls_ns = now_ns() - start - exchange.connect_ns
        self._sock = sock
        self._poll.register(sock, select.POLLIN)
        return sock

    def _connect(self, timeout: float) -> socket.socket:
        host, allow_private = self.host, self._allow_private
        try:
            return connect_public(host, self.port, timeout, _NODELAY, allow_private=allow_private)
        except PrivateAddressError as error:
            raise TransportError(str(error)) from error
        except (socket.gaierror, UnicodeError) as error:
            raise TransportError(f"Failed to resolve '{host}' ({error})") from error
        except TimeoutError as error:
            raise TransportError(f"no connection within {CONNECT_TIMEOUT_S:g} s") from error
        except OSError as error:
            raise TransportError(f"Failed to establish a new connection: {error}") from error


def _host_header(host: str, port: int, scheme: str) -> str:
    try:
        name = host.encode("idna").decode("ascii")
    except UnicodeError:  # not a name that resolves: the connection says so
        name = host
    shown = f"[{name}]" if ":" in name else name
    return shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}"


def _head(path: str, query: str, host: str) -> str:
    target = quote(path or "/", safe=_URL_SAFE)
    if query:
        target += "?" + quote(query, safe=_URL_SAFE)
    return (
        f"POST {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {USER_AGENT}\r\n"
        "Accept-Encoding: identity\r\nAccept: */*\r\nConnection: keep-alive\r\n"
        "Content-Type: application/json\r\n"
    )


def _receiver(sock: socket.socket, exchange: Exchange) -> Receive:
    """What an answer reads from ``sock``: each read counted, the instant of the last one that
    brought bytes noted (the answer's last byte, once it is whole)."""

    def receive() -> bytes:
        data = sock.recv(_RECEIVE)
        if data:
            exchange.bytes_received = (exchange.bytes_received or 0) + len(data)
            exchange.received_ns = now_ns()
        return data

    return receive

"""The arena's one way of calling a bot over HTTP: :class:`BotTransport`, and the ``hello`` on it.

Every call is one signed POST under a **total** wall-clock deadline. ``requests``' own timeout
bounds each socket operation, not the whole answer, so a bot dripping one byte at a time would
outlast it; here a watchdog (an alarm of :mod:`arena.alarms`) shuts the connection's socket
down at the deadline, and the body is read in small chunks with the deadline checked between
them. Answers are capped at
:data:`MAX_ANSWER_BYTES`, redirects are not followed, proxies and ``.netrc`` from the environment
are ignored, and one ``requests.Session`` keeps its connection alive. A request on a kept-alive
connection that fails before any answer arrives (the bot closed the connection between two
requests: a stale connection) is sent once more, on a new connection, within what is left of
the same deadline (docs/PROTOCOL.md, "Transport"). Unless private endpoints are
allowed, every new connection resolves the host, refuses if any address is not public
(``arena.addresses``), and connects only to an address it checked: no TCP connection is ever
opened to a private address, whatever the name re-resolves to (DNS rebinding).

Each call is measured where it happens (:attr:`BotTransport.exchange`, an
:class:`~arena.exchange.Exchange`): the connection notes whether it is new or kept alive, how
long a new one took to connect and to shake hands over TLS, each chunk of the request it writes
(its size, and the instant the last one went out), and the reader under the answer counts each
read from the socket and notes the instant of the last one that brought bytes. That is a clock
reading per write and per read, which are a few per call.

Match seats (``arena.http_seat.HttpSeat``) and the endpoint check (:func:`handshake`, used by
the service) both go through this module, so the handshake is the same request, under the same
limits, with the same error messages, wherever it is sent.
"""

from __future__ import annotations

import http.client
import io
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family

from arena.addresses import PrivateAddressError, ensure_public
from arena.alarms import ALARMS, Alarm
from arena.exchange import Exchange, now_ns
from bot_sdk.protocol import (
    AnswerError,
    BotInfo,
    Message,
    encode,
    hello_request,
    parse_hello_answer,
)
from bot_sdk.signing import sign
from replays.log import Connection

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MAX_ANSWER_BYTES = 64 * 1024
"""A larger answer is refused: an answer is a few dozen bytes."""
NOTICE_TIMEOUT_S = 2.0
"""The whole time a ``hand_end`` or ``match_end`` notification may take."""
CONNECT_TIMEOUT_S = 3.0
"""At most this long to open a connection, within the call's deadline."""
_CHUNK = 1024
_EXCERPT = 300

Clock = Callable[[], float]


class DeadlineError(Exception):
    """The whole answer did not arrive in time."""


class TooLargeError(Exception):
    """The answer is larger than :data:`MAX_ANSWER_BYTES`."""


class UnreachableError(Exception):
    """No answer could come: the bot could not be reached (a pull bot not connected); the
    message says so."""


class HelloError(Exception):
    """The bot did not complete the ``hello``; the message says why, in words its author can
    act on."""


class _Watchdog:
    """Shuts the socket of the request in flight down when its deadline passes, whatever the
    bot is sending: the blocked read then ends at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._alarm: Alarm | None = None
        self.fired = False

    def arm(self, seconds: float) -> None:
        self.fired = False
        self._alarm = ALARMS.set(seconds, self._fire)

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            if self.fired and sock is not None:
                _shut(sock)

    def disarm(self) -> None:
        if self._alarm is not None:
            ALARMS.cancel(self._alarm)
        with self._lock:
            self._sock = None

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            if self._sock is not None:
                _shut(self._sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed: nothing left to stop
        return


def connect_public(
    host: str,
    port: int,
    timeout: float | None,
    source_address: tuple[str, int] | None = None,
    socket_options: Sequence[tuple[int, int, int | bytes]] | None = None,
) -> socket.socket:
    """A TCP connection to ``host``: resolved once, refused (:class:`PrivateAddressError`, before
    any packet is sent) unless every address is public, then made to a checked address."""
    host = host.strip("[]")
    infos = socket.getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM)
    ensure_public(host, [str(info[4][0]) for info in infos])
    error: OSError = OSError(f"{host} has no address")
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
            sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(address)
        except OSError as failed:
            sock.close()
            error = failed
            continue
        return sock
    raise error


class _Meter:
    """The transport's latest exchange, which its connections and answers fill in."""

    def __init__(self) -> None:
        self.exchange = Exchange()


class _CountingReader(io.RawIOBase):
    """The socket under an answer: each read counted, the instant of the last one that brought
    bytes noted (the answer's last byte, once it is whole)."""

    def __init__(self, raw: io.RawIOBase, exchange: Exchange) -> None:
        super().__init__()
        self._raw = raw
        self._exchange = exchange

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int | None:
        count = self._raw.readinto(buffer)
        if count:
            self._exchange.bytes_received = (self._exchange.bytes_received or 0) + count
            self._exchange.received_ns = now_ns()
        return count

    def close(self) -> None:
        self._raw.close()
        super().close()


def _counted(meter: _Meter) -> type[http.client.HTTPResponse]:
    """An answer class reading through a :class:`_CountingReader` into ``meter``'s exchange."""

    class Counted(http.client.HTTPResponse):
        def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp = io.BufferedReader(_CountingReader(self.fp.detach(), meter.exchange))

    return Counted


def _guarded(
    base: type[HTTPConnection], watchdog: _Watchdog, meter: _Meter, allow_private: bool
) -> type:
    """A connection class that connects only to public addresses (unless ``allow_private``),
    hands its socket to the transport's watchdog for each response and measures each request
    into ``meter``'s exchange: new or reused, connect and TLS time, bytes and instants."""
    tls = issubclass(base, HTTPSConnection)

    class Guarded(base):  # type: ignore[valid-type,misc]
        carried: socket.socket | None = None
        """The socket this connection's latest request went out on."""
        response_class = _counted(meter)

        def request(self, *args: Any, **kwargs: Any) -> None:
            # kept alive: the socket carried a request before (an HTTPS connection is made
            # before its first request, so being connected does not tell)
            reused = self.sock is not None and self.sock is self.carried
            meter.exchange.connection = Connection.REUSED if reused else Connection.NEW
            super().request(*args, **kwargs)

        def connect(self) -> None:
            exchange, start = meter.exchange, now_ns()
            exchange.connection = Connection.NEW
            super().connect()
            if tls and exchange.connect_ns is not None:
                exchange.tls_ns = now_ns() - start - exchange.connect_ns

        def send(self, data: Any) -> None:
            super().send(data)
            exchange = meter.exchange
            exchange.bytes_sent = (exchange.bytes_sent or 0) + len(data)
            exchange.sent_ns = now_ns()

        def _new_conn(self) -> socket.socket:
            start = now_ns()
            sock = self._open()
            meter.exchange.connect_ns = now_ns() - start
            return sock

        def _open(self) -> socket.socket:
            if allow_private:
                sock: socket.socket = super()._new_conn()
                return sock
            timeout = self.timeout if isinstance(self.timeout, int | float) else None
            try:  # urllib3's own translation of connection errors, as its _new_conn does
                return connect_public(
                    self.host, self.port, timeout, self.source_address, self.socket_options
                )
            except PrivateAddressError:
                raise
            except socket.gaierror as error:
                raise NameResolutionError(self.host, self, error) from error
            except TimeoutError as error:
                raise ConnectTimeoutError(
                    self, f"Connection to {self.host} timed out. (connect timeout={timeout})"
                ) from error
            except OSError as error:
                raise NewConnectionError(
                    self, f"Failed to establish a new connection: {error}"
                ) from error

        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            watchdog.attach(self.sock)
            self.carried = self.sock
            return super().getresponse(*args, **kwargs)

    return Guarded


class _GuardedAdapter(HTTPAdapter):
    def __init__(self, watchdog: _Watchdog, meter: _Meter, allow_private: bool) -> None:
        self._watchdog = watchdog
        self._meter = meter
        self._allow_private = allow_private
        super().__init__(pool_connections=1, pool_maxsize=1, max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        watchdog, meter, allow = self._watchdog, self._meter, self._allow_private
        http = type(
            "GuardedHTTPPool",
            (HTTPConnectionPool,),
            {"ConnectionCls": _guarded(HTTPConnection, watchdog, meter, allow)},
        )
        https = type(
            "GuardedHTTPSPool",
            (HTTPSConnectionPool,),
            {"ConnectionCls": _guarded(HTTPSConnection, watchdog, meter, allow)},
        )
        self.poolmanager.pool_classes_by_scheme = {"http": http, "https": https}


class BotTransport:
    """Signed POSTs to one bot endpoint (see the module's doc)."""

    def __init__(
        self,
        endpoint: str,
        secrets: Sequence[str],
        *,
        allow_private: bool = False,
        clock: Clock = time.monotonic,
        now: Clock = time.time,
    ) -> None:
        self.endpoint = endpoint
        self._secrets = list(secrets)
        self._clock = clock
        self._now = now
        self._watchdog = _Watchdog()
        self._meter = _Meter()
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies or .netrc from the process's environment
        adapter = _GuardedAdapter(self._watchdog, self._meter, allow_private)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def close(self) -> None:
        self.session.close()

    @property
    def shown(self) -> str:
        """The endpoint as error messages show it: no query string."""
        parts = urlsplit(self.endpoint)
        return f"{parts.scheme}://{parts.netloc}{parts.path}"

    @property
    def exchange(self) -> Exchange:
        """What the latest :meth:`post` measured, whatever became of it (after a stale
        connection's retry: the second sending, with ``retried`` set)."""
        return self._meter.exchange

    def post(self, body: bytes, seconds: float) -> tuple[int, str | None, bytes]:
        """POST ``body`` and read the whole answer within ``seconds``: its status, redirect
        target and body. Raises :class:`DeadlineError`, :class:`TooLargeError` or a requests
        error. A stale kept-alive connection is retried once (see the module's doc)."""
        deadline = self._clock() + seconds
        try:
            return self._post_once(body, deadline, retried=False)
        except requests.ConnectionError as error:
            if self.exchange.connection is not Connection.REUSED or isinstance(
                error, requests.Timeout
            ):
                raise
        # on a new connection: the failed one is gone
        return self._post_once(body, deadline, retried=True)

    def _post_once(
        self, body: bytes, deadline: float, *, retried: bool
    ) -> tuple[int, str | None, bytes]:
        # nothing sent, received or connected yet: the connection fills the rest in
        self._meter.exchange = Exchange(bytes_sent=0, bytes_received=0, retried=retried)
        seconds = deadline - self._clock()
        if seconds <= 0:
            raise DeadlineError
        headers = {
            "Content-Type": "application/json",
            "Accept-Encoding": "identity",
            **sign(self._secrets, body, int(self._now())),
        }
        self._watchdog.arm(seconds)
        try:
            response = self.session.post(
                self.endpoint,
                data=body,
                headers=headers,
                timeout=(min(CONNECT_TIMEOUT_S, seconds), seconds),
                allow_redirects=False,
                stream=True,
            )
            with response:
                content = self._read(response, deadline)
        except requests.RequestException:
            if self._watchdog.fired or self._clock() >= deadline:
                raise DeadlineError from None
            raise
        finally:
            self._watchdog.disarm()
        if self._watchdog.fired:
            raise DeadlineError
        return response.status_code, response.headers.get("Location"), content

    def notify(self, body: bytes) -> None:
        """Fire and forget, within :data:`NOTICE_TIMEOUT_S`: whatever the bot answers, or if it
        does not, the match goes on."""
        try:
            self.post(body, NOTICE_TIMEOUT_S)
        except (DeadlineError, TooLargeError, requests.RequestException):
            return

    def hello(self, request: Message, timeout_s: float) -> BotInfo:
        """Send the ``hello`` ``request`` within ``timeout_s`` in all: the bot's name and
        version, or :class:`HelloError` saying exactly why not."""
        where = f"the bot at {self.shown}"
        try:
            code, location, content = self.post(encode(request), timeout_s)
        except DeadlineError:
            raise HelloError(f"{where} did not answer the hello within {timeout_s:g} s") from None
        except TooLargeError:
            raise HelloError(
                f"the hello answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer "
                '{"protocol", "name", "version"} only'
            ) from None
        except requests.RequestException as error:
            raise HelloError(f"could not connect to {where}: {connection_reason(error)}") from None
        if 300 <= code < 400:
            raise HelloError(
                f"{where} answered HTTP {code} redirecting to {location or '?'}: the arena does "
                "not follow redirects; register the final URL"
            )
        if not 200 <= code < 300:
            raise HelloError(f"{where} answered the hello with HTTP {code}: {excerpt(content)}")
        try:
            return parse_hello_answer(content)
        except AnswerError as error:
            raise HelloError(f"{where} answered the hello wrongly: {error}") from None

    def _read(self, response: requests.Response, deadline: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(_CHUNK):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise TooLargeError
            if self._clock() >= deadline or self._watchdog.fired:
                raise DeadlineError
            chunks.append(chunk)
        if self._watchdog.fired:
            raise DeadlineError
        return b"".join(chunks)


def handshake(
    endpoint: str, secrets: Sequence[str], *, timeout_s: float, allow_private: bool
) -> BotInfo:
    """The endpoint check: the protocol's ``hello`` with no match, signed with the bot's
    ``secrets``; the bot's name and version, or :class:`HelloError`."""
    transport = BotTransport(endpoint, secrets, allow_private=allow_private)
    try:
        return transport.hello(hello_request(), timeout_s)
    finally:
        transport.close()


def connection_reason(error: BaseException) -> str:
    """The innermost useful cause of a connection error, in words a bot author can act on."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, PrivateAddressError):
            return str(cause)
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (is the bot running, on that port?)"
        if isinstance(cause, requests.ConnectTimeout):
            return f"no connection within {CONNECT_TIMEOUT_S:g} s"
        if "Name or service not known" in str(cause) or "nodename nor servname" in str(cause):
            return "the host name does not resolve"
        cause = cause.__cause__ or cause.__context__ or _first_arg(cause)
    return str(error)[:_EXCERPT]


def _first_arg(error: BaseException) -> BaseException | None:
    return next((a for a in error.args if isinstance(a, BaseException)), None)


def excerpt(content: bytes) -> str:
    """The start of a body, for an error message."""
    text = content.decode("utf-8", "replace").strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"

"""The arena's one way of calling a bot over HTTP: :class:`BotTransport`, and the ``hello`` on it.

Every call is one signed POST under a **total** wall-clock deadline. A socket timeout bounds each
operation, not the whole answer, so a bot dripping one byte at a time would outlast it; here a
watchdog (an alarm of :mod:`arena.alarms`) shuts the connection's socket down at the deadline,
and the body is read in small chunks with the deadline checked between them. Answers are capped
at :data:`MAX_ANSWER_BYTES`, redirects are not followed, nothing is taken from the process's
environment (no proxies, no ``.netrc``), and the connection is kept alive between calls. A
request on a kept-alive connection that fails before any byte of an answer arrives (the bot
closed the connection between two requests: a stale connection) is sent once more, on a new
connection, within what is left of the same deadline (docs/PROTOCOL.md, "Transport"). Unless
private endpoints are allowed, every new connection resolves the host, refuses if any address is
not public (``arena.addresses``), and connects only to an address it checked: no TCP connection
is ever opened to a private address, whatever the name re-resolves to (DNS rebinding). ``https``
certificates are verified, against the URL's host name.

The connection itself, and what it measures of each call into :attr:`BotTransport.exchange` (an
:class:`~arena.exchange.Exchange`: new or kept alive, connect and TLS time, the request's bytes
and the instant they went out, each read of the answer), is
:class:`arena.bot_connection.BotConnection`, a socket with no HTTP library around it: a call
costs a few clock readings and system calls, one write and a read or two.

Match seats (``arena.http_seat.HttpSeat``) and the endpoint check (:func:`handshake`, used by
the service) both go through this module, so the handshake is the same request, under the same
limits, with the same error messages, wherever it is sent.

A bot's endpoint is private: only its owner sees it. A match's faults and hellos are public (the
sealed log, the bot's page, the replay), so a transport's messages name the endpoint only when
it is made for the owner (``named``: the endpoint check and the doctor); otherwise they say
"the bot's endpoint", and what they quote of the network's errors or of the bot's answers
(which may name its host, its address or its path) is shown with those :data:`HIDDEN`
(:func:`hide_endpoint`).
"""

from __future__ import annotations

import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from urllib.parse import urlsplit

from arena.addresses import PrivateAddressError
from arena.alarms import ALARMS, Alarm
from arena.bot_connection import BotConnection, TransportError
from arena.exchange import Exchange
from arena.http_answer import Answer, HttpAnswerError
from bot_sdk.protocol import (
    AnswerError,
    BotInfo,
    Message,
    encode,
    hello_request,
    parse_hello_answer,
)
from bot_sdk.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, Signer
from replays.log import Connection

__all__ = [
    "HIDDEN",
    "MAX_ANSWER_BYTES",
    "NOTICE_TIMEOUT_S",
    "BotTransport",
    "Clock",
    "DeadlineError",
    "HelloError",
    "TooLargeError",
    "TransportError",
    "UnreachableError",
    "connection_reason",
    "excerpt",
    "handshake",
    "hide_endpoint",
]

MAX_ANSWER_BYTES = 64 * 1024
"""A larger answer is refused: an answer is a few dozen bytes."""
NOTICE_TIMEOUT_S = 2.0
"""The whole time a ``hand_end`` or ``match_end`` notification may take."""
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


class WrongSecretError(HelloError):
    """The bot refused the ``hello``'s signature (a push bot's ``401``): it checks signatures
    with another secret than the one the hello was signed with."""


class UnansweredHelloError(HelloError):
    """A connected pull bot let the ``hello``'s deadline pass: stuck, or refusing its signature
    (a pull bot refuses a request by leaving it unanswered)."""


def with_secret_hint(error: HelloError, hint: str) -> str:
    """``error``'s message, followed by ``hint`` (which secret signs, where the bot reads it, how
    to replace it) when the bot may have refused the hello's signature."""
    said = [str(error)]
    if isinstance(error, UnansweredHelloError):
        said.append(
            "A pull bot leaves a request whose signature does not verify unanswered (the SDK "
            "then logs it as not answered, unauthorized)"
        )
    if isinstance(error, WrongSecretError | UnansweredHelloError) and hint:
        said.append(hint)
    return ". ".join(said)


class _Watchdog:
    """Shuts the socket of the request in flight down when its deadline passes, whatever the
    bot is sending: the blocked read then ends at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._alarm: Alarm | None = None
        self.fired = False
        self._ring = self._fire
        """Bound once, not for every request."""

    def arm(self, seconds: float) -> None:
        self.fired = False
        self._alarm = ALARMS.set(seconds, self._ring)

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


class BotTransport:
    """Signed POSTs to one bot endpoint (see the module's doc). ``tls``: the certificates
    trusted (by default, certifi's authorities); ``named``: messages for the bot's owner, which
    name its endpoint."""

    def __init__(
        self,
        endpoint: str,
        secrets: Sequence[str],
        *,
        allow_private: bool = False,
        tls: ssl.SSLContext | None = None,
        clock: Clock = time.monotonic,
        now: Clock = time.time,
        named: bool = False,
    ) -> None:
        self.endpoint = endpoint
        self._named = named
        self._secrets = list(secrets)
        self._clock = clock
        self._now = now
        self._watchdog = _Watchdog()
        self._connection = BotConnection(endpoint, allow_private=allow_private, tls=tls)
        self.exchange = Exchange()
        """What the latest :meth:`post` measured, whatever became of it (after a stale
        connection's retry: the second sending, with ``retried`` set)."""

    def close(self) -> None:
        self._connection.close()

    @cached_property
    def _signer(self) -> Signer:
        """The secrets made ready to sign, at the first request (which fails without them)."""
        return Signer(self._secrets)

    @property
    def shown(self) -> str:
        """The bot as messages name it: for its owner (``named``) its endpoint without the
        query string, otherwise only "the bot's endpoint"."""
        if not self._named:
            return "the bot's endpoint"
        parts = urlsplit(self.endpoint)
        return f"the bot at {parts.scheme}://{parts.netloc}{parts.path}"

    def redact(self, text: str) -> str:
        """``text`` as a message may show it: as it is for the bot's owner (``named``),
        otherwise with its endpoint's host, path and query and any IP address hidden."""
        return text if self._named else hide_endpoint(text, self.endpoint)

    def post(self, body: bytes, seconds: float) -> tuple[int, str | None, bytes]:
        """POST ``body`` and read the whole answer within ``seconds``: its status, redirect
        target and body. Raises :class:`DeadlineError`, :class:`TooLargeError` or
        :class:`TransportError`. A stale kept-alive connection is retried once (see the
        module's doc)."""
        deadline = self._clock() + seconds
        try:
            return self._post_once(body, deadline, retried=False)
        except TransportError as error:
            exchange = self.exchange
            if (
                exchange.connection is not Connection.REUSED
                or exchange.bytes_received
                or isinstance(error.__cause__, TimeoutError)
            ):
                raise
        # on a new connection: the failed one is gone
        return self._post_once(body, deadline, retried=True)

    def _post_once(
        self, body: bytes, deadline: float, *, retried: bool
    ) -> tuple[int, str | None, bytes]:
        # nothing sent, received or connected yet: the connection fills the rest in
        self.exchange = exchange = Exchange(bytes_sent=0, bytes_received=0, retried=retried)
        seconds = deadline - self._clock()
        if seconds <= 0:
            raise DeadlineError
        stamp = int(self._now())
        connection, watchdog = self._connection, self._watchdog
        message = (
            f"{connection.head}{TIMESTAMP_HEADER}: {stamp}\r\n"
            f"{SIGNATURE_HEADER}: {self._signer.entries(body, stamp)}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        watchdog.arm(seconds)
        try:
            answer = connection.request(message, exchange, seconds, watchdog)
            content = self._read(answer, deadline)
        except TransportError:
            connection.close()
            if watchdog.fired or self._clock() >= deadline:
                raise DeadlineError from None
            raise
        except (DeadlineError, TooLargeError):
            connection.close()  # an answer left unread: the connection cannot carry another
            raise
        finally:
            watchdog.disarm()
        if watchdog.fired:  # shut down as the answer ended
            connection.close()
            raise DeadlineError
        if answer.will_close:
            connection.close()
        return answer.status, answer.location, content

    def notify(self, body: bytes) -> None:
        """Fire and forget, within :data:`NOTICE_TIMEOUT_S`: whatever the bot answers, or if it
        does not, the match goes on."""
        try:
            self.post(body, NOTICE_TIMEOUT_S)
        except (DeadlineError, TooLargeError, TransportError):
            return

    def hello(self, request: Message, timeout_s: float) -> BotInfo:
        """Send the ``hello`` ``request`` within ``timeout_s`` in all: the bot's name and
        version, or :class:`HelloError` saying exactly why not."""
        where = self.shown
        try:
            code, location, content = self.post(encode(request), timeout_s)
        except DeadlineError:
            raise HelloError(f"{where} did not answer the hello within {timeout_s:g} s") from None
        except TooLargeError:
            raise HelloError(
                f"the hello answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer "
                '{"protocol", "name", "version"} only'
            ) from None
        except TransportError as error:
            reason = self.redact(connection_reason(error))
            raise HelloError(f"could not connect to {where}: {reason}") from None
        if 300 <= code < 400:
            raise HelloError(
                f"{where} answered HTTP {code} redirecting to "
                f"{self.redact(location or '?')}: the arena does not follow redirects; "
                "register the final URL"
            )
        if code == 401:
            raise WrongSecretError(
                f"{where} refused the hello's signature (HTTP 401: {excerpt(content, self.redact)})"
            )
        if not 200 <= code < 300:
            shown = excerpt(content, self.redact)
            raise HelloError(f"{where} answered the hello with HTTP {code}: {shown}")
        try:
            return parse_hello_answer(content)
        except AnswerError as error:
            wrong = self.redact(str(error))
            raise HelloError(f"{where} answered the hello wrongly: {wrong}") from None

    def _read(self, answer: Answer, deadline: float) -> bytes:
        whole = answer.received(_CHUNK)  # as the loop below reads one piece, or none
        if whole is not None:
            if (whole and self._clock() >= deadline) or self._watchdog.fired:
                raise DeadlineError
            return whole
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in answer.pieces(_CHUNK):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise TooLargeError
                if self._clock() >= deadline or self._watchdog.fired:
                    raise DeadlineError
                chunks.append(chunk)
        except (OSError, HttpAnswerError) as error:
            if self._watchdog.fired:
                raise DeadlineError from None
            raise TransportError(f"the answer could not be read: {error}") from error
        if self._watchdog.fired:
            raise DeadlineError
        return b"".join(chunks)


def handshake(
    endpoint: str, secrets: Sequence[str], *, timeout_s: float, allow_private: bool
) -> BotInfo:
    """The endpoint check: the protocol's ``hello`` with no match, signed with the bot's
    ``secrets``; the bot's name and version, or :class:`HelloError` (for the bot's owner: it
    names the endpoint)."""
    transport = BotTransport(endpoint, secrets, allow_private=allow_private, named=True)
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
        if "Name or service not known" in str(cause) or "nodename nor servname" in str(cause):
            return "the host name does not resolve"
        cause = cause.__cause__ or cause.__context__ or _first_arg(cause)
    return str(error)[:_EXCERPT]


def _first_arg(error: BaseException) -> BaseException | None:
    return next((a for a in error.args if isinstance(a, BaseException)), None)


def excerpt(content: bytes, redact: Callable[[str], str] = str) -> str:
    """The start of a body, for an error message, ``redact``-ed whole before it is cut (a name
    cut in two would not be recognised)."""
    text = redact(content.decode("utf-8", "replace")).strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


HIDDEN = "[hidden]"
"""What a public message shows in place of a bot's host, address, path or query."""
_IP = re.compile(
    r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)"
    r"|(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])"
)
"""What may be an IPv4 or IPv6 address (checked by :mod:`ipaddress` before it is hidden)."""
_HIDDEN_RUN = re.compile(r"\[?\[hidden\]\]?(?::\d+|\[hidden\])*")
"""A hidden part (an IPv6 address in its brackets), with the port or the other hidden parts
that follow it: one :data:`HIDDEN`."""


def hide_endpoint(text: str, endpoint: str) -> str:
    """``text`` with every mention of ``endpoint`` (the URL, its host, also as IDNA, its path
    and its query, in any case) and every IP address shown as :data:`HIDDEN`, with the port
    after any of them.

    >>> hide_endpoint("refused by http://10.1.2.3:9000/bot/k (Server at bot.example)",
    ...               "http://bot.example:9000/bot/k")
    'refused by http://[hidden] (Server at [hidden])'
    """
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    private = {endpoint, parts.netloc, host, _idna(host), parts.query}
    if len(parts.path) > 1:
        private.add(parts.path)
    for part in sorted(filter(None, private), key=len, reverse=True):
        text = re.sub(re.escape(part), HIDDEN, text, flags=re.IGNORECASE)
    text = _IP.sub(lambda found: HIDDEN if _is_address(found[0]) else found[0], text)
    return _HIDDEN_RUN.sub(HIDDEN, text)


def _idna(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True

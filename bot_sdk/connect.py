"""Serving a bot that connects out to the arena: for a bot behind NAT or a firewall, which the
arena cannot reach with a POST.

The bot holds one long-lived connection open to the arena, over one of two channels that carry
the same messages:

- ``websocket`` (the default): ``{arena}/api/bots/{bot_id}/ws`` (``ws://`` or ``wss://``). The
  arena sends each message as one JSON text message, and an empty one as a keep-alive; the bot
  sends each answer back on the same connection, as ``{"type": "answer", "id": ..., "body":
  ...}``, which saves an HTTP request per decision. An answer the arena does not take comes back
  as a ``refused`` message.
- ``stream``: ``GET {arena}/api/bots/{bot_id}/stream``, read as newline-delimited JSON (blank
  lines are keep-alives), each answer POSTed to ``{arena}/api/bots/{bot_id}/answers/{id}`` over
  a kept-alive session. Plain HTTP: for a proxy or firewall that blocks WebSockets (the
  WebSocket channel does not go through ``HTTPS_PROXY``), and readable with ``curl -N``.

Either way the arena sends a ``welcome``, then ``request`` messages carrying exactly the signed
messages a bot served with ``python -m bot_sdk serve`` receives, and a ``bye`` when it closes the
connection. Each request is checked and handled by the same :class:`~bot_sdk.server.BotApp` as
a served bot, off the reading thread so that a slow decision never holds up the connection (the
requests of one seat of a match in the arena's order, those of other seats at the same time).

The client reconnects when the connection ends, breaks or falls silent (nothing, not even a
keep-alive, for three heartbeats): at once the first time, then after 1, 2, 4, ... seconds (at
most 30), counting again from the start after a connection that lasted a minute. After a
reconnect the arena sends again every request still waiting for an answer; the dispatcher gives
a decision it has seen before the answer it gave the first time.

A bot whose token, id or kind is wrong is refused for good (401, 403, 404, 409), as is one whose
connection another connection replaced: :meth:`PullClient.run` then raises
:class:`ArenaRefusedError` saying why.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import random
import re
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Literal, NamedTuple, Protocol, cast, get_args
from urllib.parse import quote, urlsplit

import certifi
import requests
import simple_websocket
import urllib3
from requests.adapters import HTTPAdapter
from simple_websocket import ConnectionClosed
from wsproto import ConnectionType
from wsproto.events import AcceptConnection, RejectConnection, RejectData, Request, TextMessage
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import ProtocolError

from bot_sdk.protocol import PROTOCOL, encode
from bot_sdk.server import MAX_BODY_BYTES, BotApp, RefusedError

logger = logging.getLogger(__name__)

Channel = Literal["websocket", "stream"]
"""How a pull bot talks to the arena: see the module's doc."""
CHANNELS: tuple[Channel, ...] = get_args(Channel)
NDJSON = "application/x-ndjson"
DEFAULT_HEARTBEAT_S = 10.0
"""The keep-alive interval assumed until the arena's welcome gives its own."""
MAX_LINE_BYTES = 8 * MAX_BODY_BYTES
"""The longest message read: a request whose body is at the served bot's limit, escaped as a
JSON string. A longer one is skipped."""
PERMANENT_STATUSES = frozenset({401, 403, 404, 409})
"""Refusals of the connection that no retry can mend."""
RETRY_STATUSES = frozenset({429, 503})
"""Refusals of the connection to retry after ``Retry-After`` (or the back-off)."""
_HINTS = {
    401: "check the bot's token (--token or GONGZHU_BOT_TOKEN)",
    403: "the token belongs to another bot: check --bot-id",
    404: "check --bot-id and --arena",
}
_NOT_THE_ARENA_HINT = (
    "not the arena's answer: a proxy or firewall that blocks WebSockets? try --channel stream"
)
_READ_SIZE = 64 * 1024
_MAX_ERROR_TEXT = 300
_MAX_ERROR_BODY = 64 * 1024
_POLL_S = 0.1
"""How often a WebSocket reader looks whether :meth:`PullClient.stop` was called."""
_CLOSE_WAIT_S = 1.0
"""How long closing a WebSocket waits for the arena to answer the close."""
_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


class ArenaRefusedError(Exception):
    """The arena refused the bot for good, or closed its connection for good (another connection
    replaced it, or the bot was retired): :meth:`PullClient.run` stops with this error.

    ``status`` is the connection's HTTP status (``None`` after a ``bye``); ``reason`` the arena's
    error code or the bye's reason.
    """

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status, self.reason = status, reason


class _Request(NamedTuple):
    """A request read from the connection."""

    id: str
    reply: bool
    headers: dict[str, str]
    body: str
    received_at: float


class _Ended(NamedTuple):
    """How one connection ended."""

    why: str
    up_s: float | None = None
    """How long the connection was open; ``None`` if it never opened."""
    retry_after_s: float | None = None
    """How long the arena asked to wait, if it did."""
    refused: bool = False
    """The arena refused the connection (a 429, a 503, ...): never reconnect at once."""


class _RefusedError(Exception):
    """The arena answered the connection with an HTTP error instead of opening it: its status,
    the body's text and ``Retry-After``. ``hint`` says what to check when the body is not the
    arena's JSON error."""

    def __init__(self, status: int, text: str, retry_after: str = "", hint: str = "") -> None:
        super().__init__(f"{status}: {text[:_MAX_ERROR_TEXT]}")
        self.status, self.text, self.retry_after, self.hint = status, text, retry_after, hint


class _CannotConnectError(Exception):
    """No connection was opened, for a reason other than the arena's refusal."""

    def __init__(self, why: str, *, refused: bool = False) -> None:
        super().__init__(why)
        self.why, self.refused = why, refused


class _DisconnectedError(Exception):
    """The open connection ended, broke or fell silent: why."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Channel(Protocol):
    """What the channels do differently: open a connection, read its messages, send an answer.
    Everything else (handling the requests, verification, back-off, refusals, byes) is
    :class:`PullClient`'s, the same for both."""

    name: Channel

    def open(self, silence_s: float) -> None:
        """Open a connection; if none opens, raise :class:`_RefusedError` or
        :class:`_CannotConnectError`."""

    def messages(self) -> Iterator[tuple[str | bytes, float]]:
        """The open connection's messages (empty for a keep-alive), each with
        ``time.monotonic()`` when it was read, until it ends: then raise
        :class:`_DisconnectedError`."""
        ...  # pragma: no cover

    def set_silence(self, seconds: float) -> None:
        """Take the connection for dead after ``seconds`` without a message."""

    def send_answer(self, request_id: str, answer: bytes) -> None:
        """Send an answer from any thread; log, never raise, if it cannot be sent."""

    def interrupt(self) -> None:
        """Make :meth:`messages` end soon: from :meth:`PullClient.stop`, so it takes no lock."""

    def disconnect(self) -> None:
        """Close the connection, if one is open."""

    def close(self) -> None:
        """Close the connection and free everything else."""


def backoff_delay(failures: int, *, base_s: float, cap_s: float, rng: random.Random) -> float:
    """How long to wait before reconnecting after ``failures`` connections in a row that failed
    or ended: nothing after the first (an arena restarting, a network blip), then ``base_s``,
    twice that, four times, ... up to ``cap_s``, each less up to half at random, so that the bots
    of a restarted arena do not all come back in step.

    >>> rng = random.Random(1)
    >>> [round(backoff_delay(n, base_s=1, cap_s=30, rng=rng), 2) for n in range(1, 9)]
    [0.0, 0.57, 1.85, 3.53, 5.02, 11.96, 21.74, 24.77]
    """
    if failures <= 1:
        return 0.0
    delay = min(cap_s, base_s * 2.0 ** min(failures - 2, 32))
    return delay * (0.5 + rng.random() / 2)


class PullClient:
    """Serves ``app``'s bot over a connection to the arena until :meth:`stop` or a permanent
    refusal.

    ``arena`` is the arena's base URL, ``bot_id`` and ``token`` the bot's id and API token.
    ``channel`` is ``"websocket"`` (the default: the answers go back on the connection) or
    ``"stream"`` (NDJSON and a POST per answer, for networks that block WebSockets).
    ``heartbeat_s`` is assumed until the welcome says otherwise; the connection is taken for dead
    when nothing arrives for three heartbeats. ``backoff_base_s`` and ``backoff_cap_s`` set the
    reconnection back-off (see :func:`backoff_delay`), which starts again after a connection that
    lasted ``stable_after_s``. ``drain_s``: how long :meth:`run` waits, when stopped, for the
    requests in hand to be answered.
    """

    def __init__(
        self,
        app: BotApp,
        *,
        arena: str,
        bot_id: str,
        token: str,
        channel: Channel = "websocket",
        heartbeat_s: float = DEFAULT_HEARTBEAT_S,
        backoff_base_s: float = 1.0,
        backoff_cap_s: float = 30.0,
        stable_after_s: float = 60.0,
        connect_timeout_s: float = 10.0,
        answer_timeout_s: float = 10.0,
        verify_timeout_s: float = 60.0,
        drain_s: float = 5.0,
        max_connections: int = 16,
        rng: random.Random | None = None,
    ) -> None:
        if not token:
            raise ValueError("give the bot's API token from the arena")
        if channel not in CHANNELS:
            raise ValueError(f"channel must be one of {', '.join(CHANNELS)}, not {channel!r}")
        self.app = app
        self.arena = arena.rstrip("/")
        self.bot_id = bot_id
        self.heartbeat_s = heartbeat_s
        self.status: str | None = None
        """The bot's status in the last welcome: ``pending``, ``active`` or ``paused``."""
        self._backoff_base_s = backoff_base_s
        self._backoff_cap_s = backoff_cap_s
        self._stable_after_s = stable_after_s
        self._connect_timeout_s = connect_timeout_s
        self._verify_timeout_s = verify_timeout_s
        self._drain_s = drain_s
        self._rng = rng or random.Random()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._handlers: set[threading.Thread] = set()
        self._lanes: dict[tuple[str, int], deque[_Request]] = {}
        """The requests waiting for their seat's thread, per seat of a match being handled."""
        self._verifying = False
        # Verification, and the stream's answers, go over their own pool, kept alive: a
        # decision's answer must not wait for a new TCP (and TLS) connection.
        self._http = _session(token, max_connections)
        self._channel: _Channel
        if channel == "websocket":
            self._channel = _WebSocketChannel(
                _ws_url(self._url("ws")),
                token,
                connect_timeout_s=connect_timeout_s,
                stop=self._stop,
            )
        else:
            self._channel = _StreamChannel(
                self._url,
                token,
                self._http,
                connect_timeout_s=connect_timeout_s,
                answer_timeout_s=answer_timeout_s,
            )

    @property
    def channel(self) -> Channel:
        """The channel in use: ``"websocket"`` or ``"stream"``."""
        return self._channel.name

    def run(self) -> None:
        """Connect, serve and reconnect until :meth:`stop` (then return) or a permanent refusal
        (then raise :class:`ArenaRefusedError`). A client runs once."""
        failures = 0
        try:
            while not self._stop.is_set():
                ended = self._connect_once()
                if self._stop.is_set():
                    break
                if ended.up_s is not None and ended.up_s >= self._stable_after_s:
                    failures = 0
                failures += 1
                delay = ended.retry_after_s
                if delay is None:
                    delay = backoff_delay(
                        failures,
                        base_s=self._backoff_base_s,
                        cap_s=self._backoff_cap_s,
                        rng=self._rng,
                    )
                    if ended.refused:
                        delay = max(delay, self._backoff_base_s)
                logger.info("disconnected: %s; reconnecting in %.1f s", ended.why, delay)
                self._stop.wait(delay)
        finally:
            self._stop.set()
            self._drain()  # a WebSocket is still open meanwhile, for the answers in hand
            self._channel.close()
            self._http.close()
        logger.info("stopped")

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called (or :meth:`run` has returned)."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Make :meth:`run` return: from another thread, or from a signal handler (it takes no
        lock). Reading stops at once; the requests in hand are still answered."""
        self._stop.set()
        self._channel.interrupt()

    # -- the connection --------------------------------------------------------------------------

    def _url(self, *parts: str) -> str:
        return "/".join(
            [self.arena, "api", "bots", *(quote(p, safe="") for p in (self.bot_id, *parts))]
        )

    def _connect_once(self) -> _Ended:
        try:
            self._channel.open(3 * self.heartbeat_s)
        except _RefusedError as refusal:
            return self._refused(refusal)
        except _CannotConnectError as exc:
            return _Ended(exc.why, refused=exc.refused)
        opened = time.monotonic()
        try:
            why = "stopped" if self._stop.is_set() else self._read()  # stopped while connecting?
        finally:
            if not self._stop.is_set():
                self._channel.disconnect()  # else run() closes it once the answers are sent
        return _Ended(why, up_s=time.monotonic() - opened)

    def _refused(self, refusal: _RefusedError) -> _Ended:
        """A connection refused: raise if for good, else say when to try again."""
        status = refusal.status
        what, message, from_arena = _error_of(status, refusal.text)
        hint = refusal.hint if not from_arena and refusal.hint else _HINTS.get(status)
        if status in PERMANENT_STATUSES:
            raise ArenaRefusedError(
                f"the arena refused the connection ({what}): {message}"
                + (f" ({hint})" if hint else ""),
                status=status,
                reason=what.partition(" ")[2],
            )
        retry_after_s = _retry_after(refusal.retry_after) if status in RETRY_STATUSES else None
        return _Ended(
            f"the arena answered {what}: {message}", retry_after_s=retry_after_s, refused=True
        )

    def _read(self) -> str:
        """Handle the connection's messages until it ends; return why it ended."""
        try:
            for data, received_at in self._channel.messages():
                if self._stop.is_set():
                    return "stopped"
                if not data.strip():
                    continue  # a keep-alive: reading it was the point
                bye = self._handle(data, received_at)
                if bye is not None:
                    return bye
        except _DisconnectedError as exc:
            return "stopped" if self._stop.is_set() else exc.why
        return "stopped" if self._stop.is_set() else "the arena ended the connection"

    def _handle(self, data: str | bytes, received_at: float) -> str | None:
        """Handle one message; after a ``bye``, why the connection ends."""
        try:
            message = json.loads(data)
        except ValueError:
            logger.warning("ignored a message that is not JSON: %.200r", data)
            return None
        if not isinstance(message, dict):
            logger.warning("ignored a message that is not an object: %.200r", data)
            return None
        kind = message.get("type")
        if kind == "request":
            self._start_request(message, received_at)
        elif kind == "welcome":
            self._welcome(message)
        elif kind == "refused":
            _log_refused_answer(message)
        elif kind == "bye":
            return self._bye(message)
        else:
            logger.debug("ignored a message of type %r", kind)
        return None

    def _welcome(self, message: Mapping[str, Any]) -> None:
        heartbeat = message.get("heartbeat_s")
        if isinstance(heartbeat, int | float) and not isinstance(heartbeat, bool) and heartbeat > 0:
            self.heartbeat_s = float(heartbeat)
            self._channel.set_silence(3 * self.heartbeat_s)
        if message.get("protocol") != PROTOCOL:
            logger.warning(
                "the arena speaks %r, this SDK %s: upgrade the SDK",
                message.get("protocol"), PROTOCOL,
            )  # fmt: skip
        status = message.get("status")
        self.status = status if isinstance(status, str) else None
        hello = self.app.dispatcher.hello()
        logger.info(
            "connected to %s over %s as %s: %s %s, status %s (%s)",
            self.arena, self.channel, message.get("bot_id", self.bot_id), hello["name"],
            hello["version"], status,
            "signatures verified" if self.app.verifies_signatures else "UNSIGNED",
        )  # fmt: skip
        if status == "pending":
            self._start_verification()
        elif status == "paused":
            logger.info("the bot is paused: the arena offers it no matches until it is resumed")

    def _bye(self, message: Mapping[str, Any]) -> str:
        reason = str(message.get("reason", ""))
        text = str(message.get("message", ""))
        if reason in {"replaced", "retired"}:
            raise ArenaRefusedError(
                f"the arena closed the connection ({reason}): {text}", reason=reason
            )
        return f"the arena closed the connection ({reason}): {text}"

    # -- requests and answers ----------------------------------------------------------------------

    def _start_request(self, message: Mapping[str, Any], received_at: float) -> None:
        request_id, reply = message.get("id"), message.get("reply")
        headers, body = message.get("headers"), message.get("body")
        if (
            not isinstance(request_id, str)
            or not request_id
            or not isinstance(reply, bool)
            or not isinstance(headers, dict)
            or not all(isinstance(v, str) for v in headers.values())
            or not isinstance(body, str)
        ):
            logger.warning(
                "ignored a request without a string id, a boolean reply, string headers and a "
                "string body: %.200s", json.dumps(message),
            )  # fmt: skip
            return
        request = _Request(request_id, reply, headers, body, received_at)
        lane = _lane_of(body)
        with self._lock:
            queued = self._lanes.get(lane) if lane is not None else None
            if queued is not None:
                queued.append(request)  # its seat's thread handles it next
                return
            if lane is not None:
                self._lanes[lane] = deque()
            thread = threading.Thread(
                target=self._run_lane,
                args=(lane, request),
                daemon=True,  # a hung bot must not keep the process from exiting
                name=f"pull-request-{request_id}",
            )
            self._handlers.add(thread)
        thread.start()

    def _run_lane(self, lane: tuple[str, int] | None, request: _Request) -> None:
        """Handle ``request``, then the requests queued meanwhile for the same seat."""
        try:
            while True:
                self._answer(request)
                with self._lock:
                    queued = self._lanes.get(lane) if lane is not None else None
                    if not queued:
                        if lane is not None:
                            del self._lanes[lane]
                        return
                    request = queued.popleft()
        finally:
            with self._lock:
                self._handlers.discard(threading.current_thread())

    def _answer(self, request: _Request) -> None:
        request_id = request.id
        try:
            _, answer = self.app.handle(
                request.headers, request.body.encode("utf-8"), request.received_at
            )
            if not request.reply:
                if answer is not None:
                    logger.warning(
                        "request %s asks for no reply: its answer is not sent", request_id
                    )
            elif answer is None:
                logger.warning(
                    "request %s asks for a reply to a notice: nothing to send", request_id
                )
            else:
                self._channel.send_answer(request_id, encode(answer))
        except RefusedError as refused:
            level = logging.ERROR if refused.status >= 500 else logging.WARNING
            logger.log(
                level, "request %s not answered (%s): %s", request_id, refused.code, refused.message
            )
        except UnicodeEncodeError as exc:
            logger.warning(
                "request %s not answered (bad_request): its body is not UTF-8: %s", request_id, exc
            )
        except Exception:
            logger.exception("request %s not answered: the SDK failed", request_id)

    def _start_verification(self) -> None:
        with self._lock:
            if self._verifying:
                return
            self._verifying = True
        threading.Thread(target=self._verify, daemon=True, name="pull-verify").start()

    def _verify(self) -> None:
        """Ask the arena to verify the bot: it sends a ``hello`` over the connection, which the
        reader answers meanwhile, and says whether the answer was right."""
        try:
            response = self._http.post(
                self._url("verify-endpoint"),
                data=b"{}",
                headers={"Content-Type": "application/json"},
                timeout=(self._connect_timeout_s, self._verify_timeout_s),
            )
        except requests.RequestException as exc:
            logger.error("verification failed: %s", exc)
        else:
            if response.status_code == HTTPStatus.OK:
                logger.info("verified: the bot is active")
            else:
                what, message, _ = _error_of(response.status_code, response.text)
                logger.error("verification failed (%s): %s", what, message)
        finally:
            with self._lock:
                self._verifying = False

    def _drain(self) -> None:
        deadline = time.monotonic() + self._drain_s
        with self._lock:
            handlers = list(self._handlers)
        for thread in handlers:
            thread.join(max(deadline - time.monotonic(), 0))


# -- the NDJSON stream ---------------------------------------------------------------------------


class _StreamChannel:
    """``GET .../stream`` read as NDJSON; each answer POSTed to ``.../answers/{id}``."""

    name: Channel = "stream"

    def __init__(
        self,
        url: Callable[..., str],
        token: str,
        answers: requests.Session,
        *,
        connect_timeout_s: float,
        answer_timeout_s: float,
    ) -> None:
        self._url = url
        self._streams = _session(token, 1)
        self._answers = answers
        self._connect_timeout_s = connect_timeout_s
        self._answer_timeout_s = answer_timeout_s
        self._silence_s = 0.0
        self._response: requests.Response | None = None
        self._raw: urllib3.BaseHTTPResponse | None = None

    def open(self, silence_s: float) -> None:
        try:
            response = self._streams.get(
                self._url("stream"),
                headers={"Accept": NDJSON, "Accept-Encoding": "identity"},
                stream=True,
                timeout=(self._connect_timeout_s, silence_s),
            )
        except requests.RequestException as exc:
            raise _CannotConnectError(f"cannot connect to {self._url('stream')}: {exc}") from None
        if response.status_code != HTTPStatus.OK:
            with response:
                raise _RefusedError(
                    response.status_code, response.text, response.headers.get("Retry-After", "")
                )
        content_type = response.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != NDJSON:
            response.close()
            logger.error(
                "%s answered %s, not an NDJSON stream: is --arena the arena's address?",
                response.url, content_type or "no Content-Type",
            )  # fmt: skip
            raise _CannotConnectError(f"not a stream ({content_type})", refused=True)
        self._silence_s = silence_s
        self._response = response
        self._raw = cast(urllib3.BaseHTTPResponse, response.raw)

    def messages(self) -> Iterator[tuple[str | bytes, float]]:
        raw = self._raw
        if raw is None:
            raise _DisconnectedError("not connected")
        try:
            yield from _lines(raw)
        except urllib3.exceptions.ReadTimeoutError:
            raise _DisconnectedError(f"nothing from the arena for {self._silence_s:g} s") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise _DisconnectedError(f"the stream broke ({exc})") from None
        raise _DisconnectedError("the arena ended the stream")

    def set_silence(self, seconds: float) -> None:
        """Set the stream's read timeout once the welcome gives the heartbeat: requests sets it
        only when connecting."""
        self._silence_s = seconds
        sock = getattr(getattr(self._raw, "connection", None), "sock", None)
        if sock is not None:
            sock.settimeout(seconds)

    def send_answer(self, request_id: str, answer: bytes) -> None:
        url = self._url("answers", request_id)
        for attempt in (1, 2):
            try:
                response = self._answers.post(
                    url,
                    data=answer,
                    headers={"Content-Type": "application/json"},
                    timeout=(self._connect_timeout_s, self._answer_timeout_s),
                )
                break
            except requests.ConnectionError as exc:
                # Most often a kept-alive connection the arena had closed: one more try on a new
                # one. An answer sent twice is refused the second time (409), never used twice.
                if attempt == 2:
                    logger.warning("request %s: the answer was not sent: %s", request_id, exc)
                    return
            except requests.RequestException as exc:
                logger.warning("request %s: the answer was not sent: %s", request_id, exc)
                return
        if response.ok:
            logger.debug("request %s answered %s", request_id, answer.decode())
        else:
            what, message, _ = _error_of(response.status_code, response.text)
            logger.warning(
                "request %s: the arena did not take the answer (%s): %s", request_id, what, message
            )

    def interrupt(self) -> None:
        raw = self._raw
        if raw is not None:
            with contextlib.suppress(OSError, ValueError, RuntimeError):  # already closed
                raw.shutdown()

    def disconnect(self) -> None:
        response, self._response, self._raw = self._response, None, None
        if response is not None:
            response.close()

    def close(self) -> None:
        self.disconnect()
        self._streams.close()


def _lines(raw: urllib3.BaseHTTPResponse) -> Iterator[tuple[bytes, float]]:
    """The stream's lines as they arrive, each with ``time.monotonic()`` when it was read.

    ``read1`` returns what has arrived rather than waiting to fill a buffer, so a line is handled
    as soon as its newline is read."""
    pending = bytearray()
    skipping = False
    while chunk := raw.read1(_READ_SIZE, decode_content=True):
        received_at = time.monotonic()
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            line = bytes(pending + piece) if pending else piece
            pending.clear()
            if skipping:
                skipping = False
                continue
            yield line, received_at
        if not skipping:
            pending += rest
        if len(pending) > MAX_LINE_BYTES:
            logger.error("skipped a stream line longer than %d bytes", MAX_LINE_BYTES)
            pending.clear()
            skipping = True


# -- the WebSocket -------------------------------------------------------------------------------


class _WebSocketChannel:
    """One WebSocket, ``.../ws``, carrying the arena's messages and the bot's answers."""

    name: Channel = "websocket"

    def __init__(
        self, url: str, token: str, *, connect_timeout_s: float, stop: threading.Event
    ) -> None:
        self._url = url
        self._headers = [(b"Authorization", f"Bearer {token}".encode())]
        self._connect_timeout_s = connect_timeout_s
        self._stop = stop
        self._silence_s = 0.0
        self._ws: _WebSocket | None = None

    def open(self, silence_s: float) -> None:
        try:
            ws = _WebSocket(self._url, headers=self._headers, timeout_s=self._connect_timeout_s)
        except _RefusedError as refusal:
            if refusal.status < 400:  # a web server, not the arena's WebSocket
                logger.error(
                    "%s answered %d, not a WebSocket: is --arena the arena's address?",
                    self._url, refusal.status,
                )  # fmt: skip
                why = f"not a WebSocket ({refusal.status})"
                raise _CannotConnectError(why, refused=True) from None
            refusal.hint = _NOT_THE_ARENA_HINT
            raise
        except ProtocolError as exc:
            why = f"{self._url} is not a WebSocket: {exc}"
            raise _CannotConnectError(why, refused=True) from None
        except (OSError, simple_websocket.ConnectionError) as exc:
            raise _CannotConnectError(f"cannot connect to {self._url}: {exc}") from None
        self._silence_s = silence_s
        self._ws = ws

    def messages(self) -> Iterator[tuple[str | bytes, float]]:
        ws = self._ws
        if ws is None:
            raise _DisconnectedError("not connected")
        last = time.monotonic()
        while not self._stop.is_set():
            wait = min(_POLL_S, last + self._silence_s - time.monotonic())
            if wait <= 0:
                raise _DisconnectedError(f"nothing from the arena for {self._silence_s:g} s")
            try:
                data = ws.receive(timeout=wait)
            except ConnectionClosed as closed:
                raise _DisconnectedError(_why_closed(closed)) from None
            if data is None:
                continue  # nothing yet
            last = time.monotonic()
            if len(data) > MAX_LINE_BYTES:
                logger.error("skipped a message longer than %d bytes", MAX_LINE_BYTES)
                continue
            yield data, last
        raise _DisconnectedError("stopped")

    def set_silence(self, seconds: float) -> None:
        self._silence_s = seconds

    def send_answer(self, request_id: str, answer: bytes) -> None:
        ws = self._ws
        if ws is None:
            logger.warning(
                "request %s: the answer was not sent: not connected (the arena sends the "
                "request again on the next connection)", request_id,
            )  # fmt: skip
            return
        text = json.dumps(
            {"type": "answer", "id": request_id, "body": answer.decode("utf-8")},
            separators=(",", ":"),
        )
        try:
            ws.send(text)
        except (ConnectionClosed, OSError) as exc:
            logger.warning("request %s: the answer was not sent: %s", request_id, exc)
        else:
            logger.debug("request %s answered %s", request_id, answer.decode())

    def interrupt(self) -> None:
        pass  # messages() looks at the stop event every _POLL_S; the socket stays open for answers

    def disconnect(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.close()

    def close(self) -> None:
        self.disconnect()


def _ws_url(url: str) -> str:
    """The WebSocket address of an HTTP one: ``http`` becomes ``ws``, ``https`` ``wss``.

    >>> _ws_url("https://arena.example/api/bots/b1/ws")
    'wss://arena.example/api/bots/b1/ws'
    >>> _ws_url("http://127.0.0.1:8000/api/bots/b1/ws")
    'ws://127.0.0.1:8000/api/bots/b1/ws'
    """
    scheme, sep, rest = url.partition("://")
    return {"http": "ws", "https": "wss"}.get(scheme.lower(), scheme) + sep + rest


def _why_closed(closed: ConnectionClosed) -> str:
    code = closed.reason
    if code in (CloseReason.NO_STATUS_RCVD, CloseReason.ABNORMAL_CLOSURE):
        return "the WebSocket broke"
    detail = f"{int(code)} {closed.message}" if closed.message else str(int(code))
    return f"the arena closed the WebSocket ({detail})"


class _DaemonThread(threading.Thread):
    """The WebSocket's reader thread: a daemon, as the handlers are, so that a connection that
    hangs never keeps the process from exiting."""

    def __init__(self, target: Callable[..., Any]) -> None:
        super().__init__(target=target, daemon=True)


class _WebSocket(simple_websocket.Client):
    """``simple_websocket``'s client, with what the pull channel needs that it lacks.

    - The handshake reads a refusal's headers and body and raises :class:`_RefusedError`: the
      library's raises ``ConnectionError(status)`` and drops the arena's message and
      ``Retry-After``.
    - Connecting and the handshake time out (the library waits forever); ``TCP_NODELAY``, so that
      an answer is not held back for the ACK of the one before (40 ms).
    - Sends take a lock, and so does the reader thread's handling of what arrives (it sends pongs
      and close replies): answers come from several handler threads, and neither wsproto's state
      nor a socket's writes may be shared unguarded.
    """

    def __init__(self, url: str, *, headers: list[tuple[bytes, bytes]], timeout_s: float) -> None:
        parts = urlsplit(url)
        secure = parts.scheme == "wss"
        host = parts.hostname or ""
        self._host_header = parts.netloc.rpartition("@")[2]
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._extra_headers = headers
        self._send_lock = threading.Lock()
        sock = socket.create_connection((host, parts.port or (443 if secure else 80)), timeout_s)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if secure:
                context = ssl.create_default_context(cafile=certifi.where())  # as requests does
                sock = context.wrap_socket(sock, server_hostname=host)
            self._socket = sock
            # Not Client.__init__, which connects without a timeout: Base's, which calls
            # handshake() and then starts the reader thread.
            simple_websocket.ws.Base.__init__(
                self,
                sock,
                connection_type=ConnectionType.CLIENT,
                receive_bytes=_READ_SIZE,
                thread_class=_DaemonThread,
            )
        except BaseException:
            sock.close()
            raise

    def handshake(self) -> None:
        sock = self._socket
        request = Request(
            host=self._host_header, target=self._target, extra_headers=self._extra_headers
        )
        sock.sendall(self.ws.send(request))
        rejection: RejectConnection | None = None
        body = bytearray()
        while True:
            data = sock.recv(self.receive_bytes)
            self.ws.receive_data(data or None)  # None: the arena closed the connection
            for event in self.ws.events():
                if isinstance(event, AcceptConnection):
                    self.subprotocol = event.subprotocol
                    self.connected = True
                    sock.settimeout(None)  # the reader thread waits; receive() times silence
                    self._handle_events()  # the messages that came with the 101
                    self.connected = True  # even if a close came too: its messages are read first
                    return
                if isinstance(event, RejectConnection):
                    rejection = event
                    if not event.has_body:
                        raise _rejected(event, body)
                elif isinstance(event, RejectData) and rejection is not None:
                    body += event.data
                    if event.body_finished or len(body) > _MAX_ERROR_BODY:
                        raise _rejected(rejection, body)
            if not data:
                if rejection is not None:
                    raise _rejected(rejection, body)
                raise ConnectionResetError("the arena closed the connection during the handshake")

    def _handle_events(self) -> bool:
        with self._send_lock:
            return bool(super()._handle_events())  # type: ignore[misc]  # private: not in stubs

    def send(self, data: str) -> None:  # type: ignore[override]  # only text is sent
        with self._send_lock:
            if not self.connected:
                raise ConnectionClosed(self.close_reason, self.close_message)
            self._socket.sendall(self.ws.send(TextMessage(data=data)))

    def close(self, reason: CloseReason | None = None, message: str | None = None) -> None:
        """Say goodbye if the connection is still up, and close the socket in any case (the
        library's leaves it open when the connection has already dropped)."""
        with self._send_lock, contextlib.suppress(ConnectionClosed, OSError):
            simple_websocket.ws.Base.close(self, reason, message)
        thread = self.thread
        if isinstance(thread, threading.Thread) and thread is not threading.current_thread():
            # The reader ends when the arena answers the close: a socket closed before that, with
            # data still unread, is reset, which can lose the last answers on their way.
            thread.join(_CLOSE_WAIT_S)
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)  # wakes the reader thread, which ends
        self._socket.close()


def _rejected(event: RejectConnection, body: bytearray) -> _RefusedError:
    retry_after = next(
        (v.decode("latin-1") for n, v in event.headers if n.lower() == b"retry-after"), ""
    )
    return _RefusedError(event.status_code, bytes(body).decode("utf-8", "replace"), retry_after)


# -- shared helpers ------------------------------------------------------------------------------


def _session(token: str, pool_size: int) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    adapter = HTTPAdapter(pool_connections=1, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _lane_of(body: str) -> tuple[str, int] | None:
    """The match and seat a request is for, if it names them.

    A seat's requests are handled one after the other, in the arena's order: a push bot gets
    them in that order too, since the arena waits for each answer (a notice's too) before it
    sends the next. Without this a ``hand_end`` could reach the bot after the next hand's first
    decision, or after ``match_end``. Requests of other seats and matches never wait.
    """
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    match_id, seat = message.get("match_id"), message.get("seat")
    if isinstance(match_id, str) and isinstance(seat, int) and not isinstance(seat, bool):
        return match_id, seat
    return None


def _log_refused_answer(message: Mapping[str, Any]) -> None:
    """A WebSocket's ``refused`` message: logged as a refused POST is."""
    status, error = message.get("status"), message.get("error", "")
    what = f"{status} {error}".strip() if isinstance(status, int) else str(error or "refused")
    logger.warning(
        "request %s: the arena did not take the answer (%s): %s",
        message.get("id"), what, message.get("message", "(no message)"),
    )  # fmt: skip


def _error_of(status: int, text: str) -> tuple[str, str, bool]:
    """The status, error code and message of the arena's JSON error (or the text of another
    error), for the logs, and whether it was the arena's: ``("401 unauthorized", "...", True)``."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return f"{status} {data.get('error', '')}".strip(), data["message"], True
    text = text.strip()[:_MAX_ERROR_TEXT]
    return str(status), text or "(no message)", False


def _retry_after(value: str) -> float | None:
    """A ``Retry-After`` header in seconds (it may be a number of seconds or an HTTP date)."""
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)

"""The two ways a pull bot holds its connection to the arena (:mod:`bot_sdk.connect`): a channel
opens the connection, reads the arena's messages from it and sends the bot's answers back.

- :class:`WebSocketChannel` (``websocket``, the default): one WebSocket carries the messages and
  the answers, so an answer goes back on the same connection, which saves an HTTP request per
  decision.
- :class:`StreamChannel` (``stream``): an NDJSON stream read over HTTP, each answer POSTed, for a
  proxy or firewall that blocks WebSockets.

Both meet :class:`Connection`; everything else (handling the requests, verification, back-off,
refusals, byes) is :class:`~bot_sdk.connect.PullClient`'s, the same for both.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http import HTTPStatus
from typing import Any, Literal, Protocol, cast, get_args
from urllib.parse import urlsplit

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

from bot_sdk.server import MAX_BODY_BYTES

# The pull client's one log, as it was before the channels had a module of their own: an
# operator's logging set up for bot_sdk.connect covers the channels too.
logger = logging.getLogger("bot_sdk.connect")

Channel = Literal["websocket", "stream"]
"""How a pull bot talks to the arena: see :mod:`bot_sdk.connect`."""
CHANNELS: tuple[Channel, ...] = get_args(Channel)
NDJSON = "application/x-ndjson"
MAX_LINE_BYTES = 8 * MAX_BODY_BYTES
"""The longest message read: a request whose body is at the served bot's limit, escaped as a
JSON string. A longer one is skipped."""
_NOT_THE_ARENA_HINT = (
    "not the arena's answer: a proxy or firewall that blocks WebSockets? try --channel stream"
)
_READ_SIZE = 64 * 1024
_MAX_ERROR_TEXT = 300
_MAX_ERROR_BODY = 64 * 1024
_POLL_S = 0.1
"""How often a WebSocket reader looks whether :meth:`~bot_sdk.connect.PullClient.stop` was
called."""
_CLOSE_WAIT_S = 1.0
"""How long closing a WebSocket waits for the arena to answer the close."""


class ConnectRefusedError(Exception):
    """The arena answered the connection with an HTTP error instead of opening it: its status,
    the body's text and ``Retry-After``. ``hint`` says what to check when the body is not the
    arena's JSON error."""

    def __init__(self, status: int, text: str, retry_after: str = "", hint: str = "") -> None:
        super().__init__(f"{status}: {text[:_MAX_ERROR_TEXT]}")
        self.status, self.text, self.retry_after, self.hint = status, text, retry_after, hint


class CannotConnectError(Exception):
    """No connection was opened, for a reason other than the arena's refusal."""

    def __init__(self, why: str, *, refused: bool = False) -> None:
        super().__init__(why)
        self.why, self.refused = why, refused


class DisconnectedError(Exception):
    """The open connection ended, broke or fell silent: why."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Connection(Protocol):
    """What the channels do differently: open a connection, read its messages, send an answer.
    Everything else (handling the requests, verification, back-off, refusals, byes) is
    :class:`~bot_sdk.connect.PullClient`'s, the same for both."""

    name: Channel

    def open(self, silence_s: float) -> None:
        """Open a connection; if none opens, raise :class:`ConnectRefusedError` or
        :class:`CannotConnectError`."""

    def messages(self) -> Iterator[tuple[str | bytes, float]]:
        """The open connection's messages (empty for a keep-alive), each with
        ``time.monotonic()`` when it was read, until it ends: then raise
        :class:`DisconnectedError`."""
        ...  # pragma: no cover

    def set_silence(self, seconds: float) -> None:
        """Take the connection for dead after ``seconds`` without a message."""

    def send_answer(self, request_id: str, answer: bytes) -> None:
        """Send an answer from any thread; log, never raise, if it cannot be sent."""

    def interrupt(self) -> None:
        """Make :meth:`messages` end soon: from :meth:`~bot_sdk.connect.PullClient.stop`, so it
        takes no lock."""

    def disconnect(self) -> None:
        """Close the connection, if one is open."""

    def close(self) -> None:
        """Close the connection and free everything else."""


# -- the NDJSON stream ---------------------------------------------------------------------------


class StreamChannel:
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
        self._streams = authorized_session(token, 1)
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
            raise CannotConnectError(f"cannot connect to {self._url('stream')}: {exc}") from None
        if response.status_code != HTTPStatus.OK:
            with response:
                raise ConnectRefusedError(
                    response.status_code, response.text, response.headers.get("Retry-After", "")
                )
        content_type = response.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != NDJSON:
            response.close()
            logger.error(
                "%s answered %s, not an NDJSON stream: is --arena the arena's address?",
                response.url, content_type or "no Content-Type",
            )  # fmt: skip
            raise CannotConnectError(f"not a stream ({content_type})", refused=True)
        self._silence_s = silence_s
        self._response = response
        self._raw = cast(urllib3.BaseHTTPResponse, response.raw)

    def messages(self) -> Iterator[tuple[str | bytes, float]]:
        raw = self._raw
        if raw is None:
            raise DisconnectedError("not connected")
        try:
            yield from _lines(raw)
        except urllib3.exceptions.ReadTimeoutError:
            raise DisconnectedError(f"nothing from the arena for {self._silence_s:g} s") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise DisconnectedError(f"the stream broke ({exc})") from None
        raise DisconnectedError("the arena ended the stream")

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
            what, message, _ = error_of(response.status_code, response.text)
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


class WebSocketChannel:
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
        except ConnectRefusedError as refusal:
            if refusal.status < 400:  # a web server, not the arena's WebSocket
                logger.error(
                    "%s answered %d, not a WebSocket: is --arena the arena's address?",
                    self._url, refusal.status,
                )  # fmt: skip
                why = f"not a WebSocket ({refusal.status})"
                raise CannotConnectError(why, refused=True) from None
            refusal.hint = _NOT_THE_ARENA_HINT
            raise
        except ProtocolError as exc:
            why = f"{self._url} is not a WebSocket: {exc}"
            raise CannotConnectError(why, refused=True) from None
        except (OSError, simple_websocket.ConnectionError) as exc:
            raise CannotConnectError(f"cannot connect to {self._url}: {exc}") from None
        self._silence_s = silence_s
        self._ws = ws

    def messages(self) -> Iterator[tuple[str | bytes, float]]:
        ws = self._ws
        if ws is None:
            raise DisconnectedError("not connected")
        last = time.monotonic()
        while not self._stop.is_set():
            wait = min(_POLL_S, last + self._silence_s - time.monotonic())
            if wait <= 0:
                raise DisconnectedError(f"nothing from the arena for {self._silence_s:g} s")
            try:
                data = ws.receive(timeout=wait)
            except ConnectionClosed as closed:
                raise DisconnectedError(_why_closed(closed)) from None
            if data is None:
                continue  # nothing yet
            last = time.monotonic()
            if len(data) > MAX_LINE_BYTES:
                logger.error("skipped a message longer than %d bytes", MAX_LINE_BYTES)
                continue
            yield data, last
        raise DisconnectedError("stopped")

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


def ws_url(url: str) -> str:
    """The WebSocket address of an HTTP one: ``http`` becomes ``ws``, ``https`` ``wss``.

    >>> ws_url("https://arena.example/api/bots/b1/ws")
    'wss://arena.example/api/bots/b1/ws'
    >>> ws_url("http://127.0.0.1:8000/api/bots/b1/ws")
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

    - The handshake reads a refusal's headers and body and raises :class:`ConnectRefusedError`: the
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


def _rejected(event: RejectConnection, body: bytearray) -> ConnectRefusedError:
    retry_after = next(
        (v.decode("latin-1") for n, v in event.headers if n.lower() == b"retry-after"), ""
    )
    return ConnectRefusedError(
        event.status_code, bytes(body).decode("utf-8", "replace"), retry_after
    )


# -- shared with the pull client -----------------------------------------------------------------


def authorized_session(token: str, pool_size: int) -> requests.Session:
    """A session that sends the bot's token with each request and keeps up to ``pool_size``
    connections alive."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    adapter = HTTPAdapter(pool_connections=1, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def error_of(status: int, text: str) -> tuple[str, str, bool]:
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

"""A fake arena on a loopback port for the pull client's tests: the bot's two channels (the
NDJSON stream with its POSTed answers, and the WebSocket that carries both ways) and its
verification, as the pull transport's wire format has them, recording every answer the bot
sends."""

from __future__ import annotations

import contextlib
import itertools
import json
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

import simple_websocket

from bot_sdk.protocol import Message, decode, encode, hello_request, parse_hello_answer
from bot_sdk.signing import sign

SECRET = "pull-secret"
TOKEN = "gzt_test-token"
BOT_ID = "bot_1"
WAIT_S = 3.0
"""The longest a test waits for something that should happen at once."""


@dataclass
class Offered:
    """A request sent over the stream that waits for the bot's answer."""

    id: str
    reply: bool
    body: bytes
    secret: str | None


@dataclass
class Answer:
    """One answer of the bot: a POST to an answer URL or an ``answer`` message on the WebSocket
    (``via``), and the client port it came from."""

    id: str
    body: bytes
    port: int
    via: str

    @property
    def message(self) -> Any:
        return decode(self.body)


@dataclass
class Refusal:
    """How the next stream request is refused."""

    status: int
    error: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """A body that is not the arena's JSON error (a proxy's page, say), sent instead."""


class _Control:
    def __init__(self, name: str) -> None:
        self.name = name


BREAK = _Control("break")
"""Cut the connection without ending the chunked body (or closing the WebSocket)."""
END = _Control("end")
"""End the stream's body (or close the WebSocket) cleanly, without a bye."""
STALL = _Control("stall")
"""Send nothing more, not even keep-alives, and keep the connection open."""


class FakeArena:
    """The arena's side of the pull transport for one bot.

    A request offered while the bot is connected goes out on its stream; requests that wait
    for an answer are sent again on the next stream, re-signed, as the arena does. ``lost``
    ids have their answers recorded but not taken (as if lost on the way), so they stay
    waiting; ``refused_answers`` ids are answered with an error (on the WebSocket, a
    ``refused`` message). ``ws_other`` records whatever the bot sends on a WebSocket that is not
    a well-formed answer.
    """

    def __init__(
        self, *, status: str = "active", heartbeat_s: float = 0.2, channel: str = "websocket"
    ) -> None:
        self.channel = channel
        """The channel the tests' clients use; the fake serves both."""
        self.status = status
        self.heartbeat_s = heartbeat_s
        self.keep_alives = True
        """Whether to send a keep-alive every ``heartbeat_s`` while idle (the welcome still
        says ``heartbeat_s`` when not)."""
        self.changed = threading.Condition()
        self.waiting: dict[str, Offered] = {}
        self.answered: set[str] = set()
        self.answers: list[Answer] = []
        self.attempts: list[float] = []
        """``time.monotonic()`` of each stream request, refused or not."""
        self.connections = 0
        self.refusals: list[Refusal] = []
        self.byes_after_welcome = 0
        """The next streams to close with ``bye shutdown`` right after their welcome."""
        self.lost: set[str] = set()
        self.refused_answers: dict[str, tuple[int, str]] = {}
        self.verify_calls = 0
        self.ws_other: list[str | bytes] = []
        self.closed = False
        self._outbox: queue.Queue[bytes | _Control] | None = None
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.arena = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name="fake-arena",
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @contextmanager
    def running(self) -> Iterator[FakeArena]:
        self._thread.start()
        try:
            yield self
        finally:
            self.closed = True
            self._server.shutdown()
            self._server.server_close()

    # -- what a test does -------------------------------------------------------------------------

    def offer(
        self,
        message: Message | bytes,
        *,
        reply: bool | None = None,
        secret: str | None = SECRET,
        timestamp: int | None = None,
    ) -> str:
        """Send a request over the open stream; its id. ``reply`` defaults to whether the
        message is a hello or a decision."""
        body = message if isinstance(message, bytes) else encode(message)
        if reply is None:
            reply = isinstance(message, dict) and message["type"] in {"hello", "decision"}
        request_id = f"req-{next(self._ids)}"
        offered = Offered(request_id, reply, body, secret)
        self._put(_request_line(offered, timestamp), offered if reply else None)
        return request_id

    def ask(self, message: Message) -> Any:
        """Offer a request and wait for the bot's answer."""
        return self.answer(self.offer(message))

    def send(self, line: Message | str | bytes | _Control) -> None:
        """Send a line (or a control) over the open connection, waiting for one to be open: on
        the WebSocket, a line is a text message."""
        if isinstance(line, _Control | bytes):
            self._put(line)
        else:
            self._put((line if isinstance(line, str) else json.dumps(line)).encode() + b"\n")

    def _put(self, item: bytes | _Control, waiting: Offered | None = None) -> None:
        """Queue ``item`` on the open stream, and note that ``waiting`` waits for its answer:
        both at once, so that a stream opening meanwhile sends it once, not twice."""
        with self.changed:
            if not self.changed.wait_for(lambda: self._outbox is not None, WAIT_S):
                raise TimeoutError("the bot is not connected")
            assert self._outbox is not None
            if waiting is not None:
                self.waiting[waiting.id] = waiting
            self._outbox.put(item)

    def answers_to(self, request_id: str) -> list[Answer]:
        with self.changed:
            return [a for a in self.answers if a.id == request_id]

    def answer(self, request_id: str, timeout: float = WAIT_S) -> Any:
        """The first answer POSTed for ``request_id``, waiting for it."""
        if not self.wait_for(lambda: bool(self.answers_to(request_id)), timeout):
            raise TimeoutError(f"no answer to {request_id}")
        return self.answers_to(request_id)[0].message

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    # -- the handlers' side -----------------------------------------------------------------------

    def _open_stream(self) -> tuple[queue.Queue[bytes | _Control], list[Offered], bool]:
        outbox: queue.Queue[bytes | _Control] = queue.Queue()
        with self.changed:
            self.connections += 1
            self._outbox = outbox
            bye = self.byes_after_welcome > 0
            self.byes_after_welcome -= bye
            self.changed.notify_all()
            return outbox, list(self.waiting.values()), bye

    def _close_stream(self, outbox: queue.Queue[bytes | _Control]) -> None:
        with self.changed:
            if self._outbox is outbox:
                self._outbox = None
            self.changed.notify_all()

    def _take_answer(
        self, request_id: str, body: bytes, port: int, via: str
    ) -> tuple[int, Message | None]:
        with self.changed:
            self.answers.append(Answer(request_id, body, port, via))
            self.changed.notify_all()
            if request_id in self.refused_answers:
                status, message = self.refused_answers[request_id]
                return status, _error(status, "conflict", message)
            if request_id in self.lost:
                return 204, None
            if request_id in self.answered:
                return 409, _error(409, "conflict", "already answered")
            if self.waiting.pop(request_id, None) is None:
                return 404, _error(404, "not_found", f"no request {request_id} is waiting")
            self.answered.add(request_id)
            return 204, None

    def _other(self, data: str | bytes) -> None:
        with self.changed:
            self.ws_other.append(data)
            self.changed.notify_all()

    def _verify(self) -> tuple[int, Message]:
        with self.changed:
            self.verify_calls += 1
        request_id = self.offer(hello_request())
        try:
            parse_hello_answer(encode(self.answer(request_id)))
        except (TimeoutError, ValueError) as exc:
            return 422, _error(422, "unverified", f"the bot's hello failed: {exc}")
        self.status = "active"
        return 200, {"id": BOT_ID, "status": "active"}


def _request_line(offered: Offered, timestamp: int | None = None) -> bytes:
    headers = {}
    if offered.secret is not None:
        stamp = int(time.time()) if timestamp is None else timestamp
        headers = sign(offered.secret, offered.body, stamp)
    line = {
        "type": "request",
        "id": offered.id,
        "reply": offered.reply,
        "headers": headers,
        "body": offered.body.decode("utf-8"),
    }
    return json.dumps(line).encode() + b"\n"


def _error(status: int, error: str, message: str) -> Message:
    return {"status": status, "error": error, "message": message}


class _Sink(Protocol):
    """Where a connection's lines go: the chunked stream or the WebSocket."""

    def line(self, data: bytes) -> None: ...
    def keep_alive(self) -> None: ...
    def end(self) -> None: ...


class _ChunkedSink:
    def __init__(self, handler: _Handler) -> None:
        self._handler = handler

    def line(self, data: bytes) -> None:
        self._handler._chunk(data)

    def keep_alive(self) -> None:
        self._handler._chunk(b"\n")

    def end(self) -> None:
        self._handler._chunk(b"")


class _WebSocketSink:
    def __init__(self, ws: simple_websocket.Server) -> None:
        self._ws = ws

    def line(self, data: bytes) -> None:
        self._ws.send(data.removesuffix(b"\n").decode())

    def keep_alive(self) -> None:
        self._ws.send("")

    def end(self) -> None:
        self._ws.close()


class _DaemonThread(threading.Thread):
    def __init__(self, target: Callable[..., Any]) -> None:
        super().__init__(target=target, daemon=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked streams and kept-alive answers

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, the body waits for the client's
        # delayed ACK of the headers (40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def arena(self) -> FakeArena:
        arena: FakeArena = self.server.arena  # type: ignore[attr-defined]
        return arena

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(
        self, status: int, body: Message | bytes | None, headers: dict[str, str] | None = None
    ) -> None:
        raw = isinstance(body, bytes)
        data = (
            body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
        )
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "text/html" if raw else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {TOKEN}":
            return True
        self._reply(401, _error(401, "unauthorized", "unknown or revoked token"))
        return False

    def _parts(self) -> list[str]:
        parts = self.path.strip("/").split("/")
        if parts[:3] != ["api", "bots", BOT_ID]:
            return []
        return parts[3:]

    def do_GET(self) -> None:
        parts = self._parts()
        if parts not in (["stream"], ["ws"]):
            self._reply(404, _error(404, "not_found", "no such bot"))
            return
        arena = self.arena
        with arena.changed:
            arena.attempts.append(time.monotonic())
            refusal = arena.refusals.pop(0) if arena.refusals else None
            arena.changed.notify_all()
        if not self._authorized():
            return
        if refusal is not None:
            self._reply(
                refusal.status,
                refusal.raw or _error(refusal.status, refusal.error, refusal.message),
                refusal.headers,
            )
            return
        if parts == ["ws"]:
            self._websocket()
            return
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        outbox, waiting, bye = arena._open_stream()
        try:
            self._stream(_ChunkedSink(self), outbox, waiting, bye)
        except OSError:
            pass  # the bot hung up
        finally:
            arena._close_stream(outbox)

    def _websocket(self) -> None:
        """The WebSocket channel: simple_websocket's server on this handler's socket, given the
        request's headers as the WSGI environ it expects (werkzeug's key for the socket)."""
        self.close_connection = True
        if self.headers.get("Upgrade", "").lower() != "websocket":
            self._reply(400, _error(400, "bad_request", "not a WebSocket upgrade"))
            return
        environ: dict[str, Any] = {"werkzeug.socket": self.connection}
        for name, value in self.headers.items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        ws = simple_websocket.Server(environ, thread_class=_DaemonThread)
        arena = self.arena
        outbox, waiting, bye = arena._open_stream()
        reader = threading.Thread(
            target=self._read_answers, args=(ws, outbox), daemon=True, name="fake-arena-ws"
        )
        reader.start()
        try:
            self._stream(_WebSocketSink(ws), outbox, waiting, bye)
        except (OSError, simple_websocket.ConnectionClosed):
            pass  # the bot hung up
        finally:
            arena._close_stream(outbox)
            with contextlib.suppress(OSError, simple_websocket.ConnectionClosed):
                ws.close()
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            reader.join(WAIT_S)

    def _read_answers(
        self, ws: simple_websocket.Server, outbox: queue.Queue[bytes | _Control]
    ) -> None:
        """Take the answers sent on the WebSocket; a refusal goes back as a ``refused``."""
        arena, port = self.arena, self.client_address[1]
        while True:
            try:
                data = ws.receive()
            except simple_websocket.ConnectionClosed:
                return
            try:
                message = json.loads(data) if isinstance(data, str) else None
            except ValueError:
                message = None
            if (
                not isinstance(message, dict)
                or set(message) != {"type", "id", "body"}
                or message["type"] != "answer"
                or not isinstance(message["id"], str)
                or not isinstance(message["body"], str)
            ):
                arena._other(data or "")
                continue
            _, error = arena._take_answer(
                message["id"], message["body"].encode(), port, "websocket"
            )
            if error is not None:
                refused = {"type": "refused", "id": message["id"], **error}
                outbox.put(json.dumps(refused).encode() + b"\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _stream(
        self,
        sink: _Sink,
        outbox: queue.Queue[bytes | _Control],
        waiting: list[Offered],
        bye: bool,
    ) -> None:
        arena = self.arena
        welcome = {
            "type": "welcome",
            "bot_id": BOT_ID,
            "status": arena.status,
            "heartbeat_s": arena.heartbeat_s,
            "protocol": "gongzhu-bot/1",
        }
        sink.line(json.dumps(welcome).encode() + b"\n")
        for offered in waiting:  # sent again, re-signed
            sink.line(_request_line(offered))
        if bye:
            sink.line(b'{"type": "bye", "reason": "shutdown", "message": "restarting"}\n')
            sink.end()
            return
        stalled = False
        while not arena.closed:
            try:
                item = outbox.get(timeout=arena.heartbeat_s)
            except queue.Empty:
                if not stalled and arena.keep_alives:
                    sink.keep_alive()
                continue
            if item is BREAK:
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if item is END:
                sink.end()
                return
            if item is STALL:
                stalled = True
            elif isinstance(item, bytes) and not stalled:
                sink.line(item)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        parts = self._parts()
        if not self._authorized():
            return
        if len(parts) == 2 and parts[0] == "answers":
            status, answer = self.arena._take_answer(parts[1], body, self.client_address[1], "post")
            self._reply(status, answer)
        elif parts == ["verify-endpoint"]:
            self._reply(*self.arena._verify())
        else:
            self._reply(404, _error(404, "not_found", "no such route"))

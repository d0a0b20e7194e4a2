"""The bot transport itself (``arena.transport``) against scripted servers on loopback: the size
cap at its edge, the deadline between chunks, no redirects, the kept-alive connection and its one
retry, the hello's answers, the connect path to checked addresses, and the messages a bot author
reads. Clocks are scripted where a test needs time to pass; nothing waits on a sleep."""

from __future__ import annotations

import errno
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena.alarms import ALARMS, Alarm
from arena.bot_connection import BotConnection, connect_public
from arena.transport import (
    MAX_ANSWER_BYTES,
    BotTransport,
    DeadlineError,
    HelloError,
    TooLargeError,
    TransportError,
    WrongSecretError,
    _Watchdog,
    connection_reason,
    excerpt,
    handshake,
    with_secret_hint,
)
from bot_sdk.protocol import encode, hello_answer, hello_request
from bot_sdk.signing import verify
from replays.log import Connection
from tests.tls_support import self_signed
from tests.workers.workers_support import read_request

HELLO = encode(hello_answer("probe", "1.2"))
PUBLIC = "93.184.216.34"
"""A public address: the tests resolve names to it and connect it to a loopback bot."""

Handle = Callable[[socket.socket, int], bool]
"""Answers request ``n`` (counted from 1 over all connections) on the connection; True keeps the
connection open for the next request."""


def response(body: bytes = b"", status: str = "200 OK", **headers: str) -> bytes:
    """A whole HTTP/1.1 answer with its Content-Length."""
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def wait_for_close(conn: socket.socket) -> None:
    """Block until the client closes or shuts the connection down."""
    while conn.recv(65536):
        pass


class Bot:
    """A bot on a loopback port that hands each request to ``handle``; it counts the
    connections it accepted and keeps each request's (connection number, body)."""

    def __init__(self, handle: Handle, tls: ssl.SSLContext | None = None) -> None:
        self.handle = handle
        self.tls = tls
        self.connections = 0
        self.requests: list[tuple[int, bytes]] = []
        self._lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/bot"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                self.connections += 1
                number = self.connections
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            while True:
                body = read_request(conn)
                with self._lock:
                    self.requests.append((number, body))
                    count = len(self.requests)
                if not self.handle(conn, count):
                    return
        except OSError:
            return  # the client closed the connection
        finally:
            conn.close()


@contextmanager
def bot(handle: Handle, tls: ssl.SSLContext | None = None) -> Iterator[Bot]:
    running = Bot(handle, tls)
    try:
        yield running
    finally:
        running.listener.close()


def answers(*raw: bytes) -> Handle:
    """Answers request n with ``raw[n - 1]`` and keeps the connection open."""

    def handle(conn: socket.socket, n: int) -> bool:
        conn.sendall(raw[n - 1])
        return True

    return handle


@contextmanager
def transport(url: str, **options: Any) -> Iterator[BotTransport]:
    client = BotTransport(url, ["s3cret"], **{"allow_private": True, **options})
    try:
        yield client
    finally:
        client.close()


def closed_port() -> int:
    """A loopback port nobody listens on: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TlsPair = tuple[ssl.SSLContext, ssl.SSLContext]
"""A server's TLS context, and a client's that trusts its certificate."""


def tls_pair(host: str, directory: Path) -> TlsPair:
    """A server TLS context with a self-signed certificate for ``host`` (an address or a
    name), and a client context that trusts it."""
    made = self_signed(host, directory)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(made.cert, made.key)
    return server, ssl.create_default_context(cafile=made.cert)


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsPair:
    """TLS for 127.0.0.1."""
    return tls_pair("127.0.0.1", tmp_path_factory.mktemp("tls"))


class Net:
    """The host names in ``names`` resolve to their public addresses; a connection to an
    address in ``routes`` goes to that loopback port instead (or fails with the error given
    there). Each attempt to a routed address is kept with the socket's timeout and TCP_NODELAY
    at that moment."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {}
        self.routes: dict[str, int | OSError] = {}
        self.attempts: list[tuple[str, float | None, int]] = []

    def resolve(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host not in self.names:
            return GETADDRINFO(host, port, *args, **kwargs)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))
            for address in self.names[host]
        ]

    def connect_function(self) -> Callable[[socket.socket, Any], None]:
        """:meth:`connect` as a function, to stand for ``socket.socket.connect``."""

        def connect(sock: socket.socket, address: Any) -> None:
            self.connect(sock, address)

        return connect

    def connect(self, sock: socket.socket, address: Any) -> None:
        route = self.routes.get(address[0]) if isinstance(address, tuple) else None
        if route is None:
            return CONNECT(sock, address)
        nodelay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        self.attempts.append((address[0], sock.gettimeout(), nodelay))
        if isinstance(route, OSError):
            raise route
        return CONNECT(sock, ("127.0.0.1", route))


GETADDRINFO, CONNECT = socket.getaddrinfo, socket.socket.connect


def routed_net(monkeypatch: pytest.MonkeyPatch) -> Net:
    """A :class:`Net` that name resolution and connections go through for the test."""
    routed = Net()
    monkeypatch.setattr(socket, "getaddrinfo", routed.resolve)
    monkeypatch.setattr(socket.socket, "connect", routed.connect_function())
    return routed


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Net:
    return routed_net(monkeypatch)


def public_bot(net: Net, running: Bot, host: str = "play.bot.example") -> str:
    """``running``'s URL under a public name (the transport checks it and connects to it)."""
    net.names[host] = [PUBLIC]
    net.routes[PUBLIC] = running.port
    return f"http://{host}:{running.port}/bot"


# -- the size cap ----------------------------------------------------------------------------------


def test_an_answer_of_exactly_64_kib_is_read_and_one_byte_more_is_refused() -> None:
    full, over = b"x" * 64 * 1024, b"x" * (64 * 1024 + 1)
    with bot(answers(response(full), response(over))) as running, transport(running.url) as t:
        assert t.post(b"{}", 5.0) == (200, None, full)
        with pytest.raises(TooLargeError):
            t.post(b"{}", 5.0)


def test_an_endless_answer_is_refused_at_the_cap_without_waiting_for_its_end() -> None:
    """The bot announces 10 MB, sends a little over the cap and then nothing: the transport
    stops reading at the cap (at once, long before the deadline) instead of waiting for the
    rest."""

    def endless(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n")
        conn.sendall(b"x" * (MAX_ANSWER_BYTES + 4096))
        wait_for_close(conn)
        return False

    with (
        bot(endless) as running,
        transport(running.url, clock=lambda: 0.0) as t,
        pytest.raises(TooLargeError),
    ):
        t.post(b"{}", 5.0)  # the clock stands still: only the watchdog could end a wait


# -- the deadline ----------------------------------------------------------------------------------


class Ticking:
    """A clock 100 s later each time it is read: the transport reads it once for the deadline,
    once before sending, then once per chunk of the answer (or once on a failure)."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return 100.0 * (self.reads - 1)


@pytest.mark.parametrize("seconds", [250.0, 300.0], ids=["passed", "reached"])
def test_the_deadline_is_checked_after_every_kilobyte_of_the_answer(seconds: float) -> None:
    """Read at 0 (deadline), 100 (sent), then one read per KiB chunk: 200 for the first, 300
    for the second. An answer of 1024 bytes is one chunk, in time; one of 1025 bytes needs a
    second chunk, read when the deadline has passed (250) or is just reached (300)."""
    one, two = b"a" * 1024, b"b" * 1025
    with bot(answers(response(one), response(two))) as running:
        with transport(running.url, clock=Ticking()) as t:
            assert t.post(b"{}", seconds) == (200, None, one)
        with transport(running.url, clock=Ticking()) as t, pytest.raises(DeadlineError):
            t.post(b"{}", seconds)
    assert len(running.requests) == 2


@pytest.mark.parametrize("seconds", [150.0, 200.0], ids=["passed", "reached"])
@pytest.mark.parametrize("size", [1, 1024])
def test_an_answer_received_whole_at_or_after_the_deadline_is_late(
    size: int, seconds: float
) -> None:
    """Read at 0 (the deadline), 100 (sent), then 200 for the answer's one chunk, however small
    and however it was read: past the deadline, or just at it."""
    with (
        bot(answers(response(b"a" * size))) as running,
        transport(running.url, clock=Ticking()) as t,
        pytest.raises(DeadlineError),
    ):
        t.post(b"{}", seconds)


@pytest.mark.parametrize("seconds", [0.0, -0.5], ids=["none-left", "overdue"])
@pytest.mark.parametrize("kept_alive", [False, True], ids=["new", "kept-alive"])
def test_a_call_with_no_time_left_is_not_sent(
    seconds: float, kept_alive: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not even on a connection already open, where a write could still go out before the
    watchdog (here, one that would ring only after a minute) shut it."""
    with bot(answers(response(HELLO))) as running, transport(running.url, clock=lambda: 7.0) as t:
        if kept_alive:
            assert t.post(b"in time", 5.0) == (200, None, HELLO)
        real = ALARMS.set
        monkeypatch.setattr(ALARMS, "set", lambda seconds, call: real(60.0, call))
        with pytest.raises(DeadlineError):
            t.post(b"late", seconds)
        assert t.exchange.bytes_sent == 0
    assert running.requests == ([(1, b"in time")] if kept_alive else [])


def _hang_up(conn: socket.socket, n: int) -> bool:
    return False  # close without answering


@pytest.mark.parametrize(
    ("seconds", "raised"),
    [(200.0, DeadlineError), (150.0, DeadlineError), (1000.0, TransportError)],
    ids=["reached", "passed", "in-time"],
)
def test_a_failure_once_the_deadline_is_reached_is_a_deadline_error(
    seconds: float, raised: type[Exception]
) -> None:
    """The bot hangs up a new connection without answering; the clock is read at 0
    (deadline), 100 (sent) and 200 (the failure)."""
    with (
        bot(_hang_up) as running,
        transport(running.url, clock=Ticking()) as t,
        pytest.raises(raised),
    ):
        t.post(b"{}", seconds)
    assert len(running.requests) == 1


def test_an_answer_without_a_length_cut_at_the_deadline_is_not_taken_as_complete() -> None:
    """The bot sends its headers, no Content-Length, then nothing: the answer would end when
    the connection closes. The watchdog shuts it at the deadline; that end is not an answer."""

    def stalled(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
        wait_for_close(conn)
        return False

    with bot(stalled) as running, transport(running.url) as t, pytest.raises(DeadlineError):
        t.post(b"{}", 0.3)


def test_the_watchdog_shuts_the_connection_in_flight_when_it_fires() -> None:
    watchdog = _Watchdog()
    ours, theirs = socket.socketpair()
    theirs.settimeout(10)  # a watchdog that does not fire fails here instead of hanging
    with ours, theirs:
        watchdog.attach(ours)
        watchdog._fire()
        assert watchdog.fired
        assert theirs.recv(1) == b""  # shut down: the peer sees the end at once
        late, peer = socket.socketpair()
        peer.settimeout(10)
        with late, peer:
            watchdog.attach(late)  # attached after the deadline: shut at once too
            assert peer.recv(1) == b""


def test_a_watchdog_firing_on_a_closed_connection_is_quiet() -> None:
    watchdog = _Watchdog()
    closed = socket.socket()
    closed.close()
    watchdog.attach(closed)
    watchdog._fire()
    watchdog.attach(closed)
    assert watchdog.fired


def test_each_call_s_watchdog_is_stopped_with_it_and_never_holds_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    armed: list[Alarm] = []
    real = ALARMS.set

    def recorded(seconds: float, call: Callable[[], None]) -> Alarm:
        armed.append(real(seconds, call))
        return armed[-1]

    monkeypatch.setattr(ALARMS, "set", recorded)
    with bot(answers(response(HELLO), response(HELLO))) as running, transport(running.url) as t:
        t.post(b"{}", 60.0)
        t.post(b"{}", 60.0)
    assert len(armed) == 2
    assert all(alarm.done for alarm in armed)  # cancelled, not left to fire
    assert ALARMS._thread is not None and ALARMS._thread.daemon


# -- the kept-alive connection and its one retry ---------------------------------------------------


@pytest.fixture(params=["http", "https"])
def scheme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextmanager
def scheme_bot(scheme: str, tls: TlsPair, handle: Handle) -> Iterator[tuple[Bot, BotTransport]]:
    """A bot over ``scheme``, and a transport to it (trusting the test certificate)."""
    with (
        bot(handle, tls[0] if scheme == "https" else None) as running,
        transport(running.url.replace("http:", f"{scheme}:"), tls=tls[1]) as t,
    ):
        yield running, t


def test_a_stale_kept_alive_connection_is_retried_once_on_a_new_one(
    scheme: str, tls: TlsPair
) -> None:
    def handle(conn: socket.socket, n: int) -> bool:
        if n == 2:
            return False  # the bot closed the kept-alive connection: no answer
        conn.sendall(response(HELLO))
        return True

    with scheme_bot(scheme, tls, handle) as (running, t):
        assert t.post(b"first", 5.0)[0] == 200
        assert t.post(b"second", 5.0) == (200, None, HELLO)
    assert running.requests == [(1, b"first"), (1, b"second"), (2, b"second")]


def test_a_kept_alive_connection_that_began_an_answer_is_not_retried() -> None:
    """Only a connection closed before any answer came is stale: one closed in the middle of
    an answer is a fault, and the request is not sent again."""

    def handle(conn: socket.socket, n: int) -> bool:
        conn.sendall(response(HELLO) if n == 1 else b"HTTP/1.1 2")
        return n == 1

    with bot(handle) as running, transport(running.url) as t:
        assert t.post(b"first", 5.0)[0] == 200
        with pytest.raises(TransportError, match="the answer could not be read"):
            t.post(b"second", 5.0)
        assert (t.exchange.connection, t.exchange.retried) == (Connection.REUSED, False)
    assert running.requests == [(1, b"first"), (1, b"second")]


def test_a_request_on_a_new_connection_is_never_sent_twice(scheme: str, tls: TlsPair) -> None:
    """HTTPS included: its connection is made before the request goes out, and is new all the
    same."""
    with scheme_bot(scheme, tls, _hang_up) as (running, t), pytest.raises(TransportError):
        t.post(b"only", 5.0)
    assert running.requests == [(1, b"only")]


def test_a_refused_connection_is_tried_once(scheme: str, net: Net) -> None:
    net.names["down.bot.example"] = [PUBLIC]
    net.routes[PUBLIC] = closed_port()
    with (
        transport(f"{scheme}://down.bot.example/bot", allow_private=False) as t,
        pytest.raises(TransportError) as refused,
    ):
        t.post(b"{}", 5.0)
    assert connection_reason(refused.value).startswith("connection refused")
    assert [address for address, _, _ in net.attempts] == [PUBLIC]


def test_a_connection_the_bot_closed_while_idle_is_replaced_before_sending() -> None:
    """The bot answers, then closes the connection: the next request is not sent on it (and so
    not retried), but on a new connection, recorded as such."""
    closed = threading.Event()

    def answer_and_close(conn: socket.socket, n: int) -> bool:
        conn.sendall(response(HELLO))
        conn.close()
        closed.set()
        return False

    with bot(answer_and_close) as running, transport(running.url) as t:
        assert t.post(b"first", 5.0) == (200, None, HELLO)
        assert closed.wait(10)
        assert t.post(b"second", 5.0) == (200, None, HELLO)
        second = t.exchange
    assert running.requests == [(1, b"first"), (2, b"second")]
    assert (second.connection, second.retried) == (Connection.NEW, False)


def test_a_request_that_cannot_be_written_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def reset(sock: socket.socket, data: bytes) -> None:
        raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")

    monkeypatch.setattr(socket.socket, "sendall", reset)
    with (
        bot(answers(response(HELLO))) as running,
        transport(running.url) as t,
        pytest.raises(TransportError, match=r"^the request could not be sent: .*reset by peer"),
    ):
        t.post(b"{}", 5.0)


def test_an_answer_cut_short_of_its_length_is_not_taken() -> None:
    """The bot announces 100 bytes, sends 10 and closes the connection."""

    def cut(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
        return False

    with bot(cut) as running, transport(running.url) as t, pytest.raises(TransportError) as cut_off:
        t.post(b"{}", 5.0)
    assert "90 bytes before the length it announced" in str(cut_off.value)


def test_the_request_is_one_post_with_the_documented_headers() -> None:
    """The request as the bot reads it: the path and query as registered, the host with its
    port, JSON, no compression, the body's length and its signature."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    raw: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while not data.endswith(b'{"a":1}'):
                data += conn.recv(65536)
            raw.append(data)
            conn.sendall(response(HELLO))
            wait_for_close(conn)

    threading.Thread(target=serve, daemon=True).start()
    with listener, transport(f"http://127.0.0.1:{port}/bot?key=k%20v") as t:
        assert t.post(b'{"a":1}', 5.0) == (200, None, HELLO)
    head, _, body = raw[0].partition(b"\r\n\r\n")
    line, *fields = head.decode().split("\r\n")
    headers = dict(field.split(": ", 1) for field in fields)
    assert line == "POST /bot?key=k%20v HTTP/1.1"
    assert headers["Host"] == f"127.0.0.1:{port}"
    assert headers["Content-Type"] == "application/json"
    assert headers["Accept-Encoding"] == "identity"
    assert headers["Content-Length"] == "7" and body == b'{"a":1}'
    verify(["s3cret"], headers, body, time.time())  # raises unless signed


LONG_LABEL = "a" * 64 + ".example"
"""A host name whose first label is over DNS's 63 characters: no IDNA encoding, no address."""


@pytest.mark.parametrize(
    ("url", "target", "host", "port"),
    [
        ("http://bot.example", "/", "bot.example", 80),
        ("http://bot.example:80/play", "/play", "bot.example", 80),
        ("http://bot.example:443/play", "/play", "bot.example:443", 443),
        ("https://bot.example/play", "/play", "bot.example", 443),
        ("https://bot.example:80/play", "/play", "bot.example:80", 80),
        ("http://bot.example:8080/a b?q=1 2", "/a%20b?q=1%202", "bot.example:8080", 8080),
        ("http://[2001:db8::1]/play", "/play", "[2001:db8::1]", 80),
        ("https://[2001:db8::1]:8443/play", "/play", "[2001:db8::1]:8443", 8443),
        ("http://bücher.example/play", "/play", "xn--bcher-kva.example", 80),
        (f"http://{LONG_LABEL}/play", "/play", LONG_LABEL, 80),
    ],
)
def test_the_request_line_host_and_port_are_the_url_s(
    url: str, target: str, host: str, port: int
) -> None:
    """The port a URL leaves out is its scheme's, and the Host header names a port only where
    it is not that one."""
    connection = BotConnection(url, allow_private=False)
    assert connection.head.startswith(f"POST {target} HTTP/1.1\r\nHost: {host}\r\n")
    assert connection.port == port


def test_proxies_from_the_environment_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    with bot(answers(response(b"proxied"))) as proxy, bot(answers(response(HELLO))) as running:
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        with transport(running.url) as t:
            assert t.post(b"{}", 5.0) == (200, None, HELLO)
    assert proxy.requests == []


def test_private_addresses_are_refused_unless_allowed() -> None:
    with bot(answers(response(HELLO))) as running:
        refusing = BotTransport(running.url, ["s3cret"])
        try:
            with pytest.raises(TransportError) as refused:
                refusing.post(b"{}", 5.0)
        finally:
            refusing.close()
    assert "127.0.0.1, a private, loopback" in connection_reason(refused.value)
    assert running.connections == 0


# -- connecting to checked addresses ---------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "limit"), [(10.0, 3.0), (2.5, 2.5)], ids=["cap", "deadline"])
def test_a_connection_is_given_three_seconds_or_what_is_left_of_the_deadline(
    net: Net, seconds: float, limit: float
) -> None:
    with bot(answers(response(HELLO))) as running:
        url = public_bot(net, running)
        with transport(url, allow_private=False, clock=lambda: 0.0) as t:
            assert t.post(b"{}", seconds) == (200, None, HELLO)
    assert net.attempts == [(PUBLIC, limit, 1)]  # and TCP_NODELAY, as urllib3 sets it


def test_the_next_checked_address_is_tried_when_one_refuses(net: Net) -> None:
    second = "93.184.216.35"
    with bot(answers(response(HELLO))) as running:
        net.names["two.bot.example"] = [PUBLIC, second]
        net.routes.update({PUBLIC: closed_port(), second: running.port})
        with transport(f"http://two.bot.example:{running.port}/bot", allow_private=False) as t:
            assert t.post(b"{}", 5.0) == (200, None, HELLO)
    assert [address for address, _, _ in net.attempts] == [PUBLIC, second]


def test_every_address_refusing_raises_the_last_error(net: Net) -> None:
    second = "93.184.216.35"
    net.names["gone.bot.example"] = [PUBLIC, second]
    net.routes.update({PUBLIC: ConnectionRefusedError(), second: TimeoutError("late")})
    with pytest.raises(TimeoutError, match="late"):
        connect_public("gone.bot.example", 80, 1.0)
    assert [address for address, _, _ in net.attempts] == [PUBLIC, second]


def test_a_connection_sets_its_options_and_timeout(net: Net) -> None:
    with bot(answers()) as running:
        public_bot(net, running, "bound.bot.example")
        options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
        sock = connect_public("bound.bot.example", 80, 2.0, options)
        with sock:
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert sock.gettimeout() == 2.0
            assert sock.getpeername()[1] == running.port


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (TimeoutError("timed out"), "no connection within 3 s"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), "connection refused"),
        (
            OSError(errno.EHOSTUNREACH, "No route to host"),
            "Failed to establish a new connection: [Errno 113] No route to host",
        ),
    ],
    ids=["timeout", "refused", "unreachable"],
)
def test_a_failed_connection_says_why(net: Net, failure: OSError, reason: str) -> None:
    net.names["far.bot.example"] = [PUBLIC]
    net.routes[PUBLIC] = failure
    with (
        transport("http://far.bot.example/bot", allow_private=False, named=True) as t,
        pytest.raises(HelloError) as failed,
    ):
        t.hello(hello_request(), 5.0)
    assert str(failed.value).startswith("could not connect to the bot at http://far.bot.example")
    assert reason in str(failed.value)


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "does not resolve"),
        (
            socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
            "Failed to resolve 'dns.bot.example'",
        ),
    ],
    ids=["unknown", "temporary"],
)
def test_a_name_that_does_not_resolve_says_so(
    monkeypatch: pytest.MonkeyPatch, failure: OSError, reason: str
) -> None:
    def resolve(host: str, *args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with (
        transport("http://dns.bot.example/bot", allow_private=False, named=True) as t,
        pytest.raises(HelloError) as failed,
    ):
        t.hello(hello_request(), 5.0)
    assert reason in str(failed.value)


def test_a_name_that_cannot_be_encoded_says_it_does_not_resolve() -> None:
    with (
        transport(f"http://{LONG_LABEL}/bot", allow_private=False, named=True) as t,
        pytest.raises(HelloError) as failed,
    ):
        t.hello(hello_request(), 5.0)
    assert f"could not connect to the bot at http://{LONG_LABEL}/bot: " in str(failed.value)
    assert f"Failed to resolve '{LONG_LABEL}'" in str(failed.value)


@pytest.fixture(scope="module")
def named_tls(tmp_path_factory: pytest.TempPathFactory) -> TlsPair:
    """TLS for the name play.bot.example."""
    return tls_pair("play.bot.example", tmp_path_factory.mktemp("named"))


def test_tls_is_checked_against_the_url_s_host_name_on_the_checked_address(
    net: Net, named_tls: TlsPair
) -> None:
    """The socket connects to the address the name was checked to have; the certificate is
    verified against the name."""
    with bot(answers(response(HELLO)), named_tls[0]) as running:
        url = public_bot(net, running).replace("http:", "https:")
        with transport(url, allow_private=False, tls=named_tls[1]) as t:
            assert t.post(b"{}", 5.0) == (200, None, HELLO)
    assert [address for address, _, _ in net.attempts] == [PUBLIC]


def test_a_certificate_for_another_name_is_refused(net: Net, tls: TlsPair) -> None:
    """A certificate the client trusts, but for 127.0.0.1, not for the URL's name."""
    with bot(answers(response(HELLO)), tls[0]) as running:
        url = public_bot(net, running).replace("http:", "https:")
        with (
            transport(url, allow_private=False, tls=tls[1]) as t,
            pytest.raises(TransportError, match=r"the TLS handshake failed: .*CERTIFICATE_VERIFY"),
        ):
            t.post(b"{}", 5.0)
    assert running.requests == []


def test_a_certificate_no_trusted_authority_signed_is_refused(tls: TlsPair) -> None:
    """By default the authorities trusted are certifi's: a self-signed certificate fails."""
    with bot(answers(response(HELLO)), tls[0]) as running:
        url = running.url.replace("http:", "https:")
        with (
            transport(url) as t,
            pytest.raises(TransportError, match="certificate verify failed"),
        ):
            t.post(b"{}", 5.0)
    assert running.requests == []


@contextmanager
def dripping_proxy(port: int) -> Iterator[str]:
    """A TCP proxy on loopback in front of the bot on ``port`` that passes the bot's bytes on
    one every 20 ms; its URL (``http``)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def pipe(source: socket.socket, sink: socket.socket, drip: bool) -> None:
        try:
            while data := source.recv(65536):
                for piece in [data[i : i + 1] for i in range(len(data))] if drip else [data]:
                    sink.sendall(piece)
                    time.sleep(0.02 if drip else 0)
        except OSError:
            pass  # the arena shut the connection
        finally:
            source.close()
            sink.close()

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(("127.0.0.1", port))
            threading.Thread(target=pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, client, True), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/bot"
    finally:
        listener.close()


def test_a_tls_handshake_is_cut_at_the_call_s_deadline(
    tls: TlsPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that takes 1.5 s of a 2 s call, then the bot's side of the handshake one
    byte every 20 ms: each read is quick, and the handshake's own time limit (what was left when
    the connection began) would end it only at 3.5 s. The deadline ends it at 2 s."""
    with bot(answers(response(HELLO)), tls[0]) as running, dripping_proxy(running.port) as url:
        proxy = int(url.split(":")[2].split("/")[0])

        def slow(sock: socket.socket, address: Any) -> None:
            if address[1] == proxy:
                time.sleep(1.5)
            CONNECT(sock, address)

        monkeypatch.setattr(socket.socket, "connect", slow)
        with transport(url.replace("http:", "https:"), tls=tls[1]) as t:
            started = time.monotonic()
            with pytest.raises(DeadlineError):
                t.post(b"{}", 2.0)
            assert time.monotonic() - started < 3.0
    assert running.requests == []


# -- the hello -------------------------------------------------------------------------------------


def hello_to(*raw: bytes, timeout_s: float = 5.0) -> Any:
    """The hello answered with ``raw``: the bot's info, or the HelloError's message as its
    owner reads it (the endpoint check's)."""
    with bot(answers(*raw)) as running, transport(running.url + "?key=k", named=True) as t:
        try:
            return t.hello(hello_request(), timeout_s)
        except HelloError as error:
            return str(error).replace(running.url, "URL")


@pytest.mark.parametrize("status", ["200 OK", "299 Fine"])
def test_every_2xx_hello_answer_is_read(status: str) -> None:
    info = hello_to(response(HELLO, status))
    assert (info.name, info.version) == ("probe", "1.2")


@pytest.mark.parametrize("code", [300, 302, 399])
def test_a_3xx_hello_answer_is_a_redirect_the_arena_does_not_follow(code: int) -> None:
    message = hello_to(response(b"", f"{code} Moved", Location="https://elsewhere.example/b"))
    assert message == (
        f"the bot at URL answered HTTP {code} redirecting to https://elsewhere.example/b: the "
        "arena does not follow redirects; register the final URL"
    )
    assert hello_to(response(b"", f"{code} Moved")).startswith(
        f"the bot at URL answered HTTP {code} redirecting to ?:"
    )


@pytest.mark.parametrize("code", [199, 400, 500])
def test_other_hello_answers_are_refused_with_their_status_and_body(code: int) -> None:
    body = b"" if code < 200 else b"  nope \n"  # a 1xx answer has no body
    shown = "(empty body)" if code < 200 else "nope"
    assert hello_to(response(body, f"{code} Odd")) == (
        f"the bot at URL answered the hello with HTTP {code}: {shown}"
    )


def test_a_401_hello_answer_is_a_refused_signature_with_the_callers_hint() -> None:
    refusal = b'{"error":"unauthorized","message":"bad signature"}'
    with bot(answers(response(refusal, "401 Unauthorized"))) as running:
        with transport(running.url, named=True) as t, pytest.raises(WrongSecretError) as refused:
            t.hello(hello_request(), 5.0)
        said = with_secret_hint(refused.value, "HINT").replace(running.url, "URL")
    assert said == (
        "the bot at URL refused the hello's signature (HTTP 401: "
        '{"error":"unauthorized","message":"bad signature"}). HINT'
    )
    other = hello_to(response(b"nope", "403 Forbidden"))
    assert other == "the bot at URL answered the hello with HTTP 403: nope"


def test_a_wrong_hello_answer_says_what_is_wrong() -> None:
    message = hello_to(response(b'{"protocol": "other/9", "name": "x", "version": "1"}'))
    assert message.startswith("the bot at URL answered the hello wrongly: ")
    assert '"other/9"' in message


def test_a_hello_answer_over_the_cap_names_the_cap() -> None:
    assert hello_to(response(b" " * (MAX_ANSWER_BYTES + 1))) == (
        'the hello answer is larger than 64 KiB: answer {"protocol", "name", "version"} only'
    )


def test_a_late_hello_says_how_long_the_bot_had() -> None:
    def late(conn: socket.socket, n: int) -> bool:
        wait_for_close(conn)
        return False

    with (
        bot(late) as running,
        transport(running.url) as t,
        pytest.raises(HelloError, match=r"did not answer the hello within 0\.3 s$"),
    ):
        t.hello(hello_request(), 0.3)


def test_the_endpoint_check_is_the_hello_on_its_own_transport(net: Net) -> None:
    with bot(answers(response(HELLO))) as running:
        url = public_bot(net, running)
        info = handshake(url, ["s3cret"], timeout_s=5.0, allow_private=False)
    assert (info.name, info.version) == ("probe", "1.2")
    assert running.requests == [(1, encode(hello_request()))]


# -- what a bot author reads -----------------------------------------------------------------------


def test_the_endpoint_is_shown_to_its_owner_without_its_query_string_and_never_else() -> None:
    url = "https://bot.example:8443/play?token=secret#x"
    assert BotTransport(url, ["s"], named=True).shown == "the bot at https://bot.example:8443/play"
    assert BotTransport(url, ["s"]).shown == "the bot's endpoint"


def _chained(inner: BaseException, link: str) -> BaseException:
    outer = RuntimeError("outer")
    if link == "cause":
        outer.__cause__ = inner
    elif link == "context":
        outer.__context__ = inner
    else:
        outer = RuntimeError("outer", inner)
    return outer


@pytest.mark.parametrize("link", ["cause", "context", "argument"])
def test_the_reason_is_found_through_causes_contexts_and_arguments(link: str) -> None:
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
    deep = _chained(_chained(refused, link), link)
    assert connection_reason(deep) == "connection refused (is the bot running, on that port?)"


@pytest.mark.parametrize(
    "message", ["Name or service not known", "nodename nor servname provided, or not known"]
)
def test_an_unknown_name_is_recognised_on_linux_and_macos(message: str) -> None:
    assert connection_reason(OSError(message)) == "the host name does not resolve"


def test_an_unrecognised_reason_is_the_error_itself_cut_to_300_characters() -> None:
    assert connection_reason(RuntimeError("x" * 299)) == "x" * 299
    assert connection_reason(RuntimeError("y" * 400)) == "y" * 300


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (b"", "(empty body)"),
        (b" \r\n\t ", "(empty body)"),
        (b"  Traceback: boom\n", "Traceback: boom"),
        (b"\xff ok", "\ufffd ok"),
        (b"a" * 300, "a" * 300),
        (b"b" * 301, "b" * 300 + "…"),
        (b"c" * 299, "c" * 299),
    ],
    ids=["empty", "blank", "stripped", "not-utf8", "at-limit", "over", "under"],
)
def test_an_excerpt_is_the_body_stripped_and_cut_after_300_characters(
    body: bytes, shown: str
) -> None:
    assert excerpt(body) == shown

"""Redis going away, for the tests of the ``503`` promise: a real redis-server that is still
loading its data when the requests come (``LOADING``), and a proxy in front of a real one that
goes away at a chosen command, in the middle of a request.

The proxy forwards each command and its reply until a command it is told to watch for has been
answered (the rate limiter's count, say); from then on it behaves as a Redis that has just
stopped: every connection is closed and new ones are refused (``down``), or every command is
answered ``LOADING`` as a restarted Redis answers while it reads its data back (``loading``).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from arena.redis_server import free_port, redis_command

LOADING_REPLY = b"-LOADING Redis is loading the dataset in memory\r\n"
"""What redis-server answers a command while it loads its data."""

Command = list[bytes]
Watch = Callable[[Command, bytes], bool]
"""Whether Redis goes away after this command and its reply."""


def read_command(stream: BinaryIO) -> tuple[Command, bytes] | None:
    """One command as redis-py sends it (an array of bulk strings): its arguments and its
    bytes; None when the client has gone."""
    head = stream.readline()
    if not head:
        return None
    raw, args = [head], []
    for _ in range(int(head[1:])):
        size_line = stream.readline()
        data = stream.read(int(size_line[1:]) + 2)
        raw += [size_line, data]
        args.append(data[:-2])
    return args, b"".join(raw)


def read_reply(stream: BinaryIO) -> bytes:
    """One RESP2 reply, whole: a status, an error, an integer, a bulk string or an array."""
    line = stream.readline()
    if not line:
        raise ConnectionError("redis-server closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"$" and int(rest) >= 0:
        return line + stream.read(int(rest) + 2)
    if kind == b"*" and int(rest) > 0:
        return line + b"".join(read_reply(stream) for _ in range(int(rest)))
    return line


@dataclass
class OutageProxy:
    """The proxy (see the module's doc): ``url`` reaches the Redis behind it."""

    upstream_port: int
    mode: str
    """``down`` or ``loading``: what Redis does once the watched command is answered."""
    watch: Watch = lambda _, __: False
    """The command after whose reply Redis goes away."""
    port: int = field(default_factory=free_port)
    gone: threading.Event = field(default_factory=threading.Event)
    _listener: socket.socket | None = None
    _open: list[socket.socket] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._go_down()

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed: Redis is down
                return
            self._open.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with contextlib.ExitStack() as stack:
            stack.enter_context(client)
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            stack.enter_context(upstream)
            from_client = client.makefile("rb")
            from_server = upstream.makefile("rb")
            while (read := _read(from_client)) is not None:
                args, raw = read
                if self.gone.is_set():
                    if self.mode == "down":
                        return
                    client.sendall(LOADING_REPLY)
                    continue
                upstream.sendall(raw)
                reply = read_reply(from_server)
                watched = self.watch(args, reply)
                if watched:  # before the reply: the client's next command may take another
                    self.gone.set()  # connection, served by another thread
                client.sendall(reply)
                if watched and self.mode == "down":
                    self._go_down()
                    return

    def _go_down(self) -> None:
        """Stop as redis-server stops: no more connections, and those open are closed."""
        self.gone.set()
        if self._listener is not None:
            self._listener.close()
        for sock in self._open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _read(stream: BinaryIO) -> tuple[Command, bytes] | None:
    try:
        return read_command(stream)
    except (OSError, ValueError):  # the connection was closed under the reader
        return None


def mentions(text: bytes) -> Watch:
    """A watch for the first command one of whose arguments contains ``text``, answered (not
    an error reply: a script not loaded yet is sent again)."""
    return lambda args, reply: not reply.startswith(b"-") and any(text in a for a in args)


@contextlib.contextmanager
def outage_proxy(upstream_port: int, mode: str, watch: Watch) -> Iterator[OutageProxy]:
    proxy = OutageProxy(upstream_port, mode, watch)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


KEY_LOAD_DELAY_US = 50
"""How long the loading Redis takes over each key (redis-server's ``key-load-delay``). It
answers between every 1,024 keys it loads: a round trip takes up to 50 ms meanwhile."""


@contextlib.contextmanager
def loading_redis(directory: Path, *, keys: int) -> Iterator[str]:
    """A redis-server started on an append-only file of ``keys`` keys and still loading them
    (for ``keys`` × 50 µs at least): its URL, once it answers ``LOADING``; stopped at the
    end."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "appendonly.aof").open("wb") as aof:  # as a Redis before 7 wrote it
        for n in range(keys):
            key = f"filler:{n}".encode()
            aof.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(key), key))
    port = free_port()
    delay = ["--key-load-delay", str(KEY_LOAD_DELAY_US)]
    server = subprocess.Popen(
        [*redis_command(directory, port, fsync="no"), *delay], stdout=subprocess.DEVNULL
    )
    try:
        _until(lambda: _ping(port) != b"")
        assert _ping(port) == LOADING_REPLY, "redis-server loaded its data before it was asked"
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.kill()
        server.wait()


def _ping(port: int) -> bytes:
    """What redis-server answers a ``PING`` on a connection of its own (no client library
    between, that would wait while it loads): empty when it does not listen yet."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.makefile("rb").readline()
    except ConnectionRefusedError:
        return b""


def _until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("redis-server did not get there in time")
        time.sleep(0.01)

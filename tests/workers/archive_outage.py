"""Taking the archive away for real: a directory archive whose directory is gone
(:class:`~benchmarks.archive_outage.DirectoryOutage`, which the outage benchmark uses too), and
an S3 archive behind a TCP proxy that can be stopped (connections refused), started again on its
port, or made to cut every upload half way."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Self

from benchmarks.archive_outage import DirectoryOutage

__all__ = ["DirectoryOutage", "Proxy"]


class Proxy:
    """A TCP proxy on loopback to ``upstream`` (host, port), one thread a connection. With
    ``cut_after`` set, each connection is closed once that many bytes of its request went up
    (an upload broken off half way)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.cut_after: int | None = None
        self._listener: socket.socket | None = None
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Listen (again, on the same port after :meth:`stop`)."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Refuse new connections and break the open ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            listener.close()
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            self._connections.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # stopped
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._connections |= {client, server}
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upward: bool) -> None:
        sent = 0
        try:
            while chunk := source.recv(65536):
                if upward and self.cut_after is not None and sent + len(chunk) > self.cut_after:
                    sink.sendall(chunk[: self.cut_after - sent])
                    break
                sink.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        for conn in (source, sink):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        with self._lock:
            self._connections -= {source, sink}

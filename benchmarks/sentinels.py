"""A Redis primary, its replica and Sentinels watching them, on loopback: the highly available
Redis of docs/OPERATIONS.md, for the failover benchmark and the test of the Sentinel URL.

Every server and Sentinel requires the same password (the arena's ``redis+sentinel://`` URL
carries one for both, as flask-limiter's does); both servers run append-only with ``appendfsync
always``, as the arena requires.
"""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import quote

import redis

from arena.redis_server import (
    RedisProcess,
    config_string,
    free_port,
    redis_server_binary,
    start_redis,
)

MASTER = "arena"
"""The name the Sentinels know the primary by (the URL's path)."""
START_TIMEOUT_S = 30.0


@dataclass
class Cluster:
    primary: RedisProcess
    replica: RedisProcess
    sentinel_ports: list[int]
    password: str

    @property
    def url(self) -> str:
        """The arena's ``REDIS_URL``: the primary, by its Sentinels."""
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://:{quote(self.password, safe='')}@{hosts}/{MASTER}"

    def sentinel(self, index: int = 0) -> redis.Redis:
        return redis.Redis(port=self.sentinel_ports[index], password=self.password)

    def primary_port(self) -> int | None:
        """The primary's port as the first Sentinel reports it now."""
        found = self.sentinel().sentinel_get_master_addr_by_name(MASTER)  # type: ignore[no-untyped-call]
        return int(found[1]) if found else None


def _sentinel_config(
    home: Path,
    me: int,
    ports: dict[int, str],
    *,
    primary: int,
    replica: int,
    password: str,
    down_ms: int,
) -> str:
    """Sentinel ``ports[me]``'s configuration: told the replica and the other Sentinels (with
    their ids), which it would otherwise discover over several seconds."""
    secret = config_string(password)
    quorum = min(2, len(ports))
    return "\n".join([
        f"port {me}", "bind 127.0.0.1", f'dir "{home}"', f'logfile "{home / "sentinel.log"}"',
        f"requirepass {secret}", f"sentinel sentinel-pass {secret}", f"sentinel myid {ports[me]}",
        f"sentinel monitor {MASTER} 127.0.0.1 {primary} {quorum}",
        f"sentinel auth-pass {MASTER} {secret}",
        f"sentinel down-after-milliseconds {MASTER} {down_ms}",
        f"sentinel failover-timeout {MASTER} 10000",
        f"sentinel known-replica {MASTER} 127.0.0.1 {replica}",
        *(f"sentinel known-sentinel {MASTER} 127.0.0.1 {port} {ident}"
          for port, ident in ports.items() if port != me),
        "",
    ])  # fmt: skip


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except redis.RedisError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


@contextmanager
def sentinel_cluster(
    directory: Path, *, password: str, sentinels: int = 3, down_ms: int = 1000
) -> Iterator[Cluster]:
    """The primary, the replica in sync with it, and ``sentinels`` Sentinels (quorum 2, or 1 for
    a lone Sentinel; the primary judged down after ``down_ms`` without an answer) that know
    both and each other."""
    with ExitStack() as stack:
        # (the replica's first sync would wait 5 s for others to share it)
        auth = ["--masterauth", password, "--repl-diskless-sync-delay", "0"]
        primary = start_redis(directory / "primary", password=password, options=auth)
        stack.callback(primary.stop)
        replica = start_redis(
            directory / "replica",
            password=password,
            options=[*auth, "--replicaof", "127.0.0.1", str(primary.port)],
        )
        stack.callback(replica.stop)
        _wait(partial(_in_sync, redis.Redis.from_url(replica.url)), "the replica")
        ports = {free_port(): secrets.token_hex(20) for _ in range(sentinels)}
        for i, port in enumerate(ports):
            home = directory / f"sentinel-{i}"
            home.mkdir()
            conf = home / "sentinel.conf"
            conf.write_text(
                _sentinel_config(
                    home, port, ports, primary=primary.port, replica=replica.port,
                    password=password, down_ms=down_ms,
                )
            )  # fmt: skip
            conf.chmod(0o600)
            process = subprocess.Popen([redis_server_binary(), str(conf), "--sentinel"])
            stack.callback(process.wait, 10)
            stack.callback(process.kill)
        cluster = Cluster(primary, replica, list(ports), password)
        for i in range(sentinels):
            _wait(partial(_knows_all, cluster.sentinel(i), sentinels), f"Sentinel {i}")
        yield cluster


def _in_sync(replica: redis.Redis) -> bool:
    info: dict[str, object] = replica.info("replication")  # type: ignore[assignment]
    return info.get("master_link_status") == "up"


def _knows_all(sentinel: redis.Redis, sentinels: int) -> bool:
    """The Sentinel knows the other Sentinels and the replica."""
    others = sentinel.sentinel_sentinels(MASTER)  # type: ignore[no-untyped-call]
    replicas = sentinel.sentinel_slaves(MASTER)  # type: ignore[no-untyped-call]
    return len(others) == sentinels - 1 and len(replicas) == 1

"""``REDIS_URL=redis+sentinel://…``: the arena's processes find the primary through Sentinel and
follow it when the replica is promoted; the rate limits read the same URL; a URL the arena could
not use stops it at once, and no message shows the password."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
import redis
from limits.storage import storage_from_string
from redis.sentinel import SentinelConnectionPool

from arena.config import Config, ConfigError
from arena.redis_client import connect, redacted
from arena.store import Store
from benchmarks.sentinels import Cluster, sentinel_cluster
from tests.workers.conftest import arena_config
from tests.workers.crashes import cut_by
from workers.outage import connect_riding_out, ride_out_s
from workers.worker import make_worker

PASSWORD = "sentinel-pass_word.~"
T = TypeVar("T")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with sentinel_cluster(tmp_path, password=PASSWORD, sentinels=1, down_ms=200) as found:
        yield found


def _register(store: Store, name: str) -> str:
    created, _ = store.create_bot(
        name=name, endpoint="https://bot.example.org/", description="", contact="t@example.com",
        version="1", secret="s",
    )  # fmt: skip
    return created.id


def _answered(call: Callable[[], T], deadline: float) -> T:
    """``call()`` once it answers: a client whose connection went down with the old primary
    asks Sentinel again on its next attempt."""
    while True:
        try:
            return call()
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "no answer from the new primary in 30 s"
            time.sleep(0.05)


def test_the_store_and_a_worker_follow_the_primary_through_a_failover(
    cluster: Cluster, tmp_path: Path
) -> None:
    config = arena_config(cluster.url, tmp_path)
    store = Store.from_config(config)
    first = _register(store, "before")
    worker = make_worker(config, connect(config.redis_url))
    worker.register_birth()  # type: ignore[no-untyped-call]  # rq: unannotated
    assert cluster.primary.process.poll() is None
    limits = storage_from_string(config.redis_url)  # flask-limiter's storage, same URL
    assert limits.incr("a-limit", 60) == 1
    assert store.redis.wait(1, 10_000) == 1  # both writes on the replica (it copies later)
    cluster.primary.kill()
    deadline = time.monotonic() + 30
    while cluster.primary_port() != cluster.replica.port:  # until Sentinel promotes the replica
        assert time.monotonic() < deadline, "no primary 30 s after the failover"
        time.sleep(0.05)
    second = _answered(lambda: _register(store, "after"), deadline)
    assert set(store.get_bots([first, second])) == {first, second}  # the replica had the first
    _answered(worker.heartbeat, deadline)  # the worker's connection finds the new primary too
    assert _answered(lambda: limits.incr("a-limit", 60), deadline) == 2  # the limits, kept
    pool = store.redis.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.get_master_address()[1] == cluster.replica.port  # type: ignore[no-untyped-call]


def test_a_worker_command_cut_by_a_failover_follows_the_primary_and_rides_it_out(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A worker's command under way when the primary dies is sent again to the promoted
    replica as soon as Sentinel names it, not to the dead primary's address for as long as the
    worker waits (30 s)."""
    config = dataclasses.replace(arena_config(cluster.url, tmp_path), abandoned_after_s=60)
    client = connect_riding_out(config)
    answered_s, answered = cut_by(cluster.primary.kill, client, timeout_s=1)
    assert answered and cluster.primary_port() == cluster.replica.port
    assert answered_s < ride_out_s(config) / 2  # the promotion (~1 s), the 1 s read, not 30 s
    assert client.set("after", "yes") and client.get("after") == b"yes"
    print(
        f"the command cut by the failover was answered by the new primary after {answered_s:.1f} s"
    )


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://:pw@127.0.0.1:26379",  # no master name
        "redis+sentinel://:pw@127.0.0.1/arena",  # no port
        "redis+sentinel://:pw@/arena",  # no Sentinel
        "redis+sentinel://:pw@127.0.0.1:26379/arena/0",  # a path beyond the name
        "redis+sentinel://:pw%20x@127.0.0.1:26379/arena",  # flask-limiter would send "pw%20x"
    ],
)
def test_a_sentinel_url_the_arena_cannot_use_stops_it_at_once_without_its_password(
    url: str,
) -> None:
    with pytest.raises(ConfigError) as refused:
        Config.from_environment({"REDIS_URL": url})
    assert "REDIS_URL" in str(refused.value) and "Sentinel URL" in str(refused.value)
    assert ":pw" not in str(refused.value)


def test_a_url_is_shown_without_its_password() -> None:
    assert (
        redacted("rediss://:s%20cret@h:6380/0?ssl_ca_certs=/ca")
        == "rediss://:***@h:6380/0?ssl_ca_certs=/ca"
    )
    assert redacted("redis://user:pw@h:1,h:2/arena") == "redis://user:***@h:1,h:2/arena"
    assert redacted("redis://h:6379/0") == "redis://h:6379/0"

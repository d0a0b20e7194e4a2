"""The worker's Redis client rides out an outage (:mod:`workers.outage`): a command waits for a
Redis that comes back; it gives up after the bound, plus one back-off at most, also when Redis
dies in the middle of it (redis-py then retries connecting inside each retry of the command);
and the next command waits as long again. Against a real redis-server, started late or
killed."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from arena.config import Config
from arena.redis_server import RedisProcess, free_port, start_redis
from tests.workers.crashes import cut_by
from workers.outage import connect_riding_out, ride_out_s


def _config(port: int, abandoned_after_s: int) -> Config:
    """A configuration naming Redis on ``port``, riding out half of ``abandoned_after_s``."""
    return dataclasses.replace(
        Config(), redis_url=f"redis://127.0.0.1:{port}", abandoned_after_s=abandoned_after_s
    )


@pytest.fixture
def late_redis(tmp_path: Path) -> Iterator[tuple[int, threading.Thread]]:
    """A free port, and a thread that starts Redis on it half a second after it is started."""
    port = free_port()
    started: list[RedisProcess] = []
    thread = threading.Thread(
        target=lambda: (time.sleep(0.5), started.append(start_redis(tmp_path, port=port)))
    )
    yield port, thread
    thread.join(10)
    for server in started:
        server.stop()


def test_a_command_waits_for_a_redis_that_comes_back(
    late_redis: tuple[int, threading.Thread],
) -> None:
    port, redis_later = late_redis
    client = connect_riding_out(_config(port, abandoned_after_s=20))
    redis_later.start()
    began = time.monotonic()
    assert client.set("answered", "yes")
    waited_s = time.monotonic() - began
    assert client.get("answered") == b"yes"
    assert 0.5 <= waited_s < ride_out_s(_config(port, 20))
    print(f"the command waited {waited_s:.2f} s for Redis, then was answered")


def test_a_command_gives_up_after_the_bound_even_in_the_middle_of_it(tmp_path: Path) -> None:
    server = start_redis(tmp_path)
    config = _config(server.port, abandoned_after_s=2)  # a ride-out of 1 s
    client = connect_riding_out(config)
    given_up_s, answered = cut_by(server.kill, client, timeout_s=30)
    assert not answered
    waited_s = [given_up_s]
    for _ in range(2):  # each next command waits as long
        began = time.monotonic()
        with pytest.raises(redis.ConnectionError):
            client.ping()
        waited_s.append(time.monotonic() - began)
    bound = ride_out_s(config)
    assert all(bound <= s < bound + 1.0 for s in waited_s), waited_s
    print(f"with a {bound:g} s ride-out, the commands gave up after {waited_s} s")

"""Workers on another host join the arena by configuration alone: ``REDIS_URL`` with a password,
``rediss://`` for TLS. The arena's Redis listens on a non-loopback address only, requires a
password and serves TLS only (a self-signed certificate); the workers run in a network namespace
of their own, reaching Redis and the bots over a veth pair, and play a tournament that must come
out with exact counts."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
from rq import Worker

from arena.config import Config
from arena.redis_server import RedisProcess, start_redis
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from tests.bot_sdk.bot_sdk_support import running
from tests.reliability.accounting import account
from tests.tls_support import self_signed
from tests.workers.conftest import arena_config, start_worker_process, stop_workers
from tests.workers.crashes import wait_for
from tests.workers.remote_host import RemoteHost, remote_host
from tests.workers.test_worker_tournaments import _assert_counted_once, _done, _logs, _start

PASSWORD = 'a password/with "signs":@\\'
"""Characters a URL must quote (the URL carries it to the workers) and redis.conf must escape."""


@pytest.fixture(scope="module")
def host() -> Iterator[RemoteHost]:
    with remote_host() as found:
        if not found.isolated:
            message = (
                f"FALLBACK: no network namespace ({found.fallback}): the workers are separate "
                "processes on this host, sharing only the URL"
            )
            print(message)
            warnings.warn(message, stacklevel=1)
        yield found


@pytest.fixture
def server(host: RemoteHost, tmp_path: Path) -> Iterator[RedisProcess]:
    tls = self_signed(host.arena_address, tmp_path)
    started = start_redis(
        tmp_path / "redis", bind=host.arena_address, password=PASSWORD, tls=tls, fsync="everysec"
    )
    yield started
    started.stop()


@pytest.fixture
def config(server: RedisProcess, tmp_path: Path) -> Config:
    return arena_config(server.url, tmp_path)


def test_workers_on_another_host_play_a_tournament_over_tls_with_a_password(
    host: RemoteHost, server: RedisProcess, config: Config, store: Store
) -> None:
    assert config.redis_url.startswith(f"rediss://:{quote(PASSWORD, safe='')}@")
    with pytest.raises(redis.AuthenticationError):  # the password is required
        redis.Redis.from_url(config.redis_url.replace("a%20password", "not%20the")).ping()
    with pytest.raises(redis.ConnectionError):  # and TLS: plain TCP is not served
        redis.Redis(host.arena_address, server.port, password=PASSWORD).ping()
    with ExitStack() as stack:
        bots = []
        for i in range(2):
            secret = f"secret-{i}"
            url = stack.enter_context(running(make_app(LowestCard, secret), host.arena_address))
            created, _ = store.create_bot(
                name=f"lowest-{i}", endpoint=url, description="", contact="t@example.com",
                version="1", secret=secret,
            )  # fmt: skip
            bots.append(created.id)
        tournament_id = _start(config, store, [*bots, "house:easy", "house:normal"])
        workers = [start_worker_process(config, prefix=host.prefix) for _ in range(2)]
        stack.callback(stop_workers, workers)
        wait_for(lambda: _done(store, tournament_id), 60, "the tournament to finish")
        if host.isolated:  # (once ``ip netns exec`` has run the worker: it has by now)
            here = os.readlink("/proc/self/ns/net")
            assert all(os.readlink(f"/proc/{w.pid}/ns/net") != here for w in workers)
        assert {w.pid for w in Worker.all(connection=store.redis)} == {w.pid for w in workers}
        # one table of four, its deal in four rotations: each participant in every match
        _assert_counted_once(store, tournament_id, 4, 4)
        accounting = account(store, tournament_id)
        assert (accounting.recorded, accounting.lost, accounting.duplicated) == (4, 0, 0)
        assert len(_logs(config, store, tournament_id)) == 4  # sealed and verified
        assert all(w.poll() is None for w in workers)
    if not host.isolated:
        print("FALLBACK used: the workers shared this host's network namespace")

"""Redis killed with SIGKILL mid-tournament and started again on its data: a real
`python -m workers worker` process against the arena's own Redis (append-only, ``appendfsync
always``). No finished match is lost, the interrupted one is played again, every match is
recorded once, and the same worker process finishes the tournament (the restarted one, when the
worker and its horse were killed with Redis: every process of the machine restarted)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from rq.job import Job

from arena.config import Config
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import MatchStatus
from arena.redis_server import RedisProcess, start_redis
from arena.store import Store
from tests.workers.conftest import arena_config
from tests.workers.crashes import children, crash_config, recovery_bound_s, sigkill, wait_for
from tests.workers.test_worker_tournaments import (
    Deliberate,
    _assert_counted_once,
    _assert_nothing_lost_or_duplicated,
    _done,
    _logs,
    _register,
    _start,
)


class Servers:
    """The test's Redis, which the test replaces by a restarted one."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.current: RedisProcess = start_redis(directory, fsync="always")

    def crash_and_restart(self, down_s: float = 0) -> None:
        """SIGKILL Redis and start it again on its data after ``down_s``."""
        self.current.kill()
        time.sleep(down_s)
        self.current = start_redis(self.directory, port=self.current.port, fsync="always")


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    servers = Servers(tmp_path / "redis")
    yield servers
    servers.current.stop()


@pytest.fixture
def config(servers: Servers, tmp_path: Path) -> Config:
    return crash_config(arena_config(servers.current.url, tmp_path))


@pytest.mark.parametrize(
    "outage",
    [
        "instant",  # redis-py reconnects: nobody notices
        "past a heartbeat",  # the worker's heartbeat fails: its loop ends, the horse is stopped
        "with every process",  # the worker and its horse SIGKILLed too, all started again
    ],
)
def test_a_redis_restart_mid_tournament_loses_no_match_and_the_tournament_completes(
    outage: str,
    config: Config,
    store: Store,
    servers: Servers,
    start_worker: Callable[[], Any],
) -> None:
    with ExitStack() as stack:
        bot = _register(store, stack, Deliberate, "deliberate")
        tournament_id = _start(config, store, [bot])  # filled with three house bots: 4 matches
        worker = start_worker()

        def matches() -> list[Any]:
            return store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items

        def mid_tournament() -> bool:
            statuses = {m.status for m in matches()}
            return {MatchStatus.DONE, MatchStatus.RUNNING} <= statuses

        wait_for(mid_tournament, 60, "a recorded match and one being played")
        time.sleep(0.3)
        before = {m.id: (m.result, store.replay_blob(m.id)) for m in matches() if m.result}
        down_s = 2 * config.job_heartbeat_s + 1 if outage == "past a heartbeat" else 0
        if outage == "with every process":
            for pid in [*children(worker.pid), worker.pid]:
                sigkill(pid)
            worker.wait(5)
        servers.crash_and_restart(down_s)
        restarted_at = time.monotonic()
        if outage == "with every process":
            worker = start_worker()
        assert store.redis.config_get("appendonly") == {"appendonly": "yes"}
        assert store.redis.config_get("appendfsync") == {"appendfsync": "always"}
        running = {m.id for m in matches() if m.status is MatchStatus.RUNNING}
        assert running  # interrupted: it must be played again
        assert {m.id for m in matches() if m.status is MatchStatus.DONE} == set(before)
        [interrupted] = running

        def recorded() -> bool:
            match = store.get_match(interrupted)
            return match is not None and match.status is MatchStatus.DONE

        wait_for(recorded, recovery_bound_s(config), "the interrupted match to be recorded again")
        recovery_s = time.monotonic() - restarted_at
        print(f"Redis {outage}: the interrupted match recorded {recovery_s:.1f} s after restart")
        wait_for(
            lambda: _done(store, tournament_id), 90, "the tournament to finish after the restart"
        )
        assert worker.poll() is None  # it outlived Redis: no process manager needed
        _assert_counted_once(store, tournament_id, 4, 4)
        logs = _logs(config, store, tournament_id)
        assert len(logs) == 4 and running <= set(logs)
        for match_id, (result, blob) in before.items():  # untouched by what came after
            match = store.get_match(match_id)
            assert match is not None and match.result == result
            assert store.replay_blob(match_id) == blob
        assert len(store.rating_history(bot)) == 4
        retries_left = Job.fetch(match_job_id(interrupted), connection=store.redis).retries_left
        if outage != "instant":
            assert retries_left == MATCH_RETRIES - 1  # its horse was stopped: played again
        _assert_nothing_lost_or_duplicated(
            store,
            tournament_id,
            f"redis_sigkill_down_{outage.replace(' ', '_')}",
            len(running),
            recorded_after_restart_s=round(recovery_s, 1),
            down_s=down_s,
            retries_left=retries_left,
        )

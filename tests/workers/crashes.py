"""Crashing the arena's processes for real: the work horse of a worker found by its pid (rq's
horse calls ``setpgrp()``, so killing the worker's process group leaves it alive), SIGKILL,
and timing the recovery."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import redis

from arena.config import Config
from arena.records import MatchStatus
from arena.store import Store
from service.supervisor import children_of as children

PROCFILE_RECOVERY_ENV = "GONGZHU_PROCFILE_RECOVERY"
"""Set to 1, the crash tests run with the recovery settings of the Procfile (the defaults)
instead of the tests' short ones: ``GONGZHU_PROCFILE_RECOVERY=1 pytest tests/workers/test_crash_
recovery.py tests/workers/test_redis_restart.py -rP`` measures the recovery times an arena
run from the Procfile has."""


def procfile_recovery() -> bool:
    return os.environ.get(PROCFILE_RECOVERY_ENV) == "1"


def crash_config(config: Config) -> Config:
    """``config``, with the Procfile's recovery settings when :data:`PROCFILE_RECOVERY_ENV`
    says so."""
    if not procfile_recovery():
        return config
    defaults = Config()
    return dataclasses.replace(
        config,
        worker_ttl_s=defaults.worker_ttl_s,
        job_heartbeat_s=defaults.job_heartbeat_s,
        abandoned_after_s=defaults.abandoned_after_s,
        maintenance_interval_s=defaults.maintenance_interval_s,
    )


def recovery_bound_s(config: Config) -> float:
    """How long a match interrupted by a crash may take to be recorded again: its job's
    heartbeat expiring (the last beat, then the grace), the next registry sweep, and 15 s to
    start a worker and play the match and those queued before it."""
    return config.job_heartbeat_s + config.abandoned_after_s + config.maintenance_interval_s + 15


def horse_of(worker_pid: int, seconds: float = 10) -> int:
    """The pid of the work horse the worker forked for its current job."""
    deadline = time.monotonic() + seconds
    while True:
        horses = children(worker_pid)
        if horses:
            return horses[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"worker {worker_pid} has no work horse")
        time.sleep(0.02)


def sigkill(pid: int) -> None:
    """SIGKILL one process (not its group); one already gone is fine."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (killed, not yet reaped by its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> float:
    """Wait until ``condition()``; returns the seconds it took."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"timed out after {seconds:g} s waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - start


def running_matches(store: Store, tournament_id: str) -> list[str]:
    """The ids of the tournament's matches a worker is playing now (the first 100 listed)."""
    found = store.list_matches(page=1, per_page=100, tournament_id=tournament_id).items
    return [m.id for m in found if m.status is MatchStatus.RUNNING]


def cut_by(kill: Callable[[], None], client: redis.Redis, timeout_s: int) -> tuple[float, bool]:
    """``kill()`` while ``client`` waits in a blocking read (``BLPOP``, ``timeout_s``: what a
    worker waiting for a pull bot's answer does): the seconds from the kill until the read
    ended, and whether it ended answered (not on a connection error). At most 30 s."""
    ended: list[tuple[float, bool]] = []

    def read() -> None:
        try:
            client.blpop(["nothing"], timeout=timeout_s)
        except redis.ConnectionError:
            ended.append((time.monotonic(), False))
        else:
            ended.append((time.monotonic(), True))

    reading = threading.Thread(target=read, daemon=True)
    reading.start()
    time.sleep(0.3)
    killed_at = time.monotonic()
    kill()
    reading.join(30)
    assert ended, "the read cut by the kill never ended"
    return ended[0][0] - killed_at, ended[0][1]

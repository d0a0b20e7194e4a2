"""Fixtures of the worker tests: a real redis-server of their own (append-only, as the arena
runs it), flushed before each test; the arena's keys; RQ worker subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import pytest
import redis
from cryptography.fernet import Fernet

from arena.config import Config
from arena.store import Store
from replays.integrity import generate_key, private_key_pem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def config(redis_server: str, tmp_path: Path) -> Config:
    redis.Redis.from_url(redis_server).flushdb()
    return arena_config(redis_server, tmp_path)


def arena_config(redis_url: str, directory: Path) -> Config:
    """The tests' configuration on ``redis_url``, with a replay key made in ``directory``."""
    key_path = directory / "replay.pem"
    key_path.write_bytes(private_key_pem(generate_key()))
    return Config(
        redis_url=redis_url,
        secret_key=Fernet.generate_key().decode(),
        allow_private_endpoints=True,
        replay_key_path=key_path,
        archive=str(directory / "archive"),
        queue_name="arena-test",
        # recovery shortened for the tests: a dead worker's job is retried within ~4 s
        worker_ttl_s=16,
        job_heartbeat_s=1,
        abandoned_after_s=2,
        maintenance_interval_s=1,
        # one match at a time, as the crash tests count them; test_in_flight.py plays many
        matches_per_worker=1,
    )


@pytest.fixture
def store(config: Config) -> Store:
    return Store.from_config(config)


def environment(config: Config) -> dict[str, str]:
    """The environment a worker process reads ``config`` from."""
    return {
        **os.environ,
        "REDIS_URL": config.redis_url,
        "GONGZHU_SECRET_KEY": config.secret_key,
        "GONGZHU_REPLAY_KEY": str(config.replay_key_path or ""),
        "GONGZHU_ARCHIVE": config.archive,
        "GONGZHU_S3_ENDPOINT": config.s3_endpoint,
        "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "1",
        "GONGZHU_QUEUE": config.queue_name,
        "GONGZHU_WORKER_TTL_S": str(config.worker_ttl_s),
        "GONGZHU_JOB_HEARTBEAT_S": str(config.job_heartbeat_s),
        "GONGZHU_ABANDONED_AFTER_S": str(config.abandoned_after_s),
        "GONGZHU_MAINTENANCE_INTERVAL_S": str(config.maintenance_interval_s),
        "GONGZHU_MATCHES_PER_WORKER": str(config.matches_per_worker),
        "GONGZHU_ADMISSION_LATENESS_MS": str(config.admission_lateness_ms),
        "GONGZHU_LADDER_INTERVAL_S": str(config.ladder_interval_s),
        "GONGZHU_LADDER_TABLES": str(config.ladder_tables),
        "GONGZHU_LADDER_HANDS": str(config.ladder_hands),
        "GONGZHU_LADDER_HOUSE": ",".join(h.removeprefix("house:") for h in config.ladder_house),
        "GONGZHU_ARCHIVE_HOLD_MB": str(config.archive_hold_mb),
        "GONGZHU_RECOVERY_S": str(config.recovery_s),
        "GONGZHU_HEAL_AFTER_S": str(config.heal_after_s),
    }


def start_worker_process(
    config: Config,
    role: str = "worker",
    output: int | IO[bytes] = subprocess.DEVNULL,
    *,
    module: str = "workers",
    extra_env: dict[str, str] | None = None,
    prefix: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """``python -m workers worker`` (or ``cron``; or another ``module`` wrapping it) on
    ``config``, in its own session and process group (so that a test can kill a worker with its
    work horse), its output to ``output``; ``prefix``: a command that runs it (``ip netns exec
    HOST``, which execs it: the process is still the worker)."""
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", module, role],
        cwd=ROOT,
        env={**environment(config), **(extra_env or {})},
        stdout=output,
        stderr=output,
        start_new_session=True,
    )


def stop_workers(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every worker still running (SIGKILL if it does not stop), and wait."""
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


@pytest.fixture
def start_worker(config: Config) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Starts worker processes (:func:`start_worker_process`); all are stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        started.append(start_worker_process(config))
        return started[-1]

    yield start
    stop_workers(started)


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    """Servers and clients a test starts, closed after it, last first."""
    with ExitStack() as stack:
        yield stack

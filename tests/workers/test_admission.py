"""A work horse takes no new job while its threads wake up late (:mod:`workers.admission`): jobs
that keep the interpreter busy run a few at a time, jobs that wait all run at once. A real
worker process plays jobs that record when they ran."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
import redis
from rq import Queue
from rq.job import Job

from arena.config import Config, ConfigError
from tests.workers.conftest import start_worker_process, stop_workers
from tests.workers.crashes import wait_for
from workers.admission import WINDOW, Lateness

JOBS = 8


def compute(seconds: float) -> tuple[float, float]:
    """A job that keeps the interpreter busy for ``seconds``; when it started and ended."""
    started = time.time()
    while time.time() - started < seconds:
        sum(range(1000))
    return started, time.time()


def wait(seconds: float) -> tuple[float, float]:
    """A job that waits for ``seconds`` (as a match waits for its bots)."""
    started = time.time()
    time.sleep(seconds)
    return started, time.time()


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most spans that overlap at one instant."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def spans_of(config: Config, job: str, seconds: float) -> list[tuple[float, float]]:
    """Play :data:`JOBS` of ``job`` in one worker with room for all of them at once."""
    connection = redis.Redis.from_url(config.redis_url)
    queue = Queue(config.queue_name, connection=connection)
    jobs = [queue.enqueue(f"{__name__}.{job}", seconds) for _ in range(JOBS)]
    worker = start_worker_process(dataclasses.replace(config, matches_per_worker=JOBS))
    try:
        wait_for(lambda: all(j.is_finished for j in jobs), 120, "the jobs")
    finally:
        stop_workers([worker])
    return [tuple(Job.fetch(j.id, connection=connection).return_value()) for j in jobs]


def test_jobs_that_keep_the_interpreter_busy_are_not_taken_together(config: Config) -> None:
    """A few may start together: a job taken does rq's bookkeeping (waiting on Redis) before it
    computes, and the next may be taken meanwhile (how many depends on how busy the machine
    is); once they compute, none is taken until one ends."""
    spans = spans_of(dataclasses.replace(config, admission_lateness_ms=2.0), "compute", 0.5)
    assert most_at_once(spans) < JOBS, spans
    assert max(start for start, _ in spans) >= min(end for _, end in spans), spans


def test_jobs_that_wait_are_all_in_flight_at_once(config: Config) -> None:
    spans = spans_of(config, "wait", 3.0)  # under the default limit
    assert most_at_once(spans) == JOBS, spans


def test_lateness_rises_beside_a_busy_thread_and_falls_after() -> None:
    lateness = Lateness()
    lateness.start()
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(range(1000))

    try:
        wait_for(lambda: lateness.measured >= WINDOW, 10, "a window measured")
        since = lateness.measured
        thread = threading.Thread(target=busy)
        thread.start()
        # two windows measured beside it: refused for the wake-ups' lateness, not for want of
        # wake-ups measured (a thread that wants the interpreter waits its 5 ms switch interval)
        wait_for(lambda: lateness.measured - since > 2 * WINDOW, 10, "wake-ups beside it")
        assert not lateness.admits(2.0, since), lateness.recent_ms()
        stop.set()
        thread.join()
        since = lateness.measured
        wait_for(lambda: lateness.admits(2.0, since), 30, "wake-ups on time")
    finally:
        stop.set()
        lateness.stop()


def test_no_job_is_taken_before_its_window_is_measured() -> None:
    lateness = Lateness()
    assert not lateness.admits(1000.0, since=0)


def test_the_limit_is_checked() -> None:
    with pytest.raises(ConfigError, match="GONGZHU_ADMISSION_LATENESS_MS must be a number of "):
        Config.from_environment(
            {"REDIS_URL": "redis://localhost:1", "GONGZHU_ADMISSION_LATENESS_MS": "fast"}
        )

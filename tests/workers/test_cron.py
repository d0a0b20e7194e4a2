"""Scheduled tournaments: ``python -m workers cron`` registers one rq cron job per stored
schedule, rq queues ``run_schedule`` when the cron expression fires, and ``run_schedule``
creates and starts a ladder round among the bots active at that time."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest
import redis
from rq import Queue
from rq.cron import CronScheduler

from arena.config import Config
from arena.queue import match_job_id
from arena.records import BotStatus, Format, TournamentSpec, TournamentStatus
from arena.redis_server import start_redis
from arena.store import Store
from referee import Rules
from replays.log import TimeControl
from tests.workers.conftest import arena_config, environment, start_worker_process, stop_workers
from workers.cron import ARCHIVE_SWEEP_JOB, SYNC_S, ArenaCron, cron_job_name
from workers.jobs import run_archive_sweep, run_schedule

T = TypeVar("T")

TEMPLATE = TournamentSpec(
    name="ladder round",
    participants=(),
    format=Format(duplicate=True, matches_per_table=1, hands=1),
    rules=Rules(),
    time_control=TimeControl(1000, 5000, 5),
)


def test_a_stored_schedule_is_queued_at_its_cron_time(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    minutely = store.create_schedule("* * * * *", TEMPLATE)
    nightly = store.create_schedule("0 3 * * *", TEMPLATE)
    scheduler = ArenaCron(store, config.queue_name)
    assert scheduler.enqueue_jobs() == []  # nothing is due before its time
    jobs = {job.name: job for job in scheduler.get_jobs()}
    assert set(jobs) == {cron_job_name(minutely.id), cron_job_name(nightly.id)}
    cron_job = jobs[cron_job_name(minutely.id)]
    assert (cron_job.func, cron_job.args) == (run_schedule, (minutely.id,))
    assert (cron_job.cron, cron_job.queue_name) == ("* * * * *", config.queue_name)
    fires_at = cron_job.next_enqueue_time
    # the clock reaches the next minute (rq's scheduler loop reads rq.cron.now)
    monkeypatch.setattr("rq.cron.now", lambda: fires_at + timedelta(seconds=1))
    assert [job.name for job in scheduler.enqueue_jobs()] == [cron_job_name(minutely.id)]
    queue = Queue(config.queue_name, connection=store.redis)
    queued = [job for job in queue.get_jobs() if job.func_name == "workers.jobs.run_schedule"]
    assert [job.args for job in queued] == [(minutely.id,)]


def test_schedules_created_or_deleted_later_are_picked_up_without_a_restart(
    config: Config, store: Store
) -> None:
    first = store.create_schedule("0 3 * * *", TEMPLATE)
    scheduler = ArenaCron(store, config.queue_name)
    scheduler.enqueue_jobs()
    kept = scheduler.get_jobs()[0]
    second = store.create_schedule("30 4 * * 1", TEMPLATE)
    scheduler.enqueue_jobs()
    assert [job.name for job in scheduler.get_jobs()] == [
        cron_job_name(first.id),
        cron_job_name(second.id),
    ]
    assert scheduler.get_jobs()[0] is kept  # its next fire time is kept
    assert store.delete_schedule(first.id)
    scheduler.enqueue_jobs()
    assert [job.name for job in scheduler.get_jobs()] == [cron_job_name(second.id)]
    assert scheduler.calculate_sleep_interval() <= SYNC_S


def test_the_cron_process_outlives_a_redis_outage(tmp_path: Path) -> None:
    server = start_redis(tmp_path / "redis", fsync="always")
    config = arena_config(server.url, tmp_path)
    log = tmp_path / "cron.log"
    with log.open("wb") as output:
        process = start_worker_process(config, "cron", output)
    try:
        before = _wait_for(lambda: _schedulers(server.url), process, "a cron scheduler")
        server.kill()  # and it stays down until the scheduler has noticed
        _wait_for(lambda: b"Redis lost" in log.read_bytes(), process, "the outage noticed")
        server = start_redis(tmp_path / "redis", port=server.port, fsync="always")
        _wait_for(lambda: _schedulers(server.url) - before, process, "a new scheduler loop")
    finally:
        stop_workers([process])
        server.stop()
    assert process.returncode == 0  # SIGTERM stops it cleanly


def _schedulers(url: str) -> set[str]:
    return {scheduler.name for scheduler in CronScheduler.all(redis.Redis.from_url(url))}


def _wait_for(
    condition: Callable[[], T], process: subprocess.Popen[bytes], what: str, timeout: float = 40
) -> T:
    """``condition()`` once it is truthy, while ``process`` keeps running."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert process.poll() is None, f"the cron process exited, waiting for {what}"
        assert time.monotonic() < deadline, f"no {what} in {timeout:g} s"
        time.sleep(0.1)
    return value


def test_run_schedule_starts_a_round_among_all_active_bots(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)
    bots = {}
    for name in ("a", "b", "c", "d", "e", "paused"):
        bot, _ = store.create_bot(
            name=name, endpoint="http://127.0.0.1:9/bot", description="",
            contact="t@example.com", version="1", secret="s3cret",
        )  # fmt: skip
        bots[name] = bot.id
    store.set_bot_status(bots["paused"], BotStatus.PAUSED)
    schedule = store.create_schedule("* * * * *", TEMPLATE)
    run_schedule(schedule.id)
    [tournament] = store.list_tournaments(page=1, per_page=10).items
    active = sorted(bot_id for name, bot_id in bots.items() if name != "paused")
    assert tournament.schedule_id == schedule.id
    assert sorted(tournament.spec.participants) == active
    assert tournament.status is TournamentStatus.RUNNING
    assert tournament.total == 5 * 4  # 5 tables of 4, each deal in 4 rotations
    matches = store.list_matches(page=1, per_page=100, tournament_id=tournament.id).items
    assert len(matches) == tournament.total
    queue = Queue(config.queue_name, connection=store.redis)
    assert set(queue.get_job_ids()) == {match_job_id(m.id) for m in matches}
    run_schedule("s_unknown")  # a deleted schedule queues nothing
    assert store.list_tournaments(page=1, per_page=10).total == 1


def test_the_archive_sweep_is_queued_every_interval_and_kept_across_syncs(
    config: Config, store: Store
) -> None:
    scheduler = ArenaCron(store, config.queue_name, archive_sweep_s=3600)
    scheduler.enqueue_jobs()  # rq queues an interval job at its first round
    [sweep] = scheduler.get_jobs()
    assert (sweep.name, sweep.func, sweep.interval) == (ARCHIVE_SWEEP_JOB, run_archive_sweep, 3600)
    queue = Queue(config.queue_name, connection=store.redis)
    assert [job.func_name for job in queue.get_jobs()] == ["workers.jobs.run_archive_sweep"]
    store.create_schedule("0 3 * * *", TEMPLATE)
    scheduler.enqueue_jobs()
    assert ARCHIVE_SWEEP_JOB in {job.name for job in scheduler.get_jobs()}  # kept by sync
    assert ArenaCron(store, config.queue_name).get_jobs() == []  # 0: no sweep

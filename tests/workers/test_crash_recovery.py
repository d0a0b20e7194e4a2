"""A match interrupted by a SIGKILL, of the work horse, of the worker or of both, is played
again from its deal and recorded exactly once, with no operator action: real `python -m
workers worker` processes, a real Redis, a real bot server on loopback."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry

from arena.config import Config
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import MatchStatus
from arena.store import Store
from tests.reliability.accounting import account
from tests.workers.conftest import environment
from tests.workers.crashes import (
    alive,
    crash_config,
    horse_of,
    recovery_bound_s,
    running_matches,
    sigkill,
    wait_for,
)
from tests.workers.test_worker_tournaments import (
    Deliberate,
    _assert_counted_once,
    _assert_nothing_lost_or_duplicated,
    _done,
    _logs,
    _register,
    _start,
)
from workers.jobs import run_tournament


@pytest.fixture
def config(config: Config) -> Config:
    """The tests' configuration, with the Procfile's recovery settings if asked for."""
    return crash_config(config)


@pytest.mark.parametrize("victim", ["horse", "worker", "worker and horse"])
def test_a_match_killed_mid_play_is_played_again_and_recorded_once(
    victim: str, config: Config, store: Store, start_worker: Callable[[], Any]
) -> None:
    with ExitStack() as stack:
        bot = _register(store, stack, Deliberate, "deliberate")
        tournament_id = _start(config, store, [bot])  # filled with three house bots: 4 matches
        worker = start_worker()

        wait_for(lambda: bool(running_matches(store, tournament_id)), 30, "a match to start")
        time.sleep(0.3)
        horse = horse_of(worker.pid)
        [killed] = running_matches(store, tournament_id)
        if victim != "worker":
            sigkill(horse)
        if victim != "horse":
            sigkill(worker.pid)
        killed_at = time.monotonic()
        if victim != "horse":
            worker.wait(5)
            start_worker()  # the process manager starts it again

        def requeued() -> bool:
            job = Job.fetch(match_job_id(killed), connection=store.redis)
            return job.retries_left != MATCH_RETRIES

        def recorded() -> bool:
            match = store.get_match(killed)
            return match is not None and match.status is MatchStatus.DONE

        requeue_s = None
        bound_s = recovery_bound_s(config)
        if victim != "worker":  # its horse died with it: the job must run again
            wait_for(requeued, bound_s, f"the job killed with its {victim} to be queued again")
            requeue_s = round(time.monotonic() - killed_at, 1)
        wait_for(recorded, bound_s, f"the match killed with its {victim} to be recorded")
        recovery_s = time.monotonic() - killed_at
        wait_for(lambda: _done(store, tournament_id), 60, "the tournament to finish")
        if victim == "worker":  # the orphaned horse finished the match, or was outlived by it
            wait_for(lambda: not alive(horse), 60, "the orphaned horse to end")
    print(
        f"{victim} SIGKILLed: the interrupted match was queued again after {requeue_s} s "
        f"and recorded after {recovery_s:.1f} s (its queue had the tournament's other matches)"
    )
    assert recovery_s < bound_s
    _assert_counted_once(store, tournament_id, 4, 4)
    logs = _logs(config, store, tournament_id)  # every replay's seal and referee verdict
    assert len(logs) == 4 and killed in logs
    assert len(store.rating_history(bot)) == 4  # rated once per match, the killed one too
    retries_left = Job.fetch(match_job_id(killed), connection=store.redis).retries_left
    if victim != "worker":
        assert retries_left == MATCH_RETRIES - 1  # played again once
    crash = victim.replace(" and ", "_").replace(" ", "_") + "_sigkill"
    _assert_nothing_lost_or_duplicated(
        store,
        tournament_id,
        crash,
        1,
        queued_again_after_s=requeue_s,
        recorded_after_s=round(recovery_s, 1),
        retries_left=retries_left,
    )


def test_a_match_job_an_older_arena_parked_in_the_scheduled_registry_is_played(
    config: Config, store: Store, start_worker: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old ``Retry(interval=1)`` left a crashed match's job in rq's scheduled registry,
    which no process empties: after the upgrade a worker's sweep queues it again."""
    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)
    tournament_id = _start(config, store, ["house:easy"])  # 4 matches of house bots
    run_tournament(tournament_id)  # plans and queues them (the worker gets a no-op after)
    queue = Queue(config.queue_name, connection=store.redis)
    parked = Job.fetch(match_job_id(f"{tournament_id}-t1-d1-r2"), connection=store.redis)
    queue.remove(parked)
    queue.schedule_job(parked, datetime.now(UTC) + timedelta(seconds=1))  # as the old retry did
    assert parked.get_status() is JobStatus.SCHEDULED
    start_worker()
    wait_for(lambda: _done(store, tournament_id), 30, "the parked match to be played")
    accounting = account(store, tournament_id)
    assert (accounting.planned, accounting.recorded) == (4, 4)
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    assert len(_logs(config, store, tournament_id)) == 4
    assert ScheduledJobRegistry(queue=queue).count == 0

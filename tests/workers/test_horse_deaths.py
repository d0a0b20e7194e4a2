"""Work horses SIGKILLed (their process group, as the out-of-memory killer or a crash ends
them) while they play matches the way the Procfile runs them, many at once in one horse
(``GONGZHU_MATCHES_PER_WORKER=64``): each death costs the match it cut short exactly one
retry, and the worker queues the match again at once, not a sweep a minute on; a match the
horse had taken and not started spends none; a match fails for good only at its fourth death
(one run and ``MATCH_RETRIES`` retries). And the worker SIGKILLed, its horse alive: the
horse's matches are recorded once. Real ``python -m workers worker`` processes, a real Redis,
a real bot server on loopback."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import ClassVar

import pytest
from rq import Queue, Worker
from rq.job import Job, JobStatus

from arena.config import Config
from arena.context import Arena
from arena.queue import MATCH_RETRIES, match_job_id, tournament_job_id
from arena.records import Format, MatchStatus, TournamentStatus
from arena.store import Store, keys, replies
from arena.tournaments import expand
from referee import Card, Observation
from tests.reliability.accounting import account
from tests.workers.conftest import start_worker_process, stop_workers
from tests.workers.crashes import alive, horse_of, running_matches, sigkill, wait_for
from tests.workers.stalling_worker import MARK_ENV, STALL_AT_ENV
from tests.workers.test_worker_tournaments import Deliberate, _done, _logs, _register, _start

REQUEUE_BOUND_S = 5.0
"""How soon a dead horse's match must be back on the queue. Its worker waits on the horse
(``waitpid``), so it learns of the death at once, and puts the jobs back in a few Redis round
trips (0.3 s for 50 matches, test_in_flight.py): 5 s leaves room for a busy machine and stays
far below the two other ways a job comes back, both out of reach here: the abandoned-job
sweep (a heartbeat, then the 60 s grace configured below) and rq's sweep of its intermediate
list (a minute)."""
HOUSE = ["house:easy", "house:normal", "house:hard"]


class Steady(Deliberate):
    """The lowest card after 250 ms, counting the decisions it is asked: a one-hand match
    lasts about 4 s."""

    name = "steady"
    delay_s: ClassVar[float] = 0.25
    asked: ClassVar[int] = 0
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def play(self, obs: Observation) -> Card:
        with Steady._lock:
            Steady.asked += 1
        return super().play(obs)


@pytest.fixture
def config(config: Config) -> Config:
    """Matches in flight in one horse, as the Procfile runs them, taken whatever the machine's
    load (``admission_lateness_ms`` 0, test_admission.py's question); a job abandoned only
    after a minute, so that a match back within the test was put back by its worker."""
    return dataclasses.replace(
        config, matches_per_worker=64, abandoned_after_s=60, admission_lateness_ms=0.0
    )


class Workers:
    """The worker processes of one test, their output in ``worker.log``."""

    def __init__(self, config: Config, directory: Path) -> None:
        self.config = config
        self.directory = directory
        self.started: list[subprocess.Popen[bytes]] = []

    @property
    def mark(self) -> Path:
        """The file a stalled horse makes when it stops."""
        return self.directory / "stalled"

    def start(self, stall: str | None = None) -> subprocess.Popen[bytes]:
        """A worker process, its horse stopped once at ``stall``
        (:data:`tests.workers.stalling_worker.POINTS`), if one is named."""
        with (self.directory / "worker.log").open("ab") as log:
            if stall is None:
                process = start_worker_process(self.config, output=log)
            else:
                process = start_worker_process(
                    self.config,
                    output=log,
                    module="tests.workers.stalling_worker",
                    extra_env={STALL_AT_ENV: stall, MARK_ENV: str(self.mark)},
                )
        self.started.append(process)
        return process


@pytest.fixture
def workers(config: Config, tmp_path: Path) -> Iterator[Workers]:
    """Starts worker processes; all are stopped after the test."""
    started = Workers(config, tmp_path)
    yield started
    stop_workers(started.started)


def _planned(config: Config, store: Store, bot: str, *, duplicate: bool) -> list[str]:
    """A tournament of ``bot`` and the three house bots, one hand a match (one match, or its
    four seat rotations when ``duplicate``), planned and queued before any worker runs, its
    own job taken off the queue: the queue holds its match jobs only. Returns their match ids
    in the order they are queued."""
    tournament_id = _start(
        config, store, [bot, *HOUSE], format=Format(duplicate=duplicate, hands=1)
    )
    expand(Arena.from_config(config), tournament_id)
    queue = _queue(config, store)
    queue.remove(tournament_job_id(tournament_id))
    return [job_id.removeprefix("match-") for job_id in queue.get_job_ids()]


def _queue(config: Config, store: Store) -> Queue:
    return Queue(config.queue_name, connection=store.redis)


def _job(store: Store, match_id: str) -> Job:
    return Job.fetch(match_job_id(match_id), connection=store.redis)


def _back_on_the_queue(config: Config, store: Store, match_id: str) -> bool:
    """The match's job is queued, or taken again and started."""
    job = _job(store, match_id)
    queued = job.id in _queue(config, store).get_job_ids()
    return queued or job.get_status() is JobStatus.STARTED


def _tournament_of(store: Store, match_id: str) -> str:
    match = store.get_match(match_id)
    assert match is not None and match.tournament_id is not None
    return match.tournament_id


def test_each_death_of_its_horse_costs_the_match_one_retry_and_the_fourth_fails_it(
    config: Config, store: Store, stack: ExitStack, workers: Workers
) -> None:
    bot = _register(store, stack, Steady, "steady")
    [match_id] = _planned(config, store, bot, duplicate=False)
    worker = workers.start()
    requeued_s = []
    for death in range(1, MATCH_RETRIES + 2):
        left = MATCH_RETRIES + 1 - death  # the retries left while it plays this time
        asked = Steady.asked

        def played(left: int = left, asked: int = asked) -> bool:  # started, asking its cards
            job = _job(store, match_id)
            started = job.get_status() is JobStatus.STARTED
            return started and job.retries_left == left and Steady.asked > asked

        def put_back(left: int = left) -> bool:  # one retry spent, and queued again
            return _job(store, match_id).retries_left == left - 1 and _back_on_the_queue(
                config, store, match_id
            )

        wait_for(played, 30, f"run {death} of the match")
        os.killpg(horse_of(worker.pid), signal.SIGKILL)
        killed_at = time.monotonic()
        if left:
            wait_for(put_back, REQUEUE_BOUND_S, f"the match to be queued again (death {death})")
        else:
            wait_for(
                lambda: _job(store, match_id).get_status() is JobStatus.FAILED,
                REQUEUE_BOUND_S,
                "the match's job to fail for good at its fourth death",
            )
        requeued_s.append(round(time.monotonic() - killed_at, 2))
    print(f"each death's match put back (or failed, the last) after {requeued_s} s")

    def marked_failed() -> bool:
        match = store.get_match(match_id)
        return match is not None and match.status is MatchStatus.FAILED

    wait_for(marked_failed, 10, "the sweep to mark the match failed")
    job = _job(store, match_id)
    assert job.retries_left == 0 and job.get_status() is JobStatus.FAILED
    match = store.get_match(match_id)
    assert match is not None and match.result is None and store.replay_blob(match_id) is None
    assert "Work-horse terminated unexpectedly" in str(match.failure)
    assert "(signal 9)" in str(match.failure)
    tournament = store.get_tournament(_tournament_of(store, match_id))
    assert tournament is not None and tournament.status is TournamentStatus.DONE_WITH_FAILURES
    assert worker.poll() is None  # the worker outlived its four horses


STOPPED_AT = {
    "registering": 1,  # the second match: taken off the queue, not yet the horse's own
    "starting": 0,  # the first match: the horse's own, its thread not started
}
"""Where the horse is killed, and which match it had not started then (the first it was
playing)."""


@pytest.mark.parametrize("point", list(STOPPED_AT))
def test_a_match_its_horse_had_not_started_is_queued_again_at_once_with_no_retry_spent(
    point: str, config: Config, store: Store, stack: ExitStack, workers: Workers
) -> None:
    bot = _register(store, stack, Steady, "steady")
    planned = _planned(config, store, bot, duplicate=True)  # four matches
    worker = workers.start(stall=point)
    wait_for(workers.mark.exists, 30, f"the horse to stop {point} a match")
    [rq_worker] = Worker.all(queue=_queue(config, store))
    taken_key = keys.taken(config.queue_name, rq_worker.name)
    taken = [j.removeprefix("match-") for j in replies.texts(store.redis.lrange(taken_key, 0, -1))]
    registered = [e.job_id.removeprefix("match-") for e in rq_worker.get_current_executions()]
    if point == "registering":  # the first match started, the second on the horse's list
        assert (registered, taken) == (planned[:1], planned[1:2])
        assert _job(store, planned[0]).get_status() is JobStatus.STARTED
    else:  # the first match registered, not started (still on rq's intermediate list)
        assert (registered, taken) == (planned[:1], [])
        assert _job(store, planned[0]).get_status() is JobStatus.QUEUED
    cut_short = STOPPED_AT[point]
    [unstarted] = planned[cut_short : cut_short + 1]
    os.killpg(horse_of(worker.pid), signal.SIGKILL)
    back_s = wait_for(
        lambda: _back_on_the_queue(config, store, unstarted),
        REQUEUE_BOUND_S,
        "the match the horse had not started to be queued again",
    )
    print(
        f"{point}: the match the dead horse had not started was queued again after {back_s:.2f} s"
    )
    tournament_id = _tournament_of(store, unstarted)
    wait_for(lambda: _done(store, tournament_id), 90, "the tournament to finish")
    accounting = account(store, tournament_id)
    assert (accounting.planned, accounting.recorded) == (4, 4)
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    assert len(_logs(config, store, tournament_id)) == 4
    retries = {m: _job(store, m).retries_left for m in planned}
    spent = {m: MATCH_RETRIES - 1 for m in planned[:cut_short]}  # the match it was playing
    assert retries == {**dict.fromkeys(planned, MATCH_RETRIES), **spent}
    assert store.redis.llen(taken_key) == 0
    assert _queue(config, store).intermediate_queue.get_job_ids() == []


def test_a_killed_worker_leaves_its_horse_to_record_its_matches_once(
    config: Config, store: Store, stack: ExitStack, workers: Workers
) -> None:
    """The worker's main process SIGKILLed (not its horse) while its horse plays: the horse
    takes no new match, finishes those it has and records them once; the worker started again
    (as the run command's supervisor does) plays the rest."""
    bot = _register(store, stack, Steady, "steady")
    planned = _planned(config, store, bot, duplicate=True)
    worker = workers.start()
    tournament_id = _tournament_of(store, planned[0])
    wait_for(lambda: bool(running_matches(store, tournament_id)), 30, "a match to be played")
    horse = horse_of(worker.pid)
    in_flight = set(running_matches(store, tournament_id))
    sigkill(worker.pid)
    worker.wait(5)
    workers.start()
    wait_for(lambda: _done(store, tournament_id), 90, "the tournament to finish")
    wait_for(lambda: not alive(horse), 30, "the orphaned horse to end")
    accounting = account(store, tournament_id)
    assert (accounting.planned, accounting.recorded) == (4, 4)
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    assert len(_logs(config, store, tournament_id)) == 4
    # the orphan finished what it played (well within the 60 s grace): none played again
    assert all(_job(store, m).retries_left == MATCH_RETRIES for m in planned)
    print(f"{len(in_flight)} match(es) in flight when the worker was killed, recorded once")

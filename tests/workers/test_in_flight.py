"""One worker process keeps many matches in flight (``GONGZHU_MATCHES_PER_WORKER``, its work
horse's threads, :mod:`workers.stable`): with bots that answer after 50 ms, at least 50 matches
are asked a decision at the same instant; the horse SIGKILLed right then, its worker puts back
every match it had in flight at once (its log names each), and each match is recorded exactly
once. One real worker process plays one tournament for the module's tests."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue
from rq.job import Job

from arena.config import Config, ConfigError
from arena.context import Arena
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import Format
from arena.store import Store
from arena.tournaments import expand
from referee import Rules
from tests.bot_sdk.bot_sdk_support import running
from tests.reliability.accounting import Accounting, account
from tests.workers.conftest import arena_config, start_worker_process, stop_workers
from tests.workers.crashes import horse_of, running_matches, sigkill, wait_for
from tests.workers.test_worker_tournaments import _done, _logs, _start
from tests.workers.workers_support import StartResponse, lowest_card
from workers.stable import POLL_S

IN_FLIGHT = 64
"""The worker's ``GONGZHU_MATCHES_PER_WORKER``, and the tournament's matches (1 table, 16 deals
in 4 rotations)."""
AT_ONCE = 50
PUT_BACK = "failed (Work-horse terminated unexpectedly"
"""What the worker logs for each job it puts back after its horse died (the sweep does not)."""


class CountingBot:
    """A WSGI bot answering every decision with its lowest card after 50 ms, counting the
    decisions being asked at once (over all its seats and matches)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked = 0
        self.peak = 0

    def __call__(self, environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        request = json.loads(environ["wsgi.input"].read(size))
        if request["type"] != "decision":
            start("204 No Content", [])
            return [b""]
        with self.lock:
            self.asked += 1
            self.peak = max(self.peak, self.asked)
        time.sleep(0.05)
        with self.lock:
            self.asked -= 1
        start("200 OK", [("Content-Type", "application/json")])
        return [lowest_card(request)]


@dataclass(frozen=True)
class Run:
    tournament_id: str
    killed: set[str]
    """The matches running when the horse was SIGKILLed."""
    asked_at_once: int
    """The most decisions the bots were asked at once."""
    requeued_s: float
    """From the kill until every killed match was queued again."""
    worker_log: Path
    accounting: Accounting
    stuck: list[str]
    """Job ids left in rq's intermediate list (taken from the queue, never started) once done."""
    participants: list[str]
    worker: subprocess.Popen[bytes]


@pytest.fixture(scope="module")
def config(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Config:
    """Many matches at once; a dead worker's jobs abandoned only after a minute, so that a
    match recovered within the test was put back by its worker, not by the sweep. The worker
    takes matches whatever its threads' lateness (``admission_lateness_ms`` 0): the other test
    processes on the machine make it late, and the limit is test_admission.py's question."""
    redis.Redis.from_url(redis_server).flushdb()
    base = arena_config(redis_server, tmp_path_factory.mktemp("in-flight"))
    return dataclasses.replace(
        base, matches_per_worker=IN_FLIGHT, abandoned_after_s=60, admission_lateness_ms=0.0
    )


@pytest.fixture(scope="module")
def store(config: Config) -> Store:
    return Store.from_config(config)


@pytest.fixture(scope="module")
def run(config: Config, store: Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Two bots on one server (a thread per request) and two house bots at one table: 64
    matches on one worker process; its horse SIGKILLed once 50 decisions are asked at once."""
    bot = CountingBot()
    with ExitStack() as stack:
        participants = []
        for name in ("counting-1", "counting-2"):
            url = stack.enter_context(running(bot, threads=2 * IN_FLIGHT))
            created, _ = store.create_bot(
                name=name,
                endpoint=url,
                description="",
                contact="t@example.com",
                version="1",
                secret=f"secret-of-{name}",
            )
            participants.append(created.id)
        participants += ["house:easy", "house:normal"]
        tournament_id = _planned(config, store, participants, IN_FLIGHT)  # before the worker
        worker_log = tmp_path_factory.mktemp("in-flight-worker") / "worker.log"
        worker = start_worker_process(config, output=stack.enter_context(worker_log.open("wb")))
        stack.callback(stop_workers, [worker])
        killed = _stopped_with_fifty_running(config, store, tournament_id, worker.pid)
        sigkill(horse_of(worker.pid))
        requeued_s = wait_for(
            lambda: all(_retries_left(store, m) < MATCH_RETRIES for m in killed),
            config.abandoned_after_s,
            "the killed matches to be queued again",
        )
        wait_for(lambda: _done(store, tournament_id), 180, "the tournament to finish")
        accounting = account(store, tournament_id)
        stuck = _queue(config, store).intermediate_queue.get_job_ids()
        yield Run(
            tournament_id,
            killed,
            bot.peak,
            requeued_s,
            worker_log,
            accounting,
            stuck,
            participants,
            worker,
        )


def test_a_worker_keeps_fifty_matches_in_flight(run: Run) -> None:
    """The matches the store shows running at one instant (the run waited for 50, then killed
    the horse)."""
    print(
        f"{len(run.killed)} matches running when the horse was killed; "
        f"at most {run.asked_at_once} decisions asked at once"
    )
    assert len(run.killed) >= AT_ONCE


def test_a_killed_horse_has_every_match_it_had_in_flight_played_again_once(
    run: Run, config: Config, store: Store
) -> None:
    print(f"the {len(run.killed)} killed matches were queued again {run.requeued_s:.1f} s on")
    assert run.requeued_s < config.abandoned_after_s  # by the worker: the sweep waits longer
    put_back = run.worker_log.read_text()  # and the worker says it put back each of them
    assert [m for m in run.killed if f"job {match_job_id(m)} {PUT_BACK}" not in put_back] == []
    assert (run.accounting.planned, run.accounting.recorded) == (IN_FLIGHT, IN_FLIGHT)
    assert (run.accounting.lost, run.accounting.duplicated) == (0, 0)
    logs = _logs(config, store, run.tournament_id)  # sealed, and each verifies
    assert len(logs) == IN_FLIGHT
    retries = {m: _retries_left(store, m) for m in logs}
    assert all(retries[m] == MATCH_RETRIES - 1 for m in run.killed)  # played again once
    assert run.stuck == []  # or rq's sweep would fail them once more, a minute on
    # the others ran once (or had started, not yet marked running, when the horse was killed;
    # those taken and not started spend no retry: test_horse_deaths.py)
    assert set(retries.values()) <= {MATCH_RETRIES, MATCH_RETRIES - 1}


def test_a_worker_asked_to_stop_finishes_its_matches_in_flight_and_takes_no_more(
    run: Run, config: Config, store: Store
) -> None:
    first = _planned(config, store, run.participants, 8)
    wait_for(  # all 8 taken (a match still queued at the signal is rightly left queued)
        lambda: len(running_matches(store, first)) + account(store, first).recorded == 8,
        60,
        "the 8 matches in flight",
    )
    os.kill(run.worker.pid, signal.SIGTERM)  # a warm shutdown, as a process manager asks
    time.sleep(POLL_S + 0.5)  # a horse waiting on the queue when asked waits no longer than this
    later = _planned(config, store, run.participants, 8)
    assert run.worker.wait(120) == 0
    assert account(store, first).recorded == 8  # the matches in flight finished, once each
    assert all(_retries_left(store, m) == MATCH_RETRIES for m in _matches(store, first))
    assert account(store, later).recorded == 0  # queued after the signal: left queued
    assert _queue(config, store).count == 8 + 1  # its matches and its own job


def _stopped_with_fifty_running(
    config: Config, store: Store, tournament_id: str, worker: int
) -> set[str]:
    """The matches running in the worker's horse, once it is stopped (SIGSTOP) with 50 of
    them. (The horse is looked up then: the tournament's job may have had a horse of its
    own.)"""
    while True:
        wait_for(
            lambda: len(running_matches(store, tournament_id)) >= AT_ONCE,
            120,
            f"{AT_ONCE} matches in flight",
        )
        horse = horse_of(worker)
        os.kill(horse, signal.SIGSTOP)  # nothing it plays changes until it is killed
        running = set(running_matches(store, tournament_id))
        if len(running) >= AT_ONCE:
            return running
        os.kill(horse, signal.SIGCONT)  # one finished meanwhile: look again


def _planned(config: Config, store: Store, participants: list[str], matches: int) -> str:
    """A one-table tournament of ``matches`` one-hand matches, planned and queued (its job's
    expansion finds them planned)."""
    tournament_id = _start(
        config,
        store,
        participants,
        format=Format(duplicate=True, matches_per_table=matches // 4, hands=1),
        rules=Rules.with_variants("no_exposure"),
    )
    expand(Arena.from_config(config), tournament_id)
    return tournament_id


def _queue(config: Config, store: Store) -> Queue:
    return Queue(config.queue_name, connection=store.redis)


def _matches(store: Store, tournament_id: str) -> list[str]:
    found = store.list_matches(page=1, per_page=100, tournament_id=tournament_id).items
    return [m.id for m in found]


def _retries_left(store: Store, match_id: str) -> int:
    retries = Job.fetch(match_job_id(match_id), connection=store.redis).retries_left
    assert retries is not None
    return retries


def test_the_matches_a_worker_plays_at_once_are_configured() -> None:
    environment = {"REDIS_URL": "redis://r"}
    assert Config.from_environment(environment).matches_per_worker == 64
    more = {**environment, "GONGZHU_MATCHES_PER_WORKER": "100"}
    assert Config.from_environment(more).matches_per_worker == 100
    with pytest.raises(ConfigError, match="GONGZHU_MATCHES_PER_WORKER must be at least 1, not 0"):
        Config.from_environment({**environment, "GONGZHU_MATCHES_PER_WORKER": "0"})

"""A work horse SIGKILLed between writing a match's log to the archive and recording the result:
the match is played again and recorded once, its log read back from the archive intact, and the
dead horse's blob is the one no match names, which the sweep removes (real `python -m workers
worker` processes, a real Redis, a real bot server on loopback).

To stop the horse exactly there, the test pauses Redis's writes (``CLIENT PAUSE WRITE``) while
the match is played: the horse finishes the match, writes the log to the archive (a file, which
the pause does not touch), then blocks on its first Redis write, the record's. The test sees
the new blob, kills the horse, and lets Redis go on."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from rq.job import Job

from arena import archiving
from arena.config import Config
from arena.context import Arena
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import MatchStatus
from arena.store import Store, keys
from tests.workers.crashes import (
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
    _done,
    _logs,
    _register,
    _start,
)

PAUSE_MS = 60_000


@pytest.fixture
def config(config: Config) -> Config:
    return crash_config(config)


def blobs(config: Config) -> set[str]:
    return {path.name for path in Path(config.archive).glob("??/*") if len(path.name) == 64}


def test_a_horse_killed_between_the_archive_write_and_the_record_leaves_it_recorded_once(
    config: Config, store: Store, start_worker: Callable[[], Any]
) -> None:
    with ExitStack() as stack:
        bot = _register(store, stack, Deliberate, "deliberate")
        tournament_id = _start(config, store, [bot])  # filled with three house bots: 4 matches
        worker = start_worker()

        wait_for(lambda: bool(running_matches(store, tournament_id)), 30, "a match to start")
        [killed] = running_matches(store, tournament_id)
        before = blobs(config)
        horse = horse_of(worker.pid)
        store.redis.execute_command("CLIENT", "PAUSE", PAUSE_MS, "WRITE")
        try:
            wait_for(lambda: blobs(config) != before, 30, "the match's log in the archive")
            time.sleep(0.2)  # the horse reaches its record's first write, and waits there
            [orphan] = blobs(config) - before
            sigkill(horse)
        finally:
            store.redis.execute_command("CLIENT", "UNPAUSE")

        def recorded() -> bool:
            match = store.get_match(killed)
            return match is not None and match.status is MatchStatus.DONE

        wait_for(recorded, recovery_bound_s(config), "the killed match to be recorded")
        wait_for(lambda: _done(store, tournament_id), 60, "the tournament to finish")
    _assert_counted_once(store, tournament_id, 4, 4)
    logs = _logs(config, store, tournament_id)  # each read from the archive, sealed and verified
    assert len(logs) == 4 and killed in logs
    assert len(store.rating_history(bot)) == 4  # rated once per match, the killed one too
    retries_left = Job.fetch(match_job_id(killed), connection=store.redis).retries_left
    assert retries_left == MATCH_RETRIES - 1  # played again once
    named = {m.id: store.redis.hget(keys.match(m.id), "log_sha256") for m in _matches(store)}
    assert orphan not in {n.decode() for n in named.values() if n is not None}
    assert blobs(config) == {n.decode() for n in named.values() if n is not None} | {orphan}
    arena = Arena.from_config(config)
    assert archiving.sweep(arena) == 0  # the orphan is not a day old yet
    assert archiving.sweep(arena, now=time.time() + archiving.SWEEP_AGE_S + 60) == 1
    assert orphan not in blobs(config) and len(blobs(config)) == 4
    assert len(_logs(config, store, tournament_id)) == 4


def _matches(store: Store) -> list[Any]:
    return store.list_matches(page=1, per_page=100).items

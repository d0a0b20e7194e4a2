"""A gauntlet survives a SIGKILLed work horse like any tournament: the killed rotation is played
again and recorded once, and the gauntlet deals on to its verdict with no operator action (real
`python -m workers worker` processes, a real Redis, a real bot server on loopback)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any, ClassVar

import pytest
from rq.job import Job

from arena import gauntlets
from arena.config import Config
from arena.context import Arena
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import OPERATOR, MatchStatus, TournamentStatus
from arena.store import Store
from referee import Card, Observation
from tests.workers.crashes import (
    crash_config,
    horse_of,
    recovery_bound_s,
    running_matches,
    sigkill,
    wait_for,
)
from tests.workers.test_worker_tournaments import Deliberate, _register


@pytest.fixture
def config(config: Config) -> Config:
    return crash_config(config)


class SlowAtFirst(Deliberate):
    """Thinks 80 ms a card for its first 40 cards (the rotation the test kills is among them),
    then plays at once: the gauntlet's other deals go quickly."""

    thought: ClassVar[int] = 0

    def play(self, obs: Observation) -> Card:
        SlowAtFirst.thought += 1
        if SlowAtFirst.thought <= 40:
            return super().play(obs)
        return obs.legal.lowest()


def test_a_gauntlet_whose_horse_is_killed_mid_match_plays_on_to_its_verdict(
    config: Config, store: Store, start_worker: Callable[[], Any]
) -> None:
    arena = Arena.from_config(config)
    with ExitStack() as stack:
        slow = _register(store, stack, SlowAtFirst, "slow-at-first")
        opponents = ("house:easy", "house:easy")
        request = gauntlets.Request("house:normal", slow, opponents, max_deals=10, hands=1)
        made = gauntlets.create(arena, request, started_by=OPERATOR, manages=[])
        worker = start_worker()

        wait_for(lambda: bool(running_matches(store, made.id)), 30, "a rotation to start")
        time.sleep(0.3)
        [killed] = running_matches(store, made.id)
        sigkill(horse_of(worker.pid))
        killed_at = time.monotonic()

        def over() -> bool:
            return gauntlets.progress(arena, made.id).verdict != "running"

        wait_for(over, recovery_bound_s(config) + 60, "the gauntlet to reach its verdict")
        recovered_s = time.monotonic() - killed_at
    done = gauntlets.progress(arena, made.id)
    print(f"horse SIGKILLed: the gauntlet reached {done.verdict!r} {recovered_s:.1f} s later")
    assert done.tournament.status is TournamentStatus.DONE
    assert not any(d.void for d in done.deals)  # the killed rotation was played again
    played = [gauntlets.match_id(made.id, d.deal, r) for d in done.deals for r in range(4)]
    assert killed in played
    records = store.get_matches(played)
    assert all(m.status is MatchStatus.DONE for m in records) and len(records) == len(played)
    assert done.tournament.done == len(played)  # each rotation recorded once
    retries_left = Job.fetch(match_job_id(killed), connection=store.redis).retries_left
    assert retries_left == MATCH_RETRIES - 1  # the killed rotation's job ran again, once
    assert store.live_gauntlets() == {}

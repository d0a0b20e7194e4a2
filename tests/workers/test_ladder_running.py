"""The ladder runs itself with the real ``cron`` and worker processes and real bot servers on
loopback: a newly entered bot is seated within one interval, and no bot ever plays more ladder
matches at once than its owner allows."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, ClassVar

import pytest
from rq import Queue

from arena.config import Config
from arena.records import MatchStatus
from arena.store import Store
from bot_sdk import Bot
from referee import Card, Observation
from tests.workers.conftest import start_worker_process, stop_workers
from tests.workers.crashes import wait_for
from tests.workers.ladder_support import enter, ladder_config


@pytest.fixture
def config(config: Config) -> Config:
    return ladder_config(config)


class Counting(Bot):
    """Plays the lowest card after 30 ms, counting how many of its requests are in flight at
    once (a match asks one seat one thing at a time: two at once are two matches)."""

    name = "counting"
    lock = threading.Lock()
    in_flight: ClassVar[Counter[str]] = Counter()
    most: ClassVar[Counter[str]] = Counter()

    def play(self, obs: Observation) -> Card:
        with self.lock:
            self.in_flight[self.name] += 1
            self.most[self.name] = max(self.most[self.name], self.in_flight[self.name])
        try:
            time.sleep(0.03)
            return obs.legal.lowest()
        finally:
            with self.lock:
                self.in_flight[self.name] -= 1


def _start_cron(config: Config, stack: ExitStack) -> None:
    stack.callback(stop_workers, [start_worker_process(config, "cron")])


def test_a_new_ladder_bot_gets_its_first_rated_match_within_one_interval(
    config: Config, store: Store, stack: ExitStack, start_worker: Callable[[], Any]
) -> None:
    start_worker()
    _start_cron(config, stack)
    time.sleep(1.0)  # the cron process is up and has run its first round
    registered_at = time.monotonic()
    newcomer = enter(store, stack, "newcomer")
    enter(store, stack, "partner")

    def seated() -> bool:
        return any(newcomer in seats for seats in store.open_ladder_tables().values())

    wait_for(seated, 30, "the newcomer to be seated")
    waited = time.monotonic() - registered_at
    assert waited <= config.ladder_interval_s + 1.0, waited

    def rated() -> bool:
        rating = store.rating(newcomer)
        return rating is not None and rating.matches >= 1

    wait_for(rated, 60, "its first rated match")
    [match] = [m for m in store.list_matches(page=1, per_page=10, bot_id=newcomer).items
               if m.status is MatchStatus.DONE]  # fmt: skip
    assert match.result is not None and match.tournament_id is not None
    tournament = store.get_tournament(match.tournament_id)
    assert tournament is not None and tournament.ladder and tournament.spec.rated
    assert [r.version for r in store.rating_versions(newcomer)] == ["2.5"]  # from its hello


@pytest.fixture
def counting() -> Iterator[type[Counting]]:
    Counting.in_flight.clear()
    Counting.most.clear()
    yield Counting


def test_no_bot_plays_more_ladder_matches_at_once_than_its_owner_allows(
    config: Config,
    store: Store,
    stack: ExitStack,
    start_worker: Callable[[], Any],
    counting: type[Counting],
) -> None:
    limits = {"one_a": 1, "one_b": 1, "two_a": 2, "two_b": 2}
    bots = {
        enter(store, stack, name, counting, max_concurrent=limit): limit
        for name, limit in limits.items()
    }
    names = {bot_id: name for bot_id, name in zip(bots, limits, strict=True)}
    for _ in range(3):
        start_worker()
    _start_cron(config, stack)
    most_running: Counter[str] = Counter()
    played: Counter[str] = Counter()
    started = time.monotonic()
    # what the arena says is running, sampled for 25 s, and on (up to 120 s, on a busy
    # machine) until every bot has played 4 matches
    while time.monotonic() < started + 25 or (
        time.monotonic() < started + 120 and min(played[b] for b in bots) < 4
    ):
        found = store.list_matches(page=1, per_page=500).items
        now = Counter(b for m in found if m.status is MatchStatus.RUNNING for b in m.seats)
        for bot_id in bots:
            most_running[bot_id] = max(most_running[bot_id], now[bot_id])
        played = Counter(b for m in found if m.status is MatchStatus.DONE for b in m.seats)
        time.sleep(0.05)
    for bot_id, limit in bots.items():
        assert played[bot_id] >= 4, (names[bot_id], played)  # the ladder kept them playing
        assert most_running[bot_id] <= limit, (names[bot_id], most_running)
        assert counting.most[names[bot_id]] <= limit, (names[bot_id], counting.most)
    # the bots allowed two did play two at once: the limit is what held them
    assert max(counting.most[names[b]] for b, limit in bots.items() if limit == 2) == 2
    queue = Queue(config.queue_name, connection=store.redis)
    assert queue.count <= 2 * len(bots)  # rounds do not pile up jobs

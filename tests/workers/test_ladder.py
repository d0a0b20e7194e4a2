"""The ladder runs itself: matchmaking rounds seat tables of ladder members by need, a table's
rotations are played one after another (so a bot's limit on concurrent matches holds), a
round picks up what a crash left, and a paused bot plays no more. First in-process, one step
at a time; then with the real ``cron`` and worker processes, real bot servers on loopback."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, ClassVar

import pytest
from rq import Queue

from arena import ladder, matches
from arena.config import Config
from arena.context import Arena
from arena.queue import match_job_id
from arena.records import BotStatus, MatchStatus, Rating, TournamentStatus
from arena.store import Store, codecs
from bot_sdk import Bot
from bot_sdk.server import make_app
from referee import Card, Observation
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.conftest import ROOT, environment, stop_workers
from tests.workers.crashes import wait_for

HOUSE = ("house:easy", "house:normal")
"""The house members of these ladders (Hard thinks for 150 ms a card: left out, for speed)."""


class Quick(Bot):
    name = "quick"
    version = "2.5"

    def play(self, obs: Observation) -> Card:
        return obs.legal.lowest()


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


@pytest.fixture
def config(config: Config) -> Config:
    return dataclasses.replace(
        config, ladder_interval_s=2, ladder_tables=4, ladder_hands=1, ladder_house=HOUSE
    )


def _enter(
    store: Store,
    stack: ExitStack,
    name: str,
    bot: type[Bot] = Quick,
    *,
    max_concurrent: int = 1,
    status: BotStatus = BotStatus.ACTIVE,
) -> str:
    """A bot served on loopback, registered and entered in the ladder."""
    secret = f"secret-of-{name}"
    served = type(name, (bot,), {"name": name})
    url = stack.enter_context(running(make_app(served, secret)))
    created, _ = store.create_bot(
        name=name,
        endpoint=url,
        description="",
        contact="t@example.com",
        version="2.5",
        secret=secret,
        status=status,
        ladder=True,
        max_concurrent=max_concurrent,
    )
    return created.id


def _queued(arena: Arena) -> list[str]:
    return [job.id for job in arena.queue.get_jobs()]


def _rotations(store: Store, table_id: str) -> list[str]:
    found = store.list_matches(page=1, per_page=10, tournament_id=table_id).items
    return sorted(m.id for m in found)


def test_a_table_plays_its_rotations_one_after_another_and_a_round_picks_up_after_a_crash(
    config: Config, store: Store, stack: ExitStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = Arena.from_config(config)
    first, second = _enter(store, stack, "first"), _enter(store, stack, "second")
    [table_id] = ladder.matchmake(arena)  # each has room for one table: one table of four
    table = store.get_tournament(table_id)
    assert table is not None and table.ladder and table.spec.rated
    assert sorted(table.spec.participants) == sorted([first, second, *HOUSE])
    assert store.list_tournaments(page=1, per_page=10).total == 0  # listed with the ladder
    assert [t.id for t in store.list_tournaments(page=1, per_page=10, ladder=True).items] == [
        table_id
    ]
    r1, r2, r3, r4 = _rotations(store, table_id)
    assert _queued(arena) == [match_job_id(r1)]  # only the first rotation is released
    assert ladder.matchmake(arena) == []  # both bots are at their one table
    assert _queued(arena) == [match_job_id(r1)]

    matches.play(arena, r1)  # a worker plays it: recorded, the next rotation released
    assert _queued(arena) == [match_job_id(r1), match_job_id(r2)]
    rating = store.rating(first)
    assert rating is not None and (rating.matches, rating.version) == (1, "2.5")
    played = store.get_match(r1)
    assert played is not None  # each seat's version, as it answered in hello
    assert dict(zip(played.seats, played.versions, strict=True)) == {
        first: "2.5",
        second: "2.5",
        "house:easy": "1",
        "house:normal": "1",
    }

    # a worker dies after recording r2 and before releasing r3: the next round releases it
    with monkeypatch.context() as patched:
        patched.setattr(ladder, "advance", lambda arena, table_id: None)
        matches.play(arena, r2)
    assert match_job_id(r3) not in _queued(arena)
    assert ladder.matchmake(arena) == []
    assert _queued(arena)[-1] == match_job_id(r3)

    # its owner pauses the second bot: the table stops before its next rotation
    matches.play(arena, r3)
    assert _queued(arena)[-1] == match_job_id(r4)
    store.set_bot_status(second, BotStatus.PAUSED)
    matches.play(arena, r4)  # already released: it plays
    tournament = store.get_tournament(table_id)
    assert tournament is not None and tournament.status is TournamentStatus.DONE
    assert ladder.matchmake(arena) == []  # three members left: no table
    assert store.open_ladder_tables() == {}
    rating = store.rating(first)
    assert rating is not None and rating.matches == 4
    assert [f.matches for f in rating.seats] == [1, 1, 1, 1]  # every seat once: a duplicate


def test_a_table_whose_bot_leaves_the_ladder_is_cancelled_before_its_next_rotation(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    first, second = _enter(store, stack, "first"), _enter(store, stack, "second")
    [table_id] = ladder.matchmake(arena)
    r1, r2, *_ = _rotations(store, table_id)
    store.update_bot(second, ladder=False)
    matches.play(arena, r1)
    tournament = store.get_tournament(table_id)
    assert tournament is not None and tournament.status is TournamentStatus.CANCELLED
    assert match_job_id(r2) not in _queued(arena)
    assert store.open_ladder_tables() == {}
    assert store.deal_secret(table_id) == store.revealed_secret(tournament)  # shown when over
    assert first in {r.bot_id for r in store.ratings([first])}


def test_the_neediest_bot_is_seated_first_and_paused_or_disconnected_bots_never(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(dataclasses.replace(config, ladder_tables=1))
    settled = [_enter(store, stack, f"settled{n}") for n in range(3)]
    paused = _enter(store, stack, "paused", status=BotStatus.PAUSED)
    pending = _enter(store, stack, "pending", status=BotStatus.PENDING)
    for bot_id in settled:
        store.redis.set(f"gz:rating:{bot_id}", codecs.to_json(Rating(bot_id, 25.0, 3.0)))
    newcomer = _enter(store, stack, "newcomer")
    [table_id] = ladder.matchmake(arena)
    table = store.get_tournament(table_id)
    assert table is not None and newcomer in table.spec.participants
    members = {m.bot_id for m in ladder.ladder_members(arena)}
    assert members == {*settled, newcomer, *HOUSE}
    assert paused not in members and pending not in members


def _start_cron(config: Config, stack: ExitStack) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "workers", "cron"],
        cwd=ROOT,
        env=environment(config),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    stack.callback(stop_workers, [process])


def test_a_new_ladder_bot_gets_its_first_rated_match_within_one_interval(
    config: Config, store: Store, stack: ExitStack, start_worker: Callable[[], Any]
) -> None:
    start_worker()
    _start_cron(config, stack)
    time.sleep(1.0)  # the cron process is up and has run its first round
    registered_at = time.monotonic()
    newcomer = _enter(store, stack, "newcomer")
    _enter(store, stack, "partner")

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
        _enter(store, stack, name, counting, max_concurrent=limit): limit
        for name, limit in limits.items()
    }
    names = {bot_id: name for bot_id, name in zip(bots, limits, strict=True)}
    for _ in range(3):
        start_worker()
    _start_cron(config, stack)
    most_running: Counter[str] = Counter()
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline:  # what the arena says is running, sampled
        found = store.list_matches(page=1, per_page=200).items
        now = Counter(b for m in found if m.status is MatchStatus.RUNNING for b in m.seats)
        for bot_id in bots:
            most_running[bot_id] = max(most_running[bot_id], now[bot_id])
        time.sleep(0.05)
    played = Counter(
        b for m in store.list_matches(page=1, per_page=500).items
        if m.status is MatchStatus.DONE for b in m.seats
    )  # fmt: skip
    for bot_id, limit in bots.items():
        assert played[bot_id] >= 4, (names[bot_id], played)  # the ladder kept them playing
        assert most_running[bot_id] <= limit, (names[bot_id], most_running)
        assert counting.most[names[bot_id]] <= limit, (names[bot_id], counting.most)
    # the bots allowed two did play two at once: the limit is what held them
    assert max(counting.most[names[b]] for b, limit in bots.items() if limit == 2) == 2
    queue = Queue(config.queue_name, connection=store.redis)
    assert queue.count <= 2 * len(bots)  # rounds do not pile up jobs

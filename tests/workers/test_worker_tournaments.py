"""Tournaments played by real `python -m workers worker` processes against a real Redis and
real bot servers on loopback: counts, sealed replays and duplicate deals (the crashes are in
test_crash_recovery.py)."""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any, ClassVar

import pytest
from rq import Queue

from arena.config import Config
from arena.queue import enqueue_tournament
from arena.records import Format, MatchStatus, TournamentSpec, TournamentStatus
from arena.store import Store
from bot_sdk import Bot
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from referee import Card, Observation, Rules
from replays.integrity import check, key_id_of, private_key_from_pem, unpack
from replays.log import TimeControl
from replays.upgrade import read_log
from replays.verify import verify
from tests.bot_sdk.bot_sdk_support import running
from tests.reliability.accounting import account
from tests.reliability.figures import record
from tests.workers.crashes import wait_for


class Deliberate(Bot):
    """Plays the lowest card after thinking 80 ms: a match takes a second or two."""

    name = "deliberate"
    delay_s: ClassVar[float] = 0.08

    def play(self, obs: Observation) -> Card:
        time.sleep(self.delay_s)
        return obs.legal.lowest()


def _register(store: Store, stack: ExitStack, bot: type[Bot], name: str) -> str:
    secret = f"secret-of-{name}"
    url = stack.enter_context(running(make_app(bot, secret)))
    created, _ = store.create_bot(
        name=name, endpoint=url, description="", contact="t@example.com", version="1", secret=secret
    )
    return created.id


def _start(config: Config, store: Store, participants: list[str], **changes: Any) -> str:
    """Create and queue a tournament of ``participants``: one hand per match, duplicate deals,
    unless ``changes`` (fields of :class:`TournamentSpec`) say otherwise."""
    spec = TournamentSpec(
        name="test",
        participants=tuple(participants),
        format=Format(duplicate=True, matches_per_table=1, hands=1),
        rules=Rules(),
        time_control=TimeControl(1000, 5000, 5),
    )
    spec = dataclasses.replace(spec, **changes)
    tournament_id = store.create_tournament(spec)
    store.move_tournament(
        tournament_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
    )
    enqueue_tournament(Queue(config.queue_name, connection=store.redis), tournament_id)
    return tournament_id


def _done(store: Store, tournament_id: str) -> bool:
    tournament = store.get_tournament(tournament_id)
    return tournament is not None and tournament.status is TournamentStatus.DONE


def _logs(config: Config, store: Store, tournament_id: str) -> dict[str, Any]:
    """Every stored replay of the tournament, its seal checked and the referee's verdict ok."""
    assert config.replay_key_path is not None
    key = private_key_from_pem(config.replay_key_path.read_bytes()).public_key()
    matches = store.list_matches(page=1, per_page=1000, tournament_id=tournament_id).items
    logs = {}
    for match in matches:
        assert match.status is MatchStatus.DONE and match.result is not None
        blob = store.replay_blob(match.id)
        assert blob is not None
        stored = unpack(blob)
        check(stored, {key_id_of(key): key})
        log = read_log(stored)
        result = verify(log)
        assert result.ok, result.discrepancy
        logs[match.id] = log
    return logs


def _assert_counted_once(
    store: Store, tournament_id: str, matches: int, per_participant: int
) -> None:
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None
    assert (tournament.total, tournament.done) == (matches, matches)
    standings = store.standings(tournament_id)
    assert sum(s.matches for s in standings) == 4 * matches
    assert {s.matches for s in standings} == {per_participant}
    assert sum(s.wins for s in standings) >= matches  # ties may share a win


def test_a_round_robin_of_five_completes_with_duplicate_deals(
    config: Config, store: Store, stack: ExitStack, start_worker: Callable[[], Any]
) -> None:
    bots = [_register(store, stack, LowestCard, f"lowest-{i}") for i in range(3)]
    participants = [*bots, "house:easy", "house:normal"]
    tournament_id = _start(config, store, participants)
    start_worker()
    start_worker()
    wait_for(lambda: _done(store, tournament_id), 60, "the tournament to finish")
    # 5 participants: 5 tables (each at 4), each deal played in 4 rotations
    _assert_counted_once(store, tournament_id, 20, 16)
    logs = _logs(config, store, tournament_id)
    assert len(logs) == 20
    by_seed: dict[str, list[Any]] = defaultdict(list)
    for log in logs.values():
        by_seed[log.deals.label or ""].append(log)
    assert len(by_seed) == 5
    for rotations in by_seed.values():
        assert len(rotations) == 4
        deals = {tuple(h.deal for h in log.hands) for log in rotations}
        assert len(deals) == 1  # the same cards in the same seats
        holders = {tuple(s.bot_id for s in log.seats) for log in rotations}
        assert len(holders) == 4  # held by different participants each time
    http = [s for log in logs.values() for s in log.seats if s.kind == "http"]
    assert http and all(s.bot_id in bots for s in http)
    requests = [
        d.request_sha256
        for log in logs.values()
        for h in log.hands
        for d in h.decisions
        if log.seats[d.seat].kind == "http"
    ]
    assert requests and all(requests)


def _assert_nothing_lost_or_duplicated(
    store: Store, tournament_id: str, crash: str, interrupted: int, **figures: Any
) -> None:
    """Every place a result is counted holds each match once; the figures for RELIABILITY.md
    (``figures``: more of them)."""
    accounting = account(store, tournament_id)
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    record(crash, interrupted_matches=interrupted, **dataclasses.asdict(accounting), **figures)


def test_a_match_job_run_twice_counts_once_and_a_cancelled_one_plays_nothing(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.workers.conftest import environment
    from workers.jobs import run_match, run_tournament

    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)
    tournament_id = _start(config, store, ["house:easy"])
    run_tournament(tournament_id)
    run_tournament(tournament_id)  # a replayed expansion queues nothing twice
    assert store.redis.llen(f"rq:queue:{config.queue_name}") == 1 + 4  # the tournament's job too
    first = f"{tournament_id}-t1-d1-r1"
    run_match(first)
    run_match(first)
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None and (tournament.done, tournament.total) == (1, 4)
    store.move_tournament(
        tournament_id, TournamentStatus.CANCELLED, allowed_from=[TournamentStatus.RUNNING]
    )
    run_match(f"{tournament_id}-t1-d1-r2")
    match = store.get_match(f"{tournament_id}-t1-d1-r2")
    assert match is not None and match.status is MatchStatus.QUEUED

"""A real arena for the end-to-end tests of the ``gongzhu`` command: the web service on a loopback
port, on its own Redis, with an archive in a temporary directory (no workers: a test plays what
it needs in-process, :func:`played_match`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from cryptography.fernet import Fernet

from arena.context import Arena
from arena.match_loop import InProcessSeat, play_match
from arena.records import Format, TournamentSpec
from arena.redis_server import start_redis
from bot_sdk.examples.lowest_card import LowestCard
from referee import Game, Rules
from replays.deals import DealSource, deal_seed
from replays.log import MatchLog, SeatInfo, TimeControl
from service import Config, create_app
from tests.pages.pages_support import serving

TOKEN = "cli-operator-token"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Config]]:
    """The arena's URL and its configuration."""
    redis = start_redis(tmp_path / "redis")
    config = Config(
        redis_url=redis.url,
        secret_key=Fernet.generate_key().decode(),
        operator_token=TOKEN,
        allow_private_endpoints=True,
        archive=str(tmp_path / "archive"),
    )
    try:
        with serving(create_app(config)) as url:
            yield url, config
    finally:
        redis.stop()


@pytest.fixture
def arena_url(served: tuple[str, Config]) -> str:
    return served[0]


class Played(NamedTuple):
    tournament_id: str
    match_id: str
    log: MatchLog


def played_match(arena: Arena, bot_id: str) -> Played:
    """A tournament (left running) of one one-hand match, ``bot_id`` in seat 0 against house
    bots, played in-process (every seat plays the lowest card) and recorded as a worker does."""
    seats = [bot_id, "house:easy", "house:normal", "house:hard"]
    rules = Rules(fixed_hands=1)
    spec = TournamentSpec("cup", tuple(seats), Format(), rules, TimeControl(1000, 30000, 5))
    tournament_id = arena.store.create_tournament(spec)
    match_id = f"{tournament_id}-t1-d1-r1"
    arena.store.create_match(match_id, seats=seats, tournament_id=tournament_id, deal_label="t1:d1")
    secret = arena.store.deal_secret(tournament_id)
    log = play_match(
        Game(rules, seed=deal_seed(secret, "t1:d1")),
        [
            InProcessSeat(bot, SeatInfo(s, p, bot.name, bot.version))
            for s, p, bot in zip(range(4), seats, [LowestCard() for _ in seats], strict=True)
        ],
        match_id=match_id,
        deals=DealSource.committed(secret, "t1:d1"),
        time_control=spec.time_control,
        tournament_id=tournament_id,
        rated=False,
    )
    arena.store.record_result(match_id, arena.sealed(log))
    return Played(tournament_id, match_id, log)

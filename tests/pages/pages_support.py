"""Helpers of the page tests: a served app, a match with faults over several hands, ratings
and head-to-head figures written as the store writes them."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from werkzeug.serving import make_server

from arena.match_loop import InProcessSeat, play_match
from arena.records import HeadToHead, Rating, RatingPoint
from arena.store import Store, codecs, keys
from bot_sdk.examples.lowest_card import LowestCard
from referee import Card, Game, Observation, Rules
from replays.deals import DealSource
from replays.integrity import key_id_of, private_key_from_pem, seal
from replays.log import SeatInfo, TimeControl
from service import Config


@contextmanager
def serving(app: Flask) -> Iterator[str]:
    """Serve ``app`` with werkzeug on a free loopback port; yield its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="test-pages")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


class Flaky(LowestCard):
    """Plays its lowest card, but answers one illegal card (its first chance to) and fails
    once with an exception (its 10th play): two faults, one of each kind."""

    def __init__(self) -> None:
        self.plays = 0
        self.cheated = False

    def play(self, obs: Observation) -> Card:
        self.plays += 1
        if self.plays == 10:
            raise RuntimeError("flaky on purpose")
        illegal = obs.hand - obs.legal
        if illegal and not self.cheated:
            self.cheated = True
            return illegal.lowest()
        return super().play(obs)


def faulty_log(
    config: Config,
    match_id: str,
    bots: list[str],
    *,
    hands: int,
    tournament_id: str | None = None,
    rated: bool = True,
) -> dict[str, Any]:
    """A sealed match of ``hands`` hands in which seat 1 makes two faults."""
    game = Game(Rules(fixed_hands=hands), seed=7)
    players = [
        InProcessSeat(Flaky() if seat == 1 else LowestCard(), SeatInfo(seat, bot_id, bot_id))
        for seat, bot_id in enumerate(bots)
    ]
    log = play_match(
        game,
        players,
        match_id=match_id,
        deals=DealSource.practice("7"),
        time_control=TimeControl(1000, 30000, 5),
        tournament_id=tournament_id,
        table_id="table-1" if tournament_id else None,
        rated=rated,
    )
    assert config.replay_key_path is not None
    key = private_key_from_pem(config.replay_key_path.read_bytes())
    return seal(log.to_json(), key, key_id=key_id_of(key.public_key()))


def write_version(store: Store, rating: Rating, mus_sigmas: Sequence[tuple[float, float]]) -> None:
    """Write one version's rating and its history (``(μ, σ)`` after each match, oldest first)
    the way :meth:`Store.record_result` does, without playing dozens of matches: the rating
    becomes the participant's current one (write the versions oldest first)."""
    points = [
        codecs.to_json(RatingPoint(f"m_{rating.bot_id}_{rating.version}_{n}", mu, sigma, ""))
        for n, (mu, sigma) in enumerate(mus_sigmas, start=1)
    ]
    pipe = store.redis.pipeline()
    pipe.set(keys.rating(rating.bot_id), codecs.to_json(rating))
    pipe.hset(keys.rating_versions(rating.bot_id), rating.version, codecs.to_json(rating))
    pipe.zadd(keys.LADDER, {rating.bot_id: rating.conservative})
    if points:
        pipe.rpush(keys.history(rating.bot_id, rating.version), *points)
    pipe.execute()


def write_head_to_head(store: Store, bot_id: str, opponent: str, figures: HeadToHead) -> None:
    """Add ``figures`` against ``opponent`` to the bot's head-to-head counters, as a rated
    match's recording does."""
    pipe = store.redis.pipeline()
    for figure in ("matches", "ahead", "behind", "points", "hands"):
        pipe.hincrby(keys.head_to_head(bot_id), f"{opponent}|{figure}", getattr(figures, figure))
    pipe.execute()


def utc_iso(stored: str) -> str:
    """A stored time as the pages write it in ``<time datetime>``: UTC, to the second, ``Z``."""
    return datetime.fromisoformat(stored).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

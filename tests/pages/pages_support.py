"""Helpers of the page tests: a served app, a match with faults over several hands."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from werkzeug.serving import make_server

from arena.match_loop import InProcessSeat, play_match
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

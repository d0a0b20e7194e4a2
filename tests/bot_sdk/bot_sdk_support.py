"""Shared helpers of the bot SDK tests: real games recorded as protocol messages, and bot
servers on loopback ports."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ClassVar
from wsgiref.types import WSGIApplication

from waitress import wasyncore

from bot_sdk import Bot
from bot_sdk.protocol import (
    PROTOCOL,
    Message,
    ProtocolVersion,
    decision_id,
    decision_request,
    hand_end_notice,
    match_end_notice,
)
from bot_sdk.server import create_server
from referee import (
    AnyMove,
    Card,
    CardSet,
    Expose,
    Game,
    HandResult,
    Observation,
    Outcome,
    Phase,
    RandomPlayer,
    Rules,
)

VARIANT_PROFILES: dict[str, Rules] = {
    "standard": Rules(fixed_hands=2),
    "pass_3": Rules.with_variants("pass_3", fixed_hands=2),
    "pass_3_cycle": Rules.with_variants("pass_3", pass_direction="cycle", fixed_hands=4),
    "sequential_exposure": Rules.with_variants("sequential_exposure", fixed_hands=2),
    "teams": Rules.with_variants("teams", "qd_bonus", fixed_hands=2),
    "no_exposure": Rules.with_variants("no_exposure", "hand_cap_800", fixed_hands=2),
    "lead_2c": Rules.with_variants("lead_2c", "hearts_must_break", fixed_hands=2),
    "dealer_left_leads": Rules.with_variants(
        "dealer_left_leads", "no_spade_lead_first_trick", "tie_share", fixed_hands=2
    ),
    "target_500": Rules.with_variants("target_500", "end_at_plus_1000", "tie_continue_bottom"),
}
"""Rules profiles covering every variant; short matches keep the tests fast."""


def is_last_play(game: Game) -> bool:
    """Whether the next play ends the hand (the referee then deals the next one at once)."""
    return game.phase is Phase.PLAYING and len(game.tricks) == 12 and len(game.current_trick()) == 3


def observations(rules: Rules, seed: int) -> Iterator[Observation]:
    """Every decision's observation of a match played at random."""
    game, player = Game(rules, seed=seed), RandomPlayer(seed)
    while not game.is_over():
        for decision in game.pending:
            obs = game.observation(decision.seat)
            yield obs
            game.push(player.choose(obs))


def record_match(
    rules: Rules,
    seed: int,
    *,
    match_id: str = "match-1",
    choose: Callable[[Observation], AnyMove] | None = None,
    protocol: ProtocolVersion = PROTOCOL,
) -> Iterator[Message]:
    """Play a match and yield every message the arena would send in ``protocol``: each decision,
    then per seat the ``hand_end`` notices (with the view at the hand's last play) and
    ``match_end``."""
    game = Game(rules, seed=seed)
    players = [RandomPlayer(seed * 4 + s) for s in range(4)]
    seq = 0
    while not game.is_over():
        for decision in game.pending:
            obs = game.observation(decision.seat)
            yield decision_request(
                obs,
                match_id=match_id,
                decision_id=decision_id(match_id, game.hand_number, seq),
                time_limit_ms=1000,
                time_bank_ms=30_000,
                protocol=protocol,
            )
            seq += 1
            finals = [game.observation(s) for s in range(4)] if is_last_play(game) else None
            move = choose(obs) if choose else players[decision.seat].decide(decision)
            game.push(move)
            if finals is not None:
                seq = 0
                for view in finals:
                    result = game.results[-1]
                    yield hand_end_notice(result, view, match_id=match_id, protocol=protocol)
    assert game.outcome is not None
    for seat in range(4):
        yield match_end_notice(game.outcome, match_id=match_id, seat=seat, protocol=protocol)


@contextmanager
def running(app: WSGIApplication, host: str = "127.0.0.1", threads: int = 4) -> Iterator[str]:
    """Serve ``app`` with waitress (``threads`` request threads) on a free port of ``host``
    (loopback unless told); yield its URL.

    The loop is driven here rather than by ``server.run()`` so that it can be stopped first and
    the sockets closed after, from this thread: closing them under a running ``select()`` races.
    """
    server = create_server(
        app, host=host, port=0, threads=threads, connection_limit=max(100, 2 * threads)
    )
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            wasyncore.loop(timeout=0.02, map=server._map, count=1)

    thread = threading.Thread(target=loop, daemon=True, name="test-bot-server")
    thread.start()
    try:
        yield f"http://{host}:{server.effective_port}/bot"
    finally:
        stop.set()
        thread.join(5)
        server.task_dispatcher.shutdown()
        wasyncore.close_all(server._map)


def play_obs() -> Observation:
    """Seed 1 after the exposures: seat 2 leads, holding 3C 9C AC TD AD 3H 5H 9H 2S 5S 6S 9S AS."""
    game = Game(seed=1)
    game.push(Expose(3, CardSet()))
    game.push(Expose(0, CardSet()))
    return game.observation(2)


class SlowBot(Bot):
    """Thinks until released (or 5 s), then plays its highest legal card."""

    name = "slow"
    release: ClassVar[threading.Event] = threading.Event()
    calls: ClassVar[list[int]] = []

    def play(self, obs: Observation) -> Card:
        self.calls.append(obs.seat)
        self.release.wait(5)
        return obs.legal.highest()


class RecordingBot(Bot):
    """Remembers what it was told; one instance per seat of each match when served as a class."""

    name = "recording"
    instances: ClassVar[list[RecordingBot]] = []

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.instances.append(self)

    def play(self, obs: Observation) -> Card:
        self.seen.append(f"play {obs.hand_number}")
        return obs.legal.lowest()

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.seen.append(f"hand_end {result.hand_number} seat {observation.seat}")

    def match_end(self, outcome: Outcome) -> None:
        self.seen.append(f"match_end {outcome.hands_played}")

"""Match-log size and verification speed, side by side, over random matches.

Every seat is played as the arena logs a bot over HTTP (a random legal player; each decision
with its request's SHA-256, its latency, its timing and the answer as received), under random rules
profiles (any variants, up to the default 100 hands), and every log is sealed. The report
gives the bytes stored per hand (indented JSON, canonical JSON, zlib-packed canonical JSON, the
stored form) and hands per second for verification with and without rebuilding the requests,
for reading a stored log back, and for schema validation (best of ``--rounds``).

    python benchmarks/replays.py                  # 100 matches (or python -m benchmarks.replays)
    python benchmarks/replays.py --matches 20 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if not __package__:
    # Run as a file, this file's directory comes first on sys.path and its name hides the
    # replays package: the project's root goes there instead.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from arena.exchange import Exchange
from arena.match_loop import Reply, play_match
from bot_sdk.protocol import DecisionRequest, Status, answer_of, encode
from referee import Game, HandResult, Observation, Outcome, RandomPlayer, Rules, RulesError, Variant
from replays.deals import DealSource
from replays.integrity import canonical, generate_key, pack, seal, unpack
from replays.log import Connection, MatchLog, SeatInfo, TimeControl
from replays.schema import validate
from replays.upgrade import read_log
from replays.verify import verify


class ArenaSeat:
    """A random player logged like a bot over HTTP, on a kept-alive connection; ``elapsed`` is
    the match's clock (in ns, from its start), which its answers move on."""

    def __init__(self, seat: int, seed: str, elapsed: list[int]) -> None:
        self._elapsed = elapsed
        self.info = SeatInfo(seat, f"bot-{seat}", f"random-{seat}", "1.0")
        self._player = RandomPlayer(seed)
        self._rng = random.Random(seed)

    def ask(self, request: DecisionRequest) -> Reply:
        move = self._player.choose(request.observation)
        answer = encode(answer_of(move)).decode()
        latency, sent = self._rng.randint(5, 400), self._elapsed[0]
        self._elapsed[0] += latency * 1_000_000
        exchange = Exchange(
            sent, self._elapsed[0], Connection.REUSED, None, None,
            len(request.body), len(answer), retried=False,
        )  # fmt: skip
        return Reply(move, Status.OK, latency, answer, None, request.sha256, None, exchange)

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        """Notifications are not logged."""

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        """Notifications are not logged."""


def random_rules(rng: random.Random) -> Rules:
    while True:
        names = [v.value for v in Variant if rng.random() < 0.2]
        try:
            return Rules.from_json({"variants": names})
        except RulesError:
            continue


def play(matches: int, seed: int) -> list[MatchLog]:
    rng = random.Random(seed)
    logs = []
    for n in range(matches):
        match_id = f"bench:table-{n}:match-1"
        elapsed = [0]
        logs.append(
            play_match(
                Game(random_rules(rng), seed=f"bench-{seed}-{n}"),
                [ArenaSeat(s, f"{seed}-{n}-{s}", elapsed) for s in range(4)],
                match_id=match_id,
                deals=DealSource.practice(f"bench-{seed}-{n}"),
                time_control=TimeControl(1000, 30_000, 5),
                tournament_id="bench",
                table_id=f"table-{n}",
                started_at="2026-01-01T12:00:00Z",
                finished_at=lambda: "2026-01-01T12:05:00Z",
                origin_ns=0,
            )
        )
    return logs


def _each(function: Callable[[Any], object], items: Sequence[Any]) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            function(item)

    return run


def best_rate(hands: int, rounds: int, work: Callable[[], object]) -> float:
    """Hands per second of the fastest of ``rounds`` runs of ``work``."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return hands / best


def report(matches: int, rounds: int, seed: int) -> list[str]:
    logs = play(matches, seed)
    key = generate_key()
    sealed: list[dict[str, Any]] = [seal(log.to_json(), key, key_id="bench") for log in logs]
    stored = [pack(data) for data in sealed]
    hands = sum(len(log.hands) for log in logs)
    decisions = sum(len(hand.decisions) for log in logs for hand in log.hands)
    sizes = {
        "JSON, indented (json.dumps indent=2)": sum(len(json.dumps(d, indent=2)) for d in sealed),
        "canonical JSON (sorted keys, no spaces)": sum(len(canonical(d)) for d in sealed),
        "zlib-packed canonical JSON (stored)": sum(len(blob) for blob in stored),
    }
    packed = sizes["zlib-packed canonical JSON (stored)"]
    work: dict[str, Callable[[], None]] = {
        "verify, rebuilding every request": _each(verify, logs),
        "verify, without the request check": _each(
            lambda log: verify(log, check_requests=False), logs
        ),
        "unpack + read_log (stored to typed)": _each(lambda blob: read_log(unpack(blob)), stored),
        "schema validation": _each(validate, sealed),
    }
    rates = {name: best_rate(hands, rounds, run) for name, run in work.items()}
    assert all(verify(log).ok for log in logs)
    lines = [
        f"{matches} random matches (seed {seed}): {hands} hands, {decisions} decisions, "
        f"{decisions / hands:.1f} decisions per hand",
        "",
        f"  {'storage':<44}{'bytes/hand':>12}{'ratio':>8}",
    ]
    for name, size in sizes.items():
        lines.append(f"  {name:<44}{size / hands:>12,.0f}{size / packed:>7.1f}x")
    lines += ["", f"  {'speed (best of ' + str(rounds) + ')':<44}{'hands/s':>12}"]
    lines += [f"  {name:<44}{rate:>12,.0f}" for name, rate in rates.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("\n".join(report(args.matches, args.rounds, args.seed)))


if __name__ == "__main__":
    main()

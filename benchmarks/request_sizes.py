"""Bytes per request in ``gongzhu-bot/1`` and ``gongzhu-bot/2``, side by side, in short and long
matches.

    python -m benchmarks.request_sizes
    python -m benchmarks.request_sizes --matches 50 --hands 1,20,50

Each match (``--matches`` seeds per length, the standard rules with ``--hands`` hands, random
legal play) is played once, and every decision's request body is built in both versions, as
the arena sends it to a push bot (``DecisionRequest.body``; a pull bot gets the same body inside
its stream's line), with each seat's ``hand_end`` notice. Sizes are exact, not timed: the
machine's load does not change them. The table gives the mean and the largest request, the
mean in the match's last hand, ``hand_end`` and the bytes of a whole match, ratio (2 ÷ 1)
first; and the CPU time (``time.process_time``, the best of three passes over every request)
to build a request's body and its SHA-256 as the arena does for each decision.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from dataclasses import dataclass, field

from bot_sdk.protocol import (
    SPOKEN,
    DecisionRequest,
    ProtocolVersion,
    decision_id,
    encode,
    hand_end_notice,
)
from referee import Game, Observation, RandomPlayer, Rules

MATCH_ID = "tournament-7:table-3:match-1"


@dataclass
class Sizes:
    """The body sizes of one version over matches of one length."""

    requests: list[int] = field(default_factory=list)
    last_hand: list[int] = field(default_factory=list)
    hand_ends: list[int] = field(default_factory=list)
    matches: list[int] = field(default_factory=list)
    cpu_us: float = 0.0
    """CPU time to build a request's body and hash it (:func:`build_cpu_us`)."""


def measure(hands: int, matches: int) -> dict[ProtocolVersion, Sizes]:
    """Every request and ``hand_end`` of ``matches`` matches of ``hands`` hands, played at
    random as the match loop plays them, sized in each version."""
    sizes = {version: Sizes() for version in SPOKEN}
    asked: list[tuple[Observation, str]] = []
    for seed in range(matches):
        game = Game(Rules(fixed_hands=hands, max_hands=hands), seed=f"sizes-{seed}")
        player, seq = RandomPlayer(seed), 0
        views: list[Observation] = []
        total = dict.fromkeys(SPOKEN, 0)
        while not game.is_over():
            hand = game.hand_number
            for pending in game.pending:
                obs = game.observation(pending.seat)
                ident = decision_id(MATCH_ID, hand, seq)
                seq += 1
                if len(game.tricks) == 12 and len(game.current_trick()) == 3:
                    views = [game.observation(s) for s in range(4)]  # as hand_end carries them
                asked.append((obs, ident))
                for version in SPOKEN:
                    size = len(DecisionRequest(obs, MATCH_ID, ident, 1000, 30_000, version).body)
                    sizes[version].requests.append(size)
                    sizes[version].last_hand.extend([size] if hand == hands else [])
                    total[version] += size
                game.push(player.choose(obs))
            if game.hand_number != hand or game.is_over():
                seq = 0
                for view, version in itertools.product(views, SPOKEN):
                    notice = hand_end_notice(
                        game.results[-1], view, match_id=MATCH_ID, protocol=version
                    )
                    sizes[version].hand_ends.append(len(encode(notice)))
                    total[version] += len(encode(notice))
        for version in SPOKEN:
            sizes[version].matches.append(total[version])
    for version in SPOKEN:
        sizes[version].cpu_us = build_cpu_us(asked, version)
    return sizes


def build_cpu_us(asked: list[tuple[Observation, str]], version: ProtocolVersion) -> float:
    """The CPU time to build a request's body and its SHA-256, as the arena does for each
    decision (microseconds, the mean over ``asked``, the best of three passes)."""
    passes = []
    for _ in range(3):
        start = time.process_time()
        for obs, ident in asked:
            _ = DecisionRequest(obs, MATCH_ID, ident, 1000, 30_000, version).sha256
        passes.append((time.process_time() - start) / len(asked) * 1e6)
    return min(passes)


def rows(hands: int, sizes: dict[ProtocolVersion, Sizes]) -> list[tuple[str, float, float]]:
    one, two = sizes[ProtocolVersion.V1], sizes[ProtocolVersion.V2]

    def row(
        what: str, values: tuple[list[int], list[int]], best: bool = False
    ) -> tuple[str, float, float]:
        pick = max if best else statistics.fmean
        return f"{hands}-hand match: {what}", pick(values[0]), pick(values[1])

    return [
        row("request, mean", (one.requests, two.requests)),
        row("request, largest", (one.requests, two.requests), best=True),
        row(f"request in hand {hands}, mean", (one.last_hand, two.last_hand)),
        row("hand_end notice, mean", (one.hand_ends, two.hand_ends)),
        row("whole match (requests + hand_end), mean", (one.matches, two.matches)),
        (f"{hands}-hand match: CPU to build a request, us", one.cpu_us, two.cpu_us),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per length")
    parser.add_argument("--hands", default="1,20", help="hands per match, comma-separated")
    args = parser.parse_args(argv)
    table = [r for h in args.hands.split(",") for r in rows(int(h), measure(int(h), args.matches))]
    width = max(len(name) for name, _, _ in table)
    print(f"bytes, {args.matches} matches per length, standard rules, random legal play")
    print(f"{'':{width}}  {'2 ÷ 1':>7}  {'gongzhu-bot/1':>13}  {'gongzhu-bot/2':>13}")
    for name, one, two in table:
        print(f"{name:{width}}  {two / one:>7.2f}  {one:>13,.1f}  {two:>13,.1f}")


if __name__ == "__main__":
    main()

"""How much stronger one house bot is than another, measured with duplicate deals.

Each deal is played four times, its hands rotated one seat further each time, with bot A in
seats 0 and 2 and bot B in seats 1 and 3; so both bots play every hand of every deal from
every seat, and the luck of the cards cancels out. The difference of the two bots' mean
points per hand is paired by deal, and its 95% interval uses the normal approximation.

    python -m benchmarks.strength --pair normal:easy --pair hard:normal --deals 60
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial

from bot_sdk.bot import Bot
from bot_sdk.house import EasyBot, HardBot, NormalBot
from bot_sdk.house.hard import DEFAULT_BUDGET_S, DEFAULT_MARGIN, DEFAULT_RIVALRY
from referee import Game, Rules, deal_from_seed

Z95 = 1.96


@dataclass(frozen=True)
class Settings:
    budget_s: float
    max_samples: int | None
    rivalry: float
    margin: float


def make_bot(name: str, seed: str, settings: Settings) -> Bot:
    if name == "hard":
        return HardBot(
            seed,
            budget_s=settings.budget_s,
            max_samples=settings.max_samples,
            rivalry=settings.rivalry,
            margin=settings.margin,
        )
    return {"easy": EasyBot, "normal": NormalBot}[name](seed)


def play_deal(
    pair: tuple[str, str], settings: Settings, seed: str, deal: int
) -> tuple[float, float]:
    """Bot A's and bot B's mean points per hand over the four rotations of one deal."""
    hands = deal_from_seed(f"{seed}:{deal}", 1)
    points = [0, 0]
    for rotation in range(4):
        rotated = [hands[(s + rotation) % 4] for s in range(4)]
        game = Game(Rules(fixed_hands=1), deals=[rotated])
        bots = [make_bot(pair[s % 2], f"{seed}:{deal}:{rotation}:{s}", settings) for s in range(4)]
        while not game.is_over():
            for decision in game.pending:
                game.push(bots[decision.seat].decide(game.observation(decision.seat)))
        for s, score in enumerate(game.results[-1].scores):
            points[s % 2] += score
    return points[0] / 8, points[1] / 8


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    deals: tuple[tuple[float, float], ...]
    """Per deal: A's and B's mean points per hand."""
    seconds: float

    @property
    def diffs(self) -> list[float]:
        return [a - b for a, b in self.deals]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.diffs)

    @property
    def half_width(self) -> float:
        return Z95 * statistics.stdev(self.diffs) / math.sqrt(len(self.diffs))


def run_pair(
    pair: tuple[str, str], deals: int, seed: str, settings: Settings, jobs: int
) -> PairResult:
    start = time.perf_counter()
    work = partial(play_deal, pair, settings, seed)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            per_deal = tuple(pool.map(work, range(deals)))
    else:
        per_deal = tuple(map(work, range(deals)))
    return PairResult(pair[0], pair[1], per_deal, time.perf_counter() - start)


HEADER = (
    f"{'A vs B':<16} {'deals':>5} {'games':>6} {'A pts/hand':>10} {'B pts/hand':>10} "
    f"{'A - B':>7} {'95% CI of A - B':>17} {'time':>6}"
)


def row(r: PairResult) -> str:
    """One line of the table (each game is one hand; each bot plays two seats of it)."""
    a = statistics.fmean(x for x, _ in r.deals)
    b = statistics.fmean(y for _, y in r.deals)
    lo, hi = r.mean - r.half_width, r.mean + r.half_width
    return (
        f"{r.a + ' vs ' + r.b:<16} {len(r.deals):>5} {4 * len(r.deals):>6} {a:>10.1f} "
        f"{b:>10.1f} {r.mean:>+7.1f} {f'[{lo:+.1f}, {hi:+.1f}]':>17} {r.seconds:>5.0f}s"
    )


def _pair(text: str) -> tuple[str, str]:
    a, sep, b = text.partition(":")
    if not sep or a not in ("easy", "normal", "hard") or b not in ("easy", "normal", "hard"):
        raise argparse.ArgumentTypeError(f"a pair is A:B of easy, normal, hard, not {text!r}")
    return a, b


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pair",
        type=_pair,
        action="append",
        help="A:B, repeatable (default: normal:easy and hard:normal)",
    )
    parser.add_argument("--deals", type=int, default=60, help="deals per pair (x4 rotations)")
    parser.add_argument(
        "--budget-ms",
        type=float,
        default=DEFAULT_BUDGET_S * 1000,
        help="Hard's time per play decision",
    )
    parser.add_argument(
        "--max-samples", type=int, default=None, help="Hard's sampled deals per decision"
    )
    parser.add_argument(
        "--rivalry", type=float, default=DEFAULT_RIVALRY, help="Hard's weight on rivals"
    )
    parser.add_argument(
        "--margin", type=float, default=DEFAULT_MARGIN, help="Hard's lean to Normal's card"
    )
    parser.add_argument("--seed", default="strength", help="seed of the deals")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    settings = Settings(args.budget_ms / 1000, args.max_samples, args.rivalry, args.margin)
    pairs = args.pair or [("normal", "easy"), ("hard", "normal")]
    print(HEADER, flush=True)
    for pair in pairs:
        print(row(run_pair(pair, args.deals, args.seed, settings, args.jobs)), flush=True)


if __name__ == "__main__":
    main()

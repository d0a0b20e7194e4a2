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
from bot_sdk.house.hard import (
    CLEAR_Z,
    DEFAULT_BUDGET_S,
    DEFAULT_MARGIN,
    DEFAULT_RIVALRY,
    DEFAULT_SAMPLES,
)
from referee import Game, Rules, deal_from_seed
from referee.moves import DecisionKind
from referee.rules import Variant

Z95 = 1.96
DEFAULT_LIMIT_MS = 1000
"""The arena's default time for one decision (``time_limit_ms``)."""


@dataclass(frozen=True)
class Settings:
    budget_s: float
    max_samples: int | None
    rivalry: float
    margin: float
    teams: bool = False
    infer: bool = True
    clear_z: float | None = CLEAR_Z


def make_bot(name: str, seed: str, settings: Settings) -> Bot:
    if name == "hard":
        return HardBot(
            seed,
            budget_s=settings.budget_s,
            max_samples=settings.max_samples,
            rivalry=settings.rivalry,
            margin=settings.margin,
            infer=settings.infer,
            clear_z=settings.clear_z,
        )
    return {"easy": EasyBot, "normal": NormalBot}[name](seed)


@dataclass(frozen=True)
class DealResult:
    a: float
    b: float
    """A's and B's mean points per hand (per team with ``teams``) over the four rotations."""
    times: tuple[tuple[str, float, float], ...]
    """Each play decision that had more than one legal card: the bot's name, its wall-clock
    time and its CPU time (the process's: what it costs on an idle core), in ms."""


def play_deal(pair: tuple[str, str], settings: Settings, seed: str, deal: int) -> DealResult:
    """One deal in its four rotations."""
    hands = deal_from_seed(f"{seed}:{deal}", 1)
    rules = Rules(fixed_hands=1, variants={Variant.TEAMS} if settings.teams else set())
    points = [0, 0]
    times: list[tuple[str, float, float]] = []
    for rotation in range(4):
        rotated = [hands[(s + rotation) % 4] for s in range(4)]
        game = Game(rules, deals=[rotated])
        names = [pair[s % 2] for s in range(4)]
        bots = [make_bot(names[s], f"{seed}:{deal}:{rotation}:{s}", settings) for s in range(4)]
        while not game.is_over():
            for decision in game.pending:
                obs = game.observation(decision.seat)
                start, cpu = time.perf_counter(), time.process_time()
                move = bots[decision.seat].decide(obs)
                wall_ms = (time.perf_counter() - start) * 1000
                cpu_ms = (time.process_time() - cpu) * 1000
                if decision.kind is DecisionKind.PLAY and len(obs.legal) > 1:
                    times.append((names[decision.seat], wall_ms, cpu_ms))
                game.push(move)
        for s, score in enumerate(game.results[-1].scores):
            points[s % 2] += score
    per_hand = 4 if settings.teams else 8
    return DealResult(points[0] / per_hand, points[1] / per_hand, tuple(times))


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    deals: tuple[DealResult, ...]
    seconds: float

    @property
    def diffs(self) -> list[float]:
        return [d.a - d.b for d in self.deals]

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
    a = statistics.fmean(d.a for d in r.deals)
    b = statistics.fmean(d.b for d in r.deals)
    lo, hi = r.mean - r.half_width, r.mean + r.half_width
    return (
        f"{r.a + ' vs ' + r.b:<16} {len(r.deals):>5} {4 * len(r.deals):>6} {a:>10.1f} "
        f"{b:>10.1f} {r.mean:>+7.1f} {f'[{lo:+.1f}, {hi:+.1f}]':>17} {r.seconds:>5.0f}s"
    )


def timing(r: PairResult) -> list[str]:
    """Each bot's time per play decision against the default limit: wall clock (what the
    arena's clock sees, on this machine at its load) and CPU time."""
    lines = []
    for name in dict.fromkeys((r.a, r.b)):
        wall = sorted(ms for d in r.deals for bot, ms, _ in d.times if bot == name)
        cpu = sorted(ms for d in r.deals for bot, _, ms in d.times if bot == name)
        lines.append(
            f"  {name.capitalize()}'s time per play decision ({len(wall)} decisions, default "
            f"limit {DEFAULT_LIMIT_MS} ms): wall {_spread(wall)}; CPU {_spread(cpu)}"
        )
    return lines


def _spread(times: list[float]) -> str:
    """Median, 99th percentile and the slowest of sorted ``times``."""
    p99 = times[min(len(times) - 1, math.ceil(0.99 * len(times)) - 1)]
    median, slowest = statistics.median(times), times[-1]
    return f"median {median:.3g} ms, p99 {p99:.3g} ms, slowest {slowest:.3g} ms"


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
        help="the cap on Hard's time per play decision",
    )
    parser.add_argument(
        "--max-samples", type=int, default=DEFAULT_SAMPLES, help="Hard's most deals per decision"
    )
    parser.add_argument(
        "--rivalry", type=float, default=DEFAULT_RIVALRY, help="Hard's weight on rivals"
    )
    parser.add_argument(
        "--margin", type=float, default=DEFAULT_MARGIN, help="Hard's lean to Normal's card"
    )
    parser.add_argument(
        "--no-infer", action="store_true", help="Hard samples without reading the others' play"
    )
    parser.add_argument(
        "--no-clear", action="store_true", help="Hard searches every deal of its budget"
    )
    parser.add_argument("--teams", action="store_true", help="the teams variant: A's pair vs B's")
    parser.add_argument("--seed", default="strength", help="seed of the deals")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    settings = Settings(
        args.budget_ms / 1000,
        args.max_samples,
        args.rivalry,
        args.margin,
        args.teams,
        not args.no_infer,
        None if args.no_clear else CLEAR_Z,
    )
    pairs = args.pair or [("normal", "easy"), ("hard", "normal")]
    print(HEADER, flush=True)
    for pair in pairs:
        result = run_pair(pair, args.deals, args.seed, settings, args.jobs)
        print(row(result), flush=True)
        print("\n".join(timing(result)), flush=True)


if __name__ == "__main__":
    main()

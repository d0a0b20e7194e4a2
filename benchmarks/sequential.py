"""The gauntlet's sequential test on simulated deals: how often it says what, and after how many
deals, when the paired differences are normal with a known mean and spread.

Real games are in benchmarks/gauntlet.py; this is the test alone (:mod:`bot_sdk.sequential`),
quick enough to try many spreads and differences: for each standard deviation of a deal's
difference and each true difference (0, δ, 3δ, 10δ), seeded runs of up to ``--cap`` deals,
and per row the share of each verdict and the mean deals to a verdict (the cap counted as
its deals).

    python -m benchmarks.sequential            # about 2 minutes on a busy core
    python -m benchmarks.sequential --runs 100 # about 12 s
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Sequence

from bot_sdk.sequential import Hypotheses, Verdict, trajectory

SPREADS = ((35.0, 20.0), (47.0, 20.0), (84.0, 10.0))
"""(standard deviation of a deal's difference, δ), points per hand: the first two as measured
on duplicate deals of 4-hand matches (docs/BENCHMARKS.md, Gauntlets), the last as seen in a
gauntlet of 2-hand matches at the default δ."""
EFFECTS = (0, 1, 3, 10)
"""True differences, in multiples of δ."""
ORDER = (Verdict.BETTER, Verdict.WORSE, Verdict.NO_DIFFERENCE, Verdict.CAP)


def row(sigma: float, delta: float, effect: float, *, runs: int, cap: int, seed: int) -> str:
    rng = random.Random(f"{seed}:{sigma}:{delta}:{effect}")
    test = Hypotheses(delta=delta)
    verdicts: Counter[Verdict] = Counter()
    deals = 0
    for _ in range(runs):
        differences = [rng.gauss(effect, sigma) for _ in range(cap)]
        final = trajectory(differences, test, max_deals=cap)[-1]
        verdicts[final.verdict] += 1
        deals += final.deals
    shares = " | ".join(f"{verdicts[v] / runs:.3f}" for v in ORDER)
    return f"| {sigma:g} | {delta:g} | {effect:g} | {runs:,} | {shares} | {deals / runs:.1f} |"


def table(runs: int, cap: int, seed: int, spreads: Sequence[tuple[float, float]]) -> list[str]:
    lines = [
        "| σ per deal | δ | true Δ | runs | better | worse | no difference | cap | deals, mean |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for sigma, delta in spreads:
        for multiple in EFFECTS:
            null_runs = runs * 4 if multiple == 0 else runs  # the error rate needs more
            lines.append(row(sigma, delta, multiple * delta, runs=null_runs, cap=cap, seed=seed))
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per row (4× at Δ = 0)")
    parser.add_argument("--cap", type=int, default=200, help="deals at most a run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"α = β = 0.05, at most {args.cap} deals, seed {args.seed}")
    print("\n".join(table(args.runs, args.cap, args.seed, SPREADS)))
    print(f"wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

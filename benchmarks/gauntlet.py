"""How many matches a gauntlet needs to tell Hard from Normal and Normal from Easy: the
sequential test on duplicate deals against a fixed-size test on random deals of the same error
rates; and how often it calls a bot better than a copy of itself.

Three arms, side by side in one run, every game played by the offline gauntlet's own code
(:mod:`bot_sdk.gauntlet`: the candidate and the baseline across from each other, two house
Easy opponents between them, as :func:`bot_sdk.sequential.default_opponents` gives when one of
the two is house Normal and the other not Easy; each deal 4 matches of 4 hands):

- **Sequential, duplicate deals**: seeded gauntlets played to their verdict (the cap is
  :data:`CAP` deals); the matches (deals × 4) each needed, and the verdicts.
- **Fixed size, random deals**: the same paired difference when the four rotations do not share
  their cards (each its own deals, so the card luck does not cancel). Its standard deviation
  ``σ`` per deal, estimated from simulated deals, gives the size of a one-sided test of the
  same ``α``, ``β`` and ``δ``: ``n = ((z₁₋α + z₁₋β)·σ/δ)²`` deals, ``4n`` matches. Its realized
  error rates are checked by resampling those deals (bootstrap), shifted to a difference of 0
  (``α̂``) and of ``δ`` (``β̂``). The same size on duplicate deals is shown beside it, to tell
  the two savings apart. The ratio to the goal is the fixed test's matches on random deals over
  the sequential test's mean.
- **False positives**: house Normal against a copy of itself (its own seeds), many seeded
  gauntlets: the share called "better", with its 95% (Wilson) interval, against ``α``. They
  test the gauntlet's default ``δ`` of 10 points per hand (``--copies-delta``): about 0.6 of a
  deal's standard deviation between the two copies, where a test that trusts its variance
  estimate too early errs most (a larger ``δ`` stops at the first deals allowed and seldom
  errs).

House Hard here searches its default budget of sampled deals per decision with no time cap
(:data:`~bot_sdk.house.hard.DEFAULT_SAMPLES`, stopping early where the decision is clear), so
that every run is reproducible whatever the machine's load.

    python -m benchmarks.gauntlet               # about 10 minutes on 2 cores
    python -m benchmarks.gauntlet --quick       # about 30 s: Normal vs Easy and the copies only
    python -m benchmarks.gauntlet --delta 10    # the gauntlet's default δ (far longer)

Default: ``δ`` = 20 points per hand, ``α`` = ``β`` = 0.05; 4 gauntlets of Hard vs Normal and 20
deals each way for its ``σ``; 100 gauntlets of Normal vs Easy and 300 deals each way; 150
gauntlets of Normal vs its copy at ``δ`` = 10; 2 processes. (At ``δ`` = 10 a gauntlet of Hard vs
Normal would run about three times as long.) Every run is seeded: the same options print the
same figures.

Printed: a line per job as it ends; then a Markdown table, a row per pair: the gauntlets run,
their verdicts, the mean of their final Δ, the matches to a verdict (mean, median, range), the
mean Δ and ``σ`` per deal on duplicate and on random deals, the fixed test's deals and matches
on random deals with its realized error rates, its matches on duplicate deals, and the ratio
against the 3× goal; then the false-positive line and the wall time.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from statistics import NormalDist

from bot_sdk.bot import Bot
from bot_sdk.gauntlet import ROTATIONS, gauntlet, play_deal
from bot_sdk.house import HardBot
from bot_sdk.practice import BotSpec, Clock
from bot_sdk.sequential import Hypotheses, Verdict

HANDS = 4
CAP = 100
"""The gauntlets' cap on deals (400 matches)."""
GOAL = 3.0
"""The goal: the fixed-size test on random deals needs at least this many times the matches."""
CHUNK = 10
"""Deals per job when estimating σ."""
BOOTSTRAP = 4000
NO_LIMIT_MS = 10**9
"""Nobody is timed: the benchmark measures the test, not the bots' speed."""


@dataclass(frozen=True)
class Pair:
    candidate: str
    baseline: str
    runs: int
    deals: int
    """Deals simulated each way (duplicate, random) for σ, in jobs of :data:`CHUNK`."""

    @property
    def name(self) -> str:
        return f"{self.candidate.capitalize()} vs {self.baseline.capitalize()}"

    @property
    def opponents(self) -> tuple[str, str]:
        """Two house Easy: the default (:func:`~bot_sdk.sequential.default_opponents`) when
        one of the two is house Normal, but for Normal against Easy, where the default is Hard
        (never a copy of either), far too slow for this many runs."""
        return ("easy", "easy")


def spec(level: str, seed: str) -> BotSpec:
    """A house level, or for Hard a seeded instance searching a fixed number of deals."""
    if level == "hard":
        bot: Bot = HardBot(seed, budget_s=NO_LIMIT_MS / 1000)
        return bot
    return level


@dataclass(frozen=True)
class Run:
    """One seeded gauntlet."""

    pair: Pair
    seed: int
    test: Hypotheses


@dataclass(frozen=True)
class Spread:
    """``CHUNK`` deals from ``first`` on, their rotations on shared or on separate cards."""

    pair: Pair
    first: int
    duplicate: bool


@dataclass(frozen=True)
class RunResult:
    job: Run
    verdict: Verdict
    deals: int
    mean: float
    seconds: float


@dataclass(frozen=True)
class SpreadResult:
    job: Spread
    differences: tuple[float, ...]
    seconds: float


def run_gauntlet(job: Run) -> RunResult:
    start = time.perf_counter()
    seed = f"bench:{job.pair.name}:{job.seed}"
    pair = job.pair
    report = gauntlet(
        spec(pair.candidate, f"{seed}:candidate"),
        spec(pair.baseline, f"{seed}:baseline"),
        pair.opponents,
        test=job.test,
        max_deals=CAP,
        hands=HANDS,
        seed=seed,
        out=None,
        time_limit_ms=NO_LIMIT_MS,
    )
    s = report.state
    return RunResult(job, s.verdict, s.deals, s.mean, time.perf_counter() - start)


def run_spread(job: Spread) -> SpreadResult:
    start = time.perf_counter()
    pair = job.pair
    seed = f"spread:{pair.name}:{job.first}"
    specs = (
        spec(pair.candidate, f"{seed}:candidate"),
        spec(pair.baseline, f"{seed}:baseline"),
        *pair.opponents,
    )
    clock = Clock(NO_LIMIT_MS)
    differences = tuple(
        play_deal(
            specs, deal, seed="spread", hands=HANDS, clock=clock, duplicate=job.duplicate
        ).difference
        for deal in range(job.first, job.first + CHUNK)
    )
    return SpreadResult(job, differences, time.perf_counter() - start)


def work(job: Run | Spread) -> RunResult | SpreadResult:
    return run_gauntlet(job) if isinstance(job, Run) else run_spread(job)


def jobs_for(
    pairs: Sequence[Pair], test: Hypotheses, copies: Pair, copies_test: Hypotheses
) -> list[Run | Spread]:
    """Every job, the slowest (Hard's) first so that they do not finish last."""
    jobs: list[Run | Spread] = []
    for pair in pairs:
        jobs += [Run(pair, seed, test) for seed in range(1, pair.runs + 1)]
        jobs += [
            Spread(pair, first, duplicate)
            for first in range(0, pair.deals, CHUNK)
            for duplicate in (True, False)
        ]
    jobs += [Run(copies, seed, copies_test) for seed in range(1, copies.runs + 1)]
    return jobs


def fixed_deals(sigma: float, test: Hypotheses) -> int:
    """The deals a one-sided fixed-size z-test of ``test``'s error rates needs at ``sigma``."""
    z = NormalDist().inv_cdf
    return math.ceil(((z(1 - test.alpha) + z(1 - test.beta)) * sigma / test.delta) ** 2)


def realized_errors(
    differences: Sequence[float], n: int, test: Hypotheses, rng: random.Random
) -> tuple[float, float]:
    """The fixed test's error rates when its ``n`` deals are drawn from ``differences``
    recentred on 0 (how often it says "better": ``α̂``) and on ``δ`` (how often not: ``β̂``).
    It says "better" when the mean exceeds ``z₁₋α·s/√n``, ``s`` from its own deals."""
    mean = statistics.fmean(differences)
    z = NormalDist().inv_cdf(1 - test.alpha)
    rejections = {0.0: 0, test.delta: 0}
    for centre in rejections:
        shifted = [d - mean + centre for d in differences]
        for _ in range(BOOTSTRAP):
            sample = rng.choices(shifted, k=n)
            if statistics.fmean(sample) > z * statistics.stdev(sample) / math.sqrt(n):
                rejections[centre] += 1
    return rejections[0.0] / BOOTSTRAP, 1 - rejections[test.delta] / BOOTSTRAP


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion ``k / n``."""
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def verdicts(runs: Sequence[RunResult]) -> str:
    counts = {v: sum(r.verdict is v for r in runs) for v in Verdict if v is not Verdict.RUNNING}
    return ", ".join(f"{v.value} {n}" for v, n in counts.items() if n)


def matches_cell(runs: Sequence[RunResult]) -> tuple[float, str]:
    matches = [ROTATIONS * r.deals for r in runs]
    mean = statistics.fmean(matches)
    return mean, (
        f"{mean:.0f} (median {statistics.median(matches):.0f}, {min(matches)}–{max(matches)})"
    )


def pair_row(
    pair: Pair,
    runs: Sequence[RunResult],
    spreads: Sequence[SpreadResult],
    test: Hypotheses,
) -> str:
    duplicate = [d for s in spreads if s.job.duplicate for d in s.differences]
    plain = [d for s in spreads if not s.job.duplicate for d in s.differences]
    sigma_dup, sigma_plain = statistics.stdev(duplicate), statistics.stdev(plain)
    n = fixed_deals(sigma_plain, test)
    alpha_hat, beta_hat = realized_errors(plain, n, test, random.Random(pair.name))
    sequential, cell = matches_cell(runs)
    ratio = ROTATIONS * n / sequential
    met = "met" if ratio >= GOAL else "not met"
    return (
        f"| {pair.name} | {len(runs)} | {verdicts(runs)} | "
        f"{statistics.fmean(r.mean for r in runs):+.1f} | {cell} | "
        f"{statistics.fmean(duplicate):+.1f} / {statistics.fmean(plain):+.1f} | "
        f"{sigma_dup:.1f} / {sigma_plain:.1f} ({len(plain)} each) | {n} | {ROTATIONS * n} | "
        f"{alpha_hat:.3f} / {beta_hat:.3f} | {ROTATIONS * fixed_deals(sigma_dup, test)} | "
        f"**{ratio:.1f}×** ({met}) |"
    )


HEADER = (
    "| pair | gauntlets | verdicts | Δ at the verdict (mean) | sequential, duplicate: "
    "matches to a verdict, mean (median, range) | Δ per deal: duplicate / random | "
    "σ per deal: duplicate / random | fixed, random: deals | fixed, random: matches | "
    "fixed, random: α̂ / β̂ | fixed, duplicate: matches | fixed random ÷ sequential "
    f"(goal ≥ {GOAL:g}×) |",
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
)


def false_positive_line(copies: Pair, runs: Sequence[RunResult], test: Hypotheses) -> str:
    better = sum(r.verdict is Verdict.BETTER for r in runs)
    low, high = wilson(better, len(runs))
    rate = better / len(runs)
    where = "at or below" if rate <= test.alpha else "above"
    shown = "includes" if low <= test.alpha <= high else "excludes"
    _, cell = matches_cell(runs)
    return (
        f"False positives, {copies.name} (its copy, its own seeds), δ = {test.delta:g}, opponents "
        f"{' and '.join(copies.opponents)}: 'better' in {better} of {len(runs)} gauntlets = "
        f"{rate:.3f}, {where} α = {test.alpha:g} (95% interval [{low:.3f}, {high:.3f}], which "
        f"{shown} α). "
        f"Verdicts: {verdicts(runs)}; matches {cell}"
    )


def job_line(result: RunResult | SpreadResult) -> str:
    if isinstance(result, RunResult):
        return (
            f"{result.job.pair.name} gauntlet {result.job.seed}: {result.verdict.value} after "
            f"{result.deals} deals, Δ {result.mean:+.1f} ({result.seconds:.0f} s)"
        )
    kind = "duplicate" if result.job.duplicate else "random"
    return (
        f"{result.job.pair.name} {kind} deals {result.job.first + 1}–"
        f"{result.job.first + CHUNK} ({result.seconds:.0f} s)"
    )


def run_all(jobs: Sequence[Run | Spread], workers: int) -> list[RunResult | SpreadResult]:
    results = []
    with ProcessPoolExecutor(workers) as pool:
        for future in as_completed([pool.submit(work, job) for job in jobs]):
            results.append(future.result())
            print(job_line(results[-1]), flush=True)
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="no Hard, fewer gauntlets")
    parser.add_argument("--delta", type=float, default=20.0, help="points per hand")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--hard-runs", type=int, help="gauntlets of Hard vs Normal")
    parser.add_argument("--hard-deals", type=int, help="deals each way for Hard's σ")
    parser.add_argument("--runs", type=int, help="gauntlets of Normal vs Easy")
    parser.add_argument("--deals", type=int, help="deals each way for Normal vs Easy's σ")
    parser.add_argument("--copies", type=int, help="gauntlets of Normal vs its copy")
    parser.add_argument("--copies-delta", type=float, default=Hypotheses.delta, help="their δ")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args(argv)
    test = Hypotheses(args.delta, args.alpha, args.beta)
    copies_test = Hypotheses(args.copies_delta, args.alpha, args.beta)
    quick = args.quick

    def chosen(value: int | None, full: int, fast: int) -> int:
        return value if value is not None else fast if quick else full

    pairs = [
        Pair("hard", "normal", chosen(args.hard_runs, 4, 0), chosen(args.hard_deals, 20, 0)),
        Pair("normal", "easy", chosen(args.runs, 100, 10), chosen(args.deals, 300, 60)),
    ]
    pairs = [p for p in pairs if p.runs and p.deals]
    copies = Pair("normal", "normal", chosen(args.copies, 150, 20), 0)
    print(
        f"δ = {test.delta:g} points per hand, α = {test.alpha:g}, β = {test.beta:g}; "
        f"the copies at δ = {copies_test.delta:g}; matches of {HANDS} hands, 4 a deal, "
        f"at most {CAP} deals a gauntlet; "
        f"{args.jobs} processes",
        flush=True,
    )
    started = time.perf_counter()
    results = run_all(jobs_for(pairs, test, copies, copies_test), args.jobs)
    wall = time.perf_counter() - started
    gauntlets = [r for r in results if isinstance(r, RunResult)]
    spreads = [r for r in results if isinstance(r, SpreadResult)]
    print()
    print("\n".join(HEADER))
    for pair in pairs:
        runs = sorted((r for r in gauntlets if r.job.pair == pair), key=lambda r: r.job.seed)
        print(pair_row(pair, runs, [s for s in spreads if s.job.pair == pair], test))
    print()
    copied = [r for r in gauntlets if r.job.pair == copies]
    if copied:  # none with --copies 0
        print(false_positive_line(copies, copied, copies_test))
    print(f"Wall time {wall:.0f} s")


if __name__ == "__main__":
    main()

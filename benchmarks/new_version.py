"""How soon the ladder shows a new version of a bot where it belongs.

    python -m benchmarks.new_version                      # 6 seeds, about 1 minute
    python -m benchmarks.new_version --wider 20 30 40     # seeded starts of other σ beside
    python -m benchmarks.new_version --seeds 1 --settle 50 --after 50   # a quick look

The simulated ladder of benchmarks/ladder.py (16 bots: house Normal and bots that play a
random legal card with probability p, so a larger p is weaker), seated by the arena's
matchmaker, with duplicate deals, rated by the arena's ratings. After ``--settle`` rated
matches one bot answers a new version in ``hello`` and the ladder plays ``--after`` more.
Two changes:

- **better**: the weakest bot (``bot_p100``, p = 1) becomes house Normal's equal (p = 0): its
  true place is first or second, beside house Normal;
- **same**: a middling bot (``bot_p47``) answers a new version that plays as before.

Each change is played from the same ladder and the same deals with the new version's rating
started as the arena starts it (**seeded**: the previous version's μ, σ at least
``NEW_VERSION_SIGMA``; ``--wider``: other least σ to compare) and as a never-rated bot's
(**fresh**: house Normal's level, σ ``PRIOR_SIGMA``). Printed for each, the median over the
seeds (and range): the ladder's matches after the change until the version is shown (by
μ − 3σ, as the ladder orders) within one place of its true place and stays there to the end;
how many of those it played itself; the matches until its μ is within ``--within`` points per
hand of where it belongs (house Normal's μ for *better*, the previous version's μ at the
change for *same*) and stays; and its σ at the end.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from arena.matchmaker import choose_tables
from arena.ratings import ANCHOR, NEW_VERSION_SIGMA, starting_rating
from arena.records import Rating
from benchmarks.ladder import (
    ARMS,
    Entrant,
    field,
    median_range,
    play_table,
    rate_match,
    seatings,
)

SIZE = 16
CHANGES = {"better": ("bot_p100", 0.0), "same": ("bot_p47", 7 / 15)}
"""Which bot answers a new version, and the new version's random-card probability."""
ARM = ARMS[0]
"""The arena's way: the matchmaker, duplicate deals, each match rated on its own."""


@dataclass(frozen=True)
class Job:
    seed: int
    change: str
    start: str
    settle: int
    wider: float
    """The least σ of a seeded start (the arena's: ``NEW_VERSION_SIGMA``)."""
    after: int
    within: float


@dataclass(frozen=True)
class Result:
    job: Job
    placed: int | None
    """Ladder matches after the change until the version stays within one place of its own."""
    placed_own: int | None
    """Of those, the ones the version played."""
    near: int | None
    """Ladder matches after the change until its μ stays within ``within`` of its target."""
    sigma: float
    seconds: float


def true_places(order: Sequence[Entrant], bot_id: str) -> tuple[int, int]:
    """The first and last place (1 = top) ``bot_id`` may truly hold: bots of equal p tie."""
    p = next(e.p for e in order if e.bot_id == bot_id)
    above = sum(e.p < p for e in order)
    level = sum(e.p == p for e in order)
    return above + 1, above + level


def shown_place(board: dict[str, Rating], bot_id: str) -> int:
    mine = board[bot_id].conservative
    return 1 + sum(r.conservative > mine for b, r in board.items() if b != bot_id)


def run(job: Job) -> Result:
    started = time.perf_counter()
    bot_id, new_p = CHANGES[job.change]
    order = [Entrant(bot_id, new_p) if e.bot_id == bot_id else e for e in field(SIZE)]
    entrants = {e.bot_id: e for e in field(SIZE)}  # before the change: the old version
    board = {e.bot_id: starting_rating(e.bot_id, "1", None) for e in order}
    rng = random.Random(f"tables:{job.seed}")
    secret = hashlib.sha256(f"ladder:{job.seed}".encode()).digest()
    lo, hi = true_places(order, bot_id)
    played = 0
    target: float | None = None  # where its μ belongs, once the new version plays
    trail: list[tuple[bool, bool, int]] = []  # after each rated match past the change
    for deals, table, _ in seatings(order, board, choose_tables, tables=SIZE, rng=rng):
        if target is None and played >= job.settle:  # the new version, table by table
            entrants[bot_id] = Entrant(bot_id, new_p)
            previous = board[bot_id]
            level = board[ANCHOR].mu
            seeded = starting_rating(bot_id, "2", previous)
            board[bot_id] = (
                replace(seeded, sigma=max(previous.sigma, job.wider))
                if job.start == "seeded"
                else starting_rating(bot_id, "2", None, level=level)
            )
            target = previous.mu
        for log in play_table(table, entrants, secret, deals, duplicate=True):
            rate_match(board, log, ARM)
            played += 1
            if target is None:
                continue
            rating = board[bot_id]
            goal = board[ANCHOR].mu if job.change == "better" else target
            trail.append(
                (
                    lo - 1 <= shown_place(board, bot_id) <= hi + 1,
                    abs(rating.mu - goal) <= job.within,
                    rating.matches,
                )
            )
        if played >= job.settle + job.after:
            break
    placed = settled_at(trail, 0)
    own = None if placed is None else (trail[placed - 1][2] if placed else 0)
    return Result(
        job, placed, own, settled_at(trail, 1), board[bot_id].sigma, time.perf_counter() - started
    )


def label(start: str, wider: float) -> str:
    """How a new version's rating started, as printed."""
    return f"seeded, σ at least {wider:g}" if start == "seeded" else start


def settled_at(trail: Sequence[tuple[bool, bool, int]], which: int) -> int | None:
    """The matches after which ``trail[...][which]`` held to the end (0: from the change on;
    None: not at the end)."""
    if not trail or not trail[-1][which]:
        return None
    failing = [i for i, row in enumerate(trail) if not row[which]]
    return failing[-1] + 1 if failing else 0


def table(results: Sequence[Result], after: int, within: float) -> list[str]:
    rows = [
        "| change | start | runs | matches until shown within one place, for good | "
        "of them its own | matches until μ within "
        f"{within:g} of where it belongs, for good | σ at the end |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    starts = sorted({(r.job.start, r.job.wider) for r in results}, key=lambda s: s[1])
    for change in CHANGES:
        for start, wider in starts:
            mine = [
                r
                for r in results
                if (r.job.change, r.job.start, r.job.wider) == (change, start, wider)
            ]
            said = label(start, wider)
            rows.append(
                f"| {change} | {said} | {len(mine)} | "
                f"{median_range([r.placed for r in mine], after)} | "
                f"{median_range([r.placed_own for r in mine], after)} | "
                f"{median_range([r.near for r in mine], after)} | "
                f"{statistics.fmean(r.sigma for r in mine):.1f} |"
            )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--settle", type=int, default=400, help="rated matches before it")
    parser.add_argument("--after", type=int, default=600, help="rated matches after it")
    parser.add_argument("--within", type=float, default=10.0, help="points per hand")
    parser.add_argument(
        "--wider",
        type=float,
        nargs="+",
        default=[NEW_VERSION_SIGMA],
        help="the least σ of a seeded start: the arena's, or others to compare",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args(argv)
    starts = [("seeded", wider) for wider in args.wider] + [("fresh", NEW_VERSION_SIGMA)]
    jobs = [
        Job(seed, change, start, args.settle, wider, args.after, args.within)
        for seed in range(1, args.seeds + 1)
        for change in CHANGES
        for start, wider in starts
    ]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, jobs))
    for r in results:
        print(
            f"{r.job.change}, {label(r.job.start, r.job.wider)}, seed {r.job.seed}: within "
            f"one place for good after {r.placed}, μ near after {r.near}; {r.seconds:.0f} s"
        )
    print()
    print("\n".join(table(results, args.after, args.within)))
    print(f"wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

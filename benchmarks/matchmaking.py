"""What a ladder matchmaking round costs as the ladder grows.

    python -m benchmarks.matchmaking --sizes 100 1000 3000

A round (:func:`arena.matchmaker.choose_tables`) first works out every member's doubt
(:func:`arena.matchmaker.doubts`), which looks at every pair of members, then seats its
tables. For each ladder size this prints, side by side, the CPU time of the doubts as the arena
works them out and as their definition reads (each member's :func:`order_doubt` with every
other, so each pair twice), and of a whole round of 4 tables. The members are drawn at random:
μ around 25, σ between 1 and 8.33, as on a ladder with new and settled bots.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial

from arena.matchmaker import Member, choose_tables, doubts, order_doubt


def by_definition(members: Sequence[Member]) -> dict[str, float]:
    """Each member's doubt as :func:`arena.matchmaker.doubts` defines it, pair by pair."""
    return {
        m.bot_id: sum(order_doubt(m, o) for o in members if o.bot_id != m.bot_id) for m in members
    }


def cpu_ms(rounds: int, work: Callable[..., object], *args: object) -> float:
    """The median CPU time of ``work(*args)`` over ``rounds`` runs, in milliseconds."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        work(*args)
        times.append(time.process_time() - start)
    return 1000 * statistics.median(times)


def field(size: int, seed: int = 1) -> list[Member]:
    rng = random.Random(seed)
    return [
        Member(f"bot_{i}", rng.gauss(25, 5), rng.uniform(1, 8.33), rng.randrange(200), room=1)
        for i in range(size)
    ]


def lines(sizes: Sequence[int], rounds: int) -> list[str]:
    rows = [
        "| members | doubts, by definition (ms) | doubts, the arena (ms) | ratio "
        "| a round of 4 tables (ms) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        members = field(size)
        if doubts(members) != by_definition(members):
            raise SystemExit(f"the doubts differ from their definition at {size} members")
        slow = cpu_ms(rounds, by_definition, members)
        fast = cpu_ms(rounds, doubts, members)
        whole = cpu_ms(rounds, partial(choose_tables, tables=4, rng=random.Random(2)), members)
        rows.append(f"| {size:,} | {slow:,.1f} | {fast:,.1f} | {fast / slow:.2f} | {whole:,.1f} |")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, the median shown")
    args = parser.parse_args(argv)
    print("\n".join(lines(args.sizes, args.rounds)))


if __name__ == "__main__":
    main()

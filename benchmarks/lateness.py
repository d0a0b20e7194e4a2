"""How late a sleeping thread wakes up beside threads that compute without a pause: the
lateness a work horse's admission limit reads (:mod:`workers.admission`).

    python -m benchmarks.lateness                  # 0, 1, 2 and 4 busy threads, 3 s each

For each count of busy threads, :class:`workers.admission.Lateness` runs for ``--seconds`` in
this process beside them; printed: the median and 90th percentile of its wake-ups' lateness,
and how often a work horse with the default limit would have taken a new match (the median of
the last five within ``GONGZHU_ADMISSION_LATENESS_MS``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

from arena.config import Config
from workers.admission import PERIOD_S, WINDOW, Lateness


def busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(1000))


def measure(threads: int, seconds: float, limit_ms: float) -> tuple[list[float], float]:
    """The lateness (ms) of the wake-ups beside ``threads`` busy threads, each counted once (one
    more than :data:`WINDOW` between two readings would be missed), and the share of the
    readings at which the median of the last :data:`WINDOW` was within ``limit_ms``."""
    stop = threading.Event()
    workers = [threading.Thread(target=busy, args=(stop,)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    lateness = Lateness()
    lateness.start()
    seen: list[float] = []
    admitted = readings = counted = 0
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            time.sleep(PERIOD_S * WINDOW)
            fresh, counted = lateness.measured - counted, lateness.measured
            seen += lateness.recent_ms()[-fresh:] if fresh else []  # each wake-up once
            readings += 1
            admitted += lateness.median_ms() <= limit_ms
    finally:
        lateness.stop()
        stop.set()
        for worker in workers:
            worker.join()
    return seen, admitted / max(1, readings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--threads", type=int, nargs="*", default=[0, 1, 2, 4])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    limit = Config().admission_lateness_ms
    print(
        f"CPython {sys.version.split()[0]}, switch interval {sys.getswitchinterval() * 1000:g} ms,"
        f" load average {os.getloadavg()[0]:.1f}; limit {limit:g} ms\n"
    )
    print("| busy threads | lateness ms p50 | p90 | readings within the limit |")
    print("|---:|---:|---:|---:|")
    for threads in args.threads:
        seen, within = measure(threads, args.seconds, limit)
        ordered = sorted(seen)
        p90 = ordered[int(0.9 * (len(ordered) - 1))] if ordered else 0.0
        print(
            f"| {threads} | {statistics.median(seen or [0.0]):.1f} | {p90:.1f} | {within:.0%} |",
            flush=True,
        )
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

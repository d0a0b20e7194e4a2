"""CPU-bound work leaves the event loop under gevent (as gunicorn's gevent workers run the
service), and simply runs elsewhere."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from service.offload import run_cpu_bound

ROOT = Path(__file__).resolve().parents[2]

UNDER_GEVENT = textwrap.dedent(
    """
    from gevent import monkey
    monkey.patch_all()
    import sys, time, gevent
    from service.offload import run_cpu_bound

    def compute(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            sum(range(1000))
        return "done"

    ticks = []
    def ticker():
        while True:
            ticks.append(time.perf_counter())
            gevent.sleep(0.01)

    gevent.spawn(ticker)
    gevent.sleep(0.05)
    before = len(ticks)
    call = run_cpu_bound if sys.argv[1] == "offloaded" else lambda f, *a: f(*a)
    assert call(compute, 1.0) == "done"
    print(len(ticks) - before)
    """
)


def _ticks_while_computing(how: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", UNDER_GEVENT, how],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return int(done.stdout.strip())


def test_under_gevent_other_greenlets_go_on_while_the_work_runs() -> None:
    """1 s of computing: run directly it stops the loop (no tick); offloaded, the ticker,
    which wakes every 10 ms, keeps going (a hundred ticks on an idle machine; a loaded one
    gives it fewer, so a few are asked for)."""
    assert _ticks_while_computing("direct") <= 1
    assert _ticks_while_computing("offloaded") >= 5


def test_without_gevent_the_work_simply_runs() -> None:
    assert run_cpu_bound(sum, [1, 2, 3]) == 6

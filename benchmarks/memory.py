"""A worker's memory over a tournament: peak RSS sampled as the matches are recorded.

    python -m benchmarks.memory                    # a 200-match tournament
    python -m benchmarks.memory --matches 400 --hands 2

A fresh Redis (``arena.redis_server``) and one real worker, ``python -m workers worker`` as
the Procfile runs it. The tournament: four registered bots (the SDK's LowestCard served by
waitress on loopback, over ``HttpSeat``) and ``house:easy`` (in-process): five entrants, so five
tables of four, each playing ``--matches / 5`` deals (not duplicate), one hand per match
(``--hands``) to keep the run short. It is created and started as the service does (stored,
``queued``, ``workers.jobs.run_tournament`` queued); the worker expands it and plays every
match job.

rq's worker forks a work horse per job, so "the worker" is two figures: the worker process
itself (alive for the whole tournament: where a leak would pile up) and the work horses (one per
match). Both are read from ``/proc/PID/status`` every few milliseconds: ``VmHWM`` (peak RSS)
and ``VmRSS``. At each quarter of the tournament the report gives the worker process's figures
and the largest work-horse peak of that quarter, and the growth per 50 matches.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.arena import ROOT, SECRET, start_bot_server, stop_server
from benchmarks.web import fresh_redis

POLL_S = 0.005
ENTRANTS = 5
"""Four registered bots and house Easy: a round-robin of five tables."""


def memory_kib(pid: int) -> tuple[int, int] | None:
    """``(VmHWM, VmRSS)`` of a live process in KiB, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = dict(line.split(":", 1) for line in text.splitlines() if line.startswith("Vm"))
    if "VmHWM" not in found:  # a zombie
        return None
    return int(found["VmHWM"].split()[0]), int(found["VmRSS"].split()[0])


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@dataclass
class Sample:
    """The figures at one checkpoint."""

    matches: int
    seconds: float
    worker_hwm: int
    worker_rss: int
    horse_peak: int
    horses: int


@dataclass
class Watch:
    """Polls the worker and its work horses."""

    pid: int
    horse_peak: int = 0
    horses: set[int] = field(default_factory=set)

    def poll(self) -> None:
        for child in children(self.pid):
            figures = memory_kib(child)
            if figures:
                self.horses.add(child)
                self.horse_peak = max(self.horse_peak, figures[0])

    def sample(self, matches: int, seconds: float) -> Sample:
        hwm, rss = memory_kib(self.pid) or (0, 0)
        taken = Sample(matches, seconds, hwm, rss, self.horse_peak, len(self.horses))
        self.horse_peak, self.horses = 0, set()
        return taken


def start_tournament(store: Any, bot_url: str, matches: int, hands: int) -> str:
    """Register the bots, create the tournament and queue it as the service's start does."""
    from rq import Queue

    from arena.config import Config
    from arena.queue import enqueue_tournament
    from arena.records import Format, TournamentSpec, TournamentStatus
    from referee import Rules
    from replays.log import TimeControl

    bots = [
        store.create_bot(
            name=f"lowest-{i}",
            endpoint=bot_url,
            description="LowestCard",
            contact="bench@example.org",
            version="1",
            secret=SECRET,
        )[0].id
        for i in range(ENTRANTS - 1)
    ]
    spec = TournamentSpec(
        name="memory",
        participants=(*bots, "house:easy"),
        format=Format(duplicate=False, matches_per_table=max(1, matches // ENTRANTS), hands=hands),
        rules=Rules(),
        time_control=TimeControl(2000, 30_000, 5),
    )
    tid = store.create_tournament(spec)
    store.move_tournament(tid, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED])
    enqueue_tournament(Queue(Config().queue_name, connection=store.redis), tid)
    return tid


def run(matches: int, hands: int, checkpoints: int) -> tuple[list[Sample], int]:
    """Play the tournament with one worker; the samples and the tournament's match count."""
    with (
        tempfile.TemporaryDirectory(prefix="gz-memory-bench-") as tmp,
        fresh_redis(Path(tmp), fsync="always") as (redis_server, store, keys),
    ):
        bot_server, url = start_bot_server()
        env = {
            **os.environ,
            **keys.environment(redis_server.url),
            "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "1",
            "PYTHONPATH": str(ROOT),
        }
        worker = subprocess.Popen(
            [sys.executable, "-m", "workers", "worker"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(Path(tmp) / "worker.log").open("w"),
        )
        try:
            tid = start_tournament(store, url, matches, hands)
            return watch(store, tid, worker, checkpoints)
        finally:
            worker.terminate()
            worker.wait(30)
            stop_server(bot_server)


def watch(
    store: Any, tid: str, worker: subprocess.Popen[bytes], checkpoints: int
) -> tuple[list[Sample], int]:
    """Poll until the tournament is done, sampling at each of ``checkpoints`` equal steps."""
    from arena.records import TournamentStatus

    began = time.perf_counter()
    spy = Watch(worker.pid)
    samples = [spy.sample(0, 0.0)]
    total = 0
    while True:
        spy.poll()
        tournament = store.get_tournament(tid)
        total = tournament.total or 0
        due = total and tournament.done >= total * (len(samples)) // checkpoints
        if due:
            samples.append(spy.sample(tournament.done, time.perf_counter() - began))
        if tournament.status is TournamentStatus.DONE and len(samples) > checkpoints:
            return samples, total
        if worker.poll() is not None:
            raise RuntimeError(f"the worker exited with {worker.returncode}")
        time.sleep(POLL_S)


def report(samples: list[Sample], total: int, hands: int) -> None:
    first = samples[1]
    print(
        f"\nWorker memory over a {total}-match tournament ({hands} hand(s) per match, "
        f"4 HTTP bots + house Easy), {samples[-1].seconds:.0f} s; KiB from /proc/PID/status"
    )
    print(
        "| matches recorded | s | worker VmHWM | worker VmRSS | largest work-horse VmHWM "
        "(this quarter) | horses seen |\n|---:|---:|---:|---:|---:|---:|"
    )
    for s in samples:
        print(
            f"| {s.matches} | {s.seconds:.0f} | {s.worker_hwm:,} | {s.worker_rss:,} | "
            f"{s.horse_peak:,} | {s.horses} |"
        )
    last = samples[-1]
    span = max(1, last.matches - first.matches)
    print(
        f"Growth from {first.matches} to {last.matches} matches, per 50 matches: worker VmHWM "
        f"{(last.worker_hwm - first.worker_hwm) * 50 / span:+,.0f} KiB, worker VmRSS "
        f"{(last.worker_rss - first.worker_rss) * 50 / span:+,.0f} KiB, work-horse peak "
        f"{(last.horse_peak - first.horse_peak) * 50 / span:+,.0f} KiB"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=200, help="matches in the tournament")
    parser.add_argument("--hands", type=int, default=1, help="hands per match")
    parser.add_argument("--checkpoints", type=int, default=4, help="samples over the run")
    args = parser.parse_args(argv)
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    samples, total = run(args.matches, args.hands, args.checkpoints)
    report(samples, total, args.hands)


if __name__ == "__main__":
    main()

"""Many matches in flight: matches per second and memory per match in flight, as one worker's
concurrency grows (``GONGZHU_MATCHES_PER_WORKER``), beside as many one-match worker processes.

    python -m benchmarks.inflight                                  # the default ladder
    python -m benchmarks.inflight --threads 1 10 50 --processes 1 10 --rounds 2
    python -m benchmarks.inflight --house --threads 1 25 --unlimited 25 --processes

A fresh Redis (``arena.redis_server``) and real workers, ``python -m workers worker`` as the
Procfile runs them. The bots: four registered bots served by one asyncio server on loopback in
its own process (keep-alive, one coroutine per connection), which answers every decision with
its first legal card 50 ms after the request arrives: a whole match of bots that answer after
50 ms, each seat over ``HttpSeat``. Each run is a one-table duplicate tournament of one-hand
matches, ``--rounds`` times as many matches as in flight, planned and queued before the workers
start (as ``run_tournament`` does). With ``--house``, one such bot and the house bots Easy,
Normal and Hard (which think in the worker: Hard about 50 ms of CPU a card) at every table. The
contestants:

- ``threads N``: one worker, ``GONGZHU_MATCHES_PER_WORKER=N`` (its work horse plays up to N
  matches at once, a thread each, :mod:`workers.stable`, taking a new one only while its threads
  wake up on time, :mod:`workers.admission`);
- ``unlimited N``: the same with ``GONGZHU_ADMISSION_LATENESS_MS=0`` (N matches at once whatever
  the lateness);
- ``processes N``: N workers, ``GONGZHU_MATCHES_PER_WORKER=1`` (rq's own horse, one match each).

Per run: the most decisions the bot server was answering at once (one per match in flight);
matches recorded per second (from the workers' start until the last is recorded);
memory, the peak over the run of the summed PSS (``/proc/PID/smaps_rollup``: shared pages
divided among the processes sharing them, so a forked horse is not counted twice) of the
workers and their horses, and that peak per match in flight; the CPU the workers and horses used
per second of the run (1.0 is one core: a work horse's threads share one interpreter lock); and
how much longer than the bot's 50 ms the arena charged the decisions (each decision's logged
latency minus 50 ms, over every decision of a bot over HTTP: its median and 99th percentile),
the time a decision's thread waited for the CPU included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.arena import ROOT, SECRET
from benchmarks.web import fresh_redis

BOT_DELAY_S = 0.05
BOTS = 4
HOUSE = ("house:easy", "house:normal", "house:hard")
"""With ``--house``: the other three seats of every table (the bots' code in the worker)."""
POLL_S = 0.1


# -- the bot server (its own process) ----------------------------------------------------------


def _serve_bot() -> None:
    """An HTTP/1.1 bot on a free loopback port (printed): every decision answered with its first
    legal card after :data:`BOT_DELAY_S`, every notice and hello with 204 (a failed hello is
    logged and changes nothing)."""

    asked, peak = 0, 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal asked, peak
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                request = json.loads(await reader.readexactly(length))
                if request.get("type") != "decision":
                    writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                    continue
                asked += 1
                if asked > peak:
                    peak = asked
                    print(f"peak {peak}", flush=True)
                await asyncio.sleep(BOT_DELAY_S)
                asked -= 1
                choice = request["observation"]["decision"]["choices"][0]
                body = json.dumps({"card": choice}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def serve() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(serve())


def start_bot_server() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.inflight", "--serve-bot"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, f"http://127.0.0.1:{server.stdout.readline().strip()}/bot"


# -- one run -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    mode: str
    in_flight: int
    most_asked: int
    matches: int
    seconds: float
    pss_kib: int
    cpu_s: float
    extra_ms: list[int]

    @property
    def per_second(self) -> float:
        return self.matches / self.seconds


def pss_kib(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith("Pss:")), 0)


def cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def family(pids: list[int]) -> list[int]:
    """``pids`` and their children (the work horses)."""
    found = list(pids)
    for pid in pids:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            continue
    return found


def plan(store: Any, bots: list[str], matches: int) -> str:
    """A one-table duplicate tournament of ``matches`` one-hand matches, planned and queued."""
    from rq import Queue

    from arena.config import Config
    from arena.queue import enqueue_match
    from arena.records import Format, TournamentSpec, TournamentStatus
    from arena.tournaments import plan as planned_matches
    from arena.tournaments import store_planned
    from referee import Rules
    from replays.log import TimeControl

    spec = TournamentSpec(
        name="in flight",
        participants=tuple(bots),
        format=Format(duplicate=True, matches_per_table=max(1, -(-matches // 4)), hands=1),
        rules=Rules.with_variants("no_exposure"),
        time_control=TimeControl(2000, 30_000, 5),
    )
    tid = store.create_tournament(spec)
    store.move_tournament(tid, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED])
    found = planned_matches(
        spec.participants, seed=tid, duplicate=True, matches_per_table=spec.format.matches_per_table
    )
    store_planned(store, tid, found)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.QUEUED])
    queue = Queue(Config().queue_name, connection=store.redis)
    for match in found:
        enqueue_match(queue, match.match_id(tid))
    return tid


def extra_ms(store: Any, tid: str) -> list[int]:
    """Every HTTP decision's logged latency minus the bot's 50 ms."""
    from replays.packing import unpacked_json
    from replays.upgrade import read_log

    found = []
    for match in store.list_matches(page=1, per_page=10_000, tournament_id=tid).items:
        blob = store.replay_blob(match.id)
        log = read_log(json.loads(unpacked_json(blob)))
        http = {seat.seat for seat in log.seats if seat.kind == "http"}
        found += [
            d.latency_ms - round(BOT_DELAY_S * 1000)
            for hand in log.hands
            for d in hand.decisions
            if d.latency_ms is not None and d.seat in http
        ]
    return found


def run(mode: str, in_flight: int, rounds: int, house: bool = False) -> Result:
    from arena.records import TournamentStatus

    workers = in_flight if mode == "processes" else 1
    per_worker = 1 if mode == "processes" else in_flight
    with (
        tempfile.TemporaryDirectory(prefix="gz-inflight-bench-") as tmp,
        fresh_redis(Path(tmp), fsync="everysec") as (redis_server, store, keys),
    ):
        bot_server, url = start_bot_server()
        bots = [
            store.create_bot(
                name=f"bot-{i}",
                endpoint=url,
                description="50 ms",
                contact="b@example.org",
                version="1",
                secret=SECRET,
            )[0].id
            for i in range(1 if house else BOTS)
        ]
        if house:
            bots += list(HOUSE)
        tid = plan(store, bots, rounds * in_flight)
        env = {
            **os.environ,
            **keys.environment(redis_server.url),
            "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "1",
            "GONGZHU_MATCHES_PER_WORKER": str(per_worker),
            **({"GONGZHU_ADMISSION_LATENESS_MS": "0"} if mode == "unlimited" else {}),
            "PYTHONPATH": str(ROOT),
        }
        log = (Path(tmp) / "workers.log").open("w")
        began = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "workers", "worker"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            for _ in range(workers)
        ]
        try:
            peak, used = 0, 0.0
            seen: dict[int, float] = {}
            while True:
                pids = family([p.pid for p in procs])
                peak = max(peak, sum(pss_kib(pid) for pid in pids))
                for pid in pids:
                    seen[pid] = max(seen.get(pid, 0.0), cpu_s(pid))
                tournament = store.get_tournament(tid)
                if tournament.status is TournamentStatus.DONE:
                    break
                time.sleep(POLL_S)
            seconds = time.perf_counter() - began
            used = sum(seen.values())
            total = tournament.total
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(60)
            bot_server.terminate()
            said, _ = bot_server.communicate(timeout=10)
        most_asked = max((int(line.split()[1]) for line in said.splitlines()), default=0)
        return Result(mode, in_flight, most_asked, total, seconds, peak, used, extra_ms(store, tid))


def _pct(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def report(results: list[Result]) -> None:
    base = results[0]
    print(
        "\n| contestant | room | most asked at once | matches | matches/s | × 1 thread | "
        "peak PSS MiB | PSS MiB per match asked at once | CPU (cores) | extra ms p50 | "
        "extra ms p99 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.mode} {r.in_flight} | {r.in_flight} | {r.most_asked} | {r.matches} | "
            f"{r.per_second:.2f} | {r.per_second / base.per_second:.1f} | "
            f"{r.pss_kib / 1024:.0f} | {r.pss_kib / 1024 / max(1, r.most_asked):.1f} | "
            f"{r.cpu_s / r.seconds:.2f} | "
            f"{statistics.median(r.extra_ms):.0f} | {_pct(r.extra_ms, 0.99):.0f} |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 5, 10, 25, 50, 100])
    parser.add_argument("--unlimited", type=int, nargs="*", default=[25, 50, 100])
    parser.add_argument("--processes", type=int, nargs="*", default=[5, 10, 25])
    parser.add_argument("--rounds", type=int, default=3, help="matches per match in flight")
    parser.add_argument(
        "--house",
        action="store_true",
        help="one bot over HTTP and the house bots Easy, Normal and Hard at every table",
    )
    parser.add_argument("--serve-bot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bot:
        _serve_bot()
        return
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    results = []
    contestants = (
        ("threads", args.threads),
        ("unlimited", args.unlimited),
        ("processes", args.processes),
    )
    for mode, counts in contestants:
        for count in counts:
            results.append(run(mode, count, args.rounds, args.house))
            r = results[-1]
            print(f"{mode} {count}: {r.matches} matches in {r.seconds:.1f} s", flush=True)
    report(results)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

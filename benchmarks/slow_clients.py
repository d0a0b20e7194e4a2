"""Slow clients against the web service: does a crowd of connections that never finish their
request starve the readers?

    python -m benchmarks.slow_clients            # 200 slow connections, 32 readers, 5 s
    python -m benchmarks.slow_clients --slow 16 --seconds 3

Each configuration of gunicorn (the Procfile's ``web`` line, and the others compared with it)
serves a fresh Redis holding one tournament. Then, for ``--seconds``, ``--readers`` threads read
``/health`` and the tournament's standings in a loop (each request with a 5 s timeout), first
alone ("calm"), then while ``--slow`` connections each send one byte of their request's headers
every 2 s and never finish it (slowloris). Everything runs on loopback and stops by itself: the
slow connections are closed when the readers stop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.web import fresh_redis, web_command, web_service

GTHREAD = 'gunicorn --workers 2 --threads 4 --bind "${GONGZHU_BIND:-127.0.0.1:8000}" ' + (
    "'service.app:from_environment()'"
)
READ_TIMEOUT_S = 5.0
TRICKLE_S = 2.0


@dataclass
class Reads:
    latencies_ms: list[float] = field(default_factory=list)
    failed: int = 0

    def line(self, name: str, phase: str) -> str:
        done = sorted(self.latencies_ms)
        if not done:
            return f"| {name} | {phase} | 0 | {self.failed} | – | – | – |"
        p99 = done[min(len(done) - 1, int(0.99 * len(done)))]
        return (
            f"| {name} | {phase} | {len(done):,} | {self.failed} | "
            f"{statistics.median(done):.1f} | {p99:.1f} | {done[-1]:.1f} |"
        )


def read_loop(urls: list[str], seconds: float, readers: int) -> Reads:
    """``readers`` threads reading ``urls`` in turn for ``seconds``."""
    reads = Reads()
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def reader(offset: int) -> None:
        n = offset
        while time.monotonic() < stop:
            url = urls[n % len(urls)]
            n += 1
            began = time.perf_counter()
            try:
                with urllib.request.urlopen(url, timeout=READ_TIMEOUT_S) as response:
                    response.read()
                    ok = response.status == 200
            except OSError:
                ok = False
            elapsed = (time.perf_counter() - began) * 1000
            with lock:
                if ok:
                    reads.latencies_ms.append(elapsed)
                else:
                    reads.failed += 1

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reads


@contextmanager
def slow_connections(host: str, port: int, count: int) -> Iterator[list[int]]:
    """``count`` connections that start a request and send one more header byte every
    ``TRICKLE_S`` seconds, never finishing it, until the block ends. Yields a one-item list:
    how many are open."""
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    opened = [0]

    async def one() -> None:
        try:
            _, writer = await asyncio.open_connection(host, port)
        except OSError:
            return
        opened[0] += 1
        try:
            writer.write(b"GET /health HTTP/1.1\r\nHost: arena\r\nX-Slow: ")
            while not stop.is_set():
                writer.write(b"a")
                await writer.drain()
                with suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TRICKLE_S)
        except OSError:
            pass
        finally:
            writer.close()

    async def run() -> None:
        await asyncio.gather(*(one() for _ in range(count)))

    thread = threading.Thread(target=loop.run_until_complete, args=(run(),), daemon=True)
    thread.start()
    time.sleep(1.0)  # let them connect and send their first bytes
    try:
        yield opened
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()


def measure(command: str, name: str, args: argparse.Namespace, workdir: Path) -> list[str]:
    """The calm and the slowloris reads of one gunicorn configuration."""
    from referee import Rules
    from replays.log import TimeControl
    from workers.records import Format, TournamentSpec

    with fresh_redis(workdir / name, fsync="no") as (server, store, keys):
        spec = TournamentSpec(
            "slow", ("house:easy",), Format(), Rules(), TimeControl(1000, 30_000, 5)
        )
        tid = store.create_tournament(spec)
        with web_service(server.url, keys, command=command) as base:
            urls = [f"{base}/health", f"{base}/api/tournaments/{tid}/standings"]
            calm = read_loop(urls, args.seconds, args.readers)
            host, port = base.removeprefix("http://").split(":")
            with slow_connections(host, int(port), args.slow) as opened:
                slow = read_loop(urls, args.seconds, args.readers)
            with busy_players(base, args.players) as started:
                busy = read_loop(urls, args.seconds, args.readers)
            return [
                calm.line(name, "calm"),
                slow.line(name, f"{opened[0]} slow connections"),
                busy.line(name, f"{args.players} players vs Hard ({started[0]} games)"),
            ]


@contextmanager
def busy_players(base: str, players: int) -> Iterator[list[int]]:
    """``players`` clients starting games against three Hard house bots, one after another:
    each start plays the computers' first turns inside the request (CPU-bound work in the web
    process). Yields a one-item list: the games started."""
    stop = threading.Event()
    started = [0]
    body = json.dumps({"opponents": ["house:hard"] * 3, "seat": 3}).encode()

    def play() -> None:
        while not stop.is_set():
            request = urllib.request.Request(
                f"{base}/api/play", data=body, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    response.read()
                    started[0] += 1
            except OSError:
                time.sleep(0.1)

    threads = [threading.Thread(target=play, daemon=True) for _ in range(players)]
    for thread in threads:
        thread.start()
    try:
        yield started
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=200, help="slow connections (200)")
    parser.add_argument("--readers", type=int, default=32, help="reading clients (32)")
    parser.add_argument("--seconds", type=float, default=5.0, help="each phase's length (5)")
    parser.add_argument("--players", type=int, default=4, help="clients playing Hard (4)")
    args = parser.parse_args(argv)
    os.environ["GONGZHU_PLAY_LIMIT"] = "100000 per minute"  # one address starts every game
    configurations = {"Procfile (gevent)": web_command(), "gthread (until 2026-12)": GTHREAD}
    print(
        f"{args.readers} readers of /health and a tournament's standings, {args.seconds:g} s a "
        f"phase; slow connections send a header byte every {TRICKLE_S:g} s"
    )
    print("| web | phase | reads | failed (5 s timeout) | p50 ms | p99 ms | max ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as where:
        for name, command in configurations.items():
            for line in measure(command, name, args, Path(where)):
                print(line, flush=True)


if __name__ == "__main__":
    main()

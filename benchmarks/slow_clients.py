"""Slow clients against the web service: does a crowd of connections that never finish their
request starve the readers?

    python -m benchmarks.slow_clients            # 200 slow connections, 32 readers, 5 s
    python -m benchmarks.slow_clients --slow 16 --seconds 3

Each configuration of gunicorn (the Procfile's ``web`` line, and the others compared with it)
serves a fresh Redis holding one tournament. For each load, ``--readers`` threads read
``/health`` and the tournament's standings in a loop (each request with a 5 s timeout) for
``--seconds`` alone ("calm"), then as long again under the load; each row sets the load's
median beside the calm one just before it, so that whatever else the machine is doing weighs
on both alike. The loads: ``--slow`` connections that each send one byte of their request's
headers every 2 s and never finish it (slowloris); ``--players`` people starting games against
Hard (CPU-bound requests); 32 clients flooding ``/verify``; 10 clients flooding a bot's endpoint
changes to an address that never answers. The flooding clients run in a process of their own.
Everything runs on loopback and stops by itself: each load stops when its readers stop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.web import fresh_redis, web_command, web_service

GTHREAD = 'gunicorn --workers 2 --threads 4 --bind "${GONGZHU_BIND:-127.0.0.1:8000}" ' + (
    "'service.app:from_environment()'"
)
UNLIMITED = "1000000 per second"
READ_TIMEOUT_S = 5.0
TRICKLE_S = 2.0


@dataclass
class Reads:
    latencies_ms: list[float] = field(default_factory=list)
    failed: int = 0

    def p50(self) -> float | None:
        return statistics.median(self.latencies_ms) if self.latencies_ms else None

    def line(self, name: str, phase: str, calm: Reads) -> str:
        """A row of the table: these reads, beside the calm reads just before them."""
        done, before = sorted(self.latencies_ms), calm.p50()
        shown = "–" if before is None else f"{before:.1f}"
        if not done:
            return f"| {name} | {phase} | 0 | {self.failed} | – | – | – | {shown} | – |"
        p50, p99 = statistics.median(done), done[min(len(done) - 1, int(0.99 * len(done)))]
        ratio = "–" if before is None else f"{p50 / before:.2f}×"
        return (
            f"| {name} | {phase} | {len(done):,} | {self.failed} | "
            f"{p50:.1f} | {p99:.1f} | {done[-1]:.1f} | {shown} | {ratio} |"
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
    """The reads of one gunicorn configuration: calm, and under each kind of hostile load."""
    with fresh_redis(workdir / name, fsync="no") as (server, store, keys), black_hole() as nowhere:
        tid, match_id = recorded_match(store, keys)
        bot, token = store.create_bot(
            name="flooder", endpoint=nowhere, description="", contact="", version="1", secret="s"
        )
        with web_service(server.url, keys, command=command) as base:
            urls = [f"{base}/health", f"{base}/api/tournaments/{tid}/standings"]
            host, port = base.removeprefix("http://").split(":")
            lines = []

            def phase(during: Any, described: Callable[[Any], str]) -> None:
                """Calm reads, then reads under ``during``; its row, named by ``described``."""
                calm = read_loop(urls, args.seconds, args.readers)
                with during as held:
                    reads = read_loop(urls, args.seconds, args.readers)
                lines.append(reads.line(name, described(held), calm))

            slow = slow_connections(host, int(port), args.slow)
            phase(slow, lambda opened: f"{opened[0]} slow connections")
            play = json.dumps({"opponents": ["house:hard"] * 3, "seat": 3}).encode()
            change = json.dumps({"endpoint": nowhere}).encode()
            owner = {"Authorization": f"Bearer {token}"}
            loads = [
                (f"{args.players} players vs Hard", args.players, "POST", "/api/play", play, {}),
                ("32 clients flooding /verify", 32, "POST", f"/api/matches/{match_id}/verify",
                 None, {}),
                ("10 clients flooding endpoint changes to a black hole", 10, "PATCH",
                 f"/api/bots/{bot.id}", change, owner),
            ]  # fmt: skip
            for load, clients, method, path, body, headers in loads:
                phase(
                    flood(clients, method, base + path, body, headers),
                    lambda answers, load=load: f"{load} ({answered(answers)})",
                )
            return lines


def answered(answers: Counter[int]) -> str:
    """``60 x 200, 97 x 429``: how a flood was answered."""
    return ", ".join(f"{n} x {status}" for status, n in sorted(answers.items()))


def recorded_match(store: Any, keys: Any) -> tuple[str, str]:
    """A tournament, and a one-hand match of four lowest-card bots recorded outside it."""
    from arena.match_loop import InProcessSeat, play_match
    from arena.records import Format, TournamentSpec
    from bot_sdk.examples.lowest_card import LowestCard
    from referee import Game, Rules
    from replays.deals import DealSource
    from replays.integrity import key_id_of, seal
    from replays.log import SeatInfo, TimeControl

    tc = TimeControl(1000, 30_000, 5)
    tid = store.create_tournament(TournamentSpec("slow", ("house:easy",), Format(), Rules(), tc))
    seats = [InProcessSeat(LowestCard(), SeatInfo(s, f"b{s}", f"b{s}")) for s in range(4)]
    log = play_match(
        Game(Rules(fixed_hands=1), seed="s"),
        seats,
        match_id="m-verify",
        deals=DealSource.practice("s"),
        time_control=tc,
    )
    key_id = key_id_of(keys.key.public_key())
    store.record_result("m-verify", seal(log.to_json(), keys.key, key_id=key_id))
    return tid, "m-verify"


@contextmanager
def black_hole() -> Iterator[str]:
    """A loopback endpoint that accepts connections and never answers; yields its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/bot"
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        listener.close()


@contextmanager
def flood(
    clients: int, method: str, url: str, body: bytes | None, headers: dict[str, str]
) -> Iterator[Counter[int]]:
    """``clients`` threads sending the same request again and again until the block ends, in a
    process of their own (in the readers' process their loop would hold its interpreter lock
    and delay the reads it measures); yields the count of answers by status (0: no answer
    within 30 s), complete once the block has ended."""
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    results: Any = context.Queue()
    process = context.Process(
        target=_flood,
        kwargs={
            "clients": clients,
            "request": (method, url, body, headers),
            "ready": ready,
            "stop": stop,
            "results": results,
        },
    )
    process.start()
    ready.wait(30)
    answers: Counter[int] = Counter()
    try:
        yield answers
    finally:
        stop.set()
        answers.update(results.get(timeout=60))
        process.join(10)


def _flood(
    *,
    clients: int,
    request: tuple[str, str, bytes | None, dict[str, str]],
    ready: Any,
    stop: Any,
    results: Any,
) -> None:
    method, url, body, headers = request
    answers: Counter[int] = Counter()
    sent = {"Content-Type": "application/json", **headers} if body else headers

    def send() -> None:
        while not stop.is_set():
            asked = urllib.request.Request(url, data=body, headers=sent, method=method)
            try:
                with urllib.request.urlopen(asked, timeout=30) as response:
                    response.read()
                    answers[response.status] += 1
            except urllib.error.HTTPError as error:
                error.read()
                answers[error.code] += 1
            except OSError:
                answers[0] += 1

    threads = [threading.Thread(target=send, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    ready.set()
    for thread in threads:
        thread.join()
    results.put(dict(answers))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=200, help="slow connections (200)")
    parser.add_argument("--readers", type=int, default=32, help="reading clients (32)")
    parser.add_argument("--seconds", type=float, default=5.0, help="each phase's length (5)")
    parser.add_argument("--players", type=int, default=4, help="clients playing Hard (4)")
    args = parser.parse_args(argv)
    os.environ["GONGZHU_PLAY_LIMIT"] = "100000 per minute"  # one address starts every game
    os.environ["GONGZHU_ALLOW_PRIVATE_ENDPOINTS"] = "1"  # the black hole is on loopback
    configurations = {
        "Procfile (gevent)": web_command(),
        "gevent, /verify not limited": f"env GONGZHU_VERIFY_LIMIT='{UNLIMITED}' {web_command()}",
        "gthread (until 2026-12)": f"env GONGZHU_VERIFY_LIMIT='{UNLIMITED}' {GTHREAD}",
    }
    print(
        f"{args.readers} readers of /health and a tournament's standings, {args.seconds:g} s a "
        f"phase; slow connections send a header byte every {TRICKLE_S:g} s"
    )
    print(
        "| web | load | reads | failed (5 s timeout) | p50 ms | p99 ms | max ms "
        "| calm p50 ms just before | p50 ÷ calm |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as where:
        for name, command in configurations.items():
            for line in measure(command, name, args, Path(where)):
                print(line, flush=True)


if __name__ == "__main__":
    main()

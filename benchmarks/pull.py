"""Pull bots beside push bots: what a decision costs each way, and a crowd of connected pull bots.

    python -m benchmarks.pull                          # both parts, the defaults below
    python -m benchmarks.pull --rounds 6 --per-round 150
    python -m benchmarks.pull --idle 450 --active 50 --hands 2

Everything is real and on loopback: a fresh Redis, the web service as the Procfile runs it
(gunicorn, 2 gevent workers), the SDK's LowestCard bot served by ``python -m bot_sdk serve``
(push) and connected by ``python -m bot_sdk connect`` (pull), each in its own process.

**Overhead.** This process asks the same decisions (every decision of one-hand games of house
Easy bots) of three bots through the arena's own seat, ``arena.http_seat.HttpSeat``: one served
(push, a ``BotTransport``), and two connected (pull, a ``PullTransport``), one over the
WebSocket, one over the NDJSON stream with its answers POSTed; in rounds whose order turns
around each time (ABC CBA ...), so that whatever else the machine does weighs on all alike.
For each: the decision's round trip as the arena measures it (median, p90, mean), and the
arena's CPU per decision, read from ``/proc/PID/stat``: this process (the worker's side) plus,
for pull, the web processes that relay the request and take the answer. The bot's own CPU is
shown apart.

**Crowd.** ``--idle`` pull bots hold their stream open and do nothing (raw connections in a
process of their own, reading keep-alives), while ``--active`` more, connected by the SDK in
another process, play concurrent matches of ``--hands`` hands, four pull bots a table (a table
short of four is filled with house Easy bots), each match in a thread of this process as a
worker would play it; then the same matches are played again at once with a push bot (one
``python -m bot_sdk serve`` with 16 threads) in the pull bots' seats, the crowd still connected.
It reports that every stream is connected (``/ready``), the decisions' round trips of both
beside the calm figure of the first part, ``/health``'s latency during the pull matches, and
the web processes' memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.arena import SECRET, cpu_seconds, observations
from benchmarks.web import fresh_redis, web_service
from service.supervisor import children_of

ROOT = Path(__file__).resolve().parents[1]
BOT = "bot_sdk.examples.lowest_card:LowestCard"
LIMIT_MS = 1000
BANK_MS = 30_000


# -- the processes ----------------------------------------------------------------------------


def _web_pids() -> list[int]:
    """gunicorn's master and its workers (the web service runs under ``sh -c exec``)."""
    pattern = "service.app:from_environment"
    out = subprocess.run(["pgrep", "-f", pattern], check=False, capture_output=True)
    masters = [int(p) for p in out.stdout.split()]
    return sorted({*masters, *(c for m in masters for c in children_of(m))})


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except OSError:
            continue
    return total


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


@contextmanager
def bot_process(
    args: list[str], env: dict[str, str], *, log: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m bot_sdk ARGS`` with ``env``, its output into ``log`` (else nowhere)."""
    with ExitStack() as stack:
        output = subprocess.DEVNULL if log is None else stack.enter_context(log.open("w"))
        process = subprocess.Popen(
            [sys.executable, "-m", "bot_sdk", *args],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=output,
            stderr=output,
        )
        try:
            yield process
        finally:
            process.terminate()
            process.wait(10)


def _wait(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def _ready(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}/ready", timeout=5) as response:
        found: dict[str, Any] = json.loads(response.read())
        return found


def _pull_bots(store: Any, count: int, prefix: str) -> list[tuple[str, str]]:
    """``count`` active pull bots signing with :data:`SECRET`: (id, token) each."""
    from arena.records import BotStatus, Transport

    made = []
    for i in range(count):
        bot, token = store.create_bot(
            name=f"{prefix}-{i:04d}",
            endpoint="",
            description="",
            contact="bench@example.org",
            version="1.0",
            secret=SECRET,
            status=BotStatus.ACTIVE,
            transport=Transport.PULL,
        )
        made.append((bot.id, token))
    return made


# -- overhead ---------------------------------------------------------------------------------


@dataclass
class Side:
    """One transport's decisions: round trips (s), and CPU seconds spent by the arena and by the
    bot."""

    name: str
    times: list[float] = field(default_factory=list)
    arena_cpu: float = 0.0
    bot_cpu: float = 0.0

    def row(self, push: Side) -> str:
        done = sorted(self.times)
        p50, p90 = statistics.median(done), done[int(0.9 * (len(done) - 1))]
        mean = statistics.fmean(done)
        cpu = 1000 * self.arena_cpu / len(done)
        ratio = p50 / statistics.median(push.times)
        cpu_ratio = self.arena_cpu / len(done) / (push.arena_cpu / len(push.times))
        return (
            f"| {self.name} | {len(done):,} | {1000 * p50:.2f} | {1000 * p90:.2f} | "
            f"{1000 * mean:.2f} | {ratio:.2f}× | {cpu:.2f} | {cpu_ratio:.2f}× | "
            f"{1000 * self.bot_cpu / len(done):.2f} |"
        )


CHANNELS = ("websocket", "stream")
"""The pull bot's two channels (``python -m bot_sdk connect --channel``)."""


def overhead(store: Any, base: str, rounds: int, per_round: int) -> dict[str, Side]:
    from arena.http_seat import HttpSeat
    from arena.pull_transport import PullTransport
    from arena.redis_server import free_port
    from arena.transport import BotTransport
    from bot_sdk.protocol import DecisionRequest, Status
    from replays.log import SeatInfo

    obs_list = observations(max(1, rounds * per_round // 52 + 1))
    pulled = _pull_bots(store, len(CHANNELS), "overhead")
    port = free_port()
    web = _web_pids()
    with ExitStack() as stack:
        env = {"GONGZHU_BOT_SECRET": SECRET}
        push_bot = stack.enter_context(bot_process(["serve", BOT, "--port", str(port)], env))
        url = f"http://127.0.0.1:{port}/bot"
        push = BotTransport(url, [SECRET], allow_private=True)
        seats = {"push": (HttpSeat(SeatInfo(0, "push", "push"), push), push_bot.pid, [])}
        for channel, (bot_id, token) in zip(CHANNELS, pulled, strict=True):
            command = ["connect", BOT, "--arena", base, "--bot-id", bot_id, "--channel", channel]
            process = stack.enter_context(bot_process(command, {**env, "GONGZHU_BOT_TOKEN": token}))
            pull = PullTransport(store.mailbox, bot_id, [SECRET])
            seats[f"pull ({channel})"] = (
                HttpSeat(SeatInfo(0, bot_id, "pull"), pull),
                process.pid,
                web,
            )
        for bot_id, _ in pulled:
            _wait(lambda b=bot_id: b in store.mailbox.connected([b]), 20, "the pull bots")
        _wait(lambda: _answers(url), 20, "the push bot")
        sides = {name: Side(name) for name in seats}
        names = list(seats)
        n = 0
        for r in range(rounds):
            for name in names if r % 2 == 0 else reversed(names):
                seat, bot_pid, relays = seats[name]
                side = sides[name]
                cpu0, bot0, relay0 = time.process_time(), cpu_seconds(bot_pid), _cpu(relays)
                for i in range(per_round):
                    obs = obs_list[(n + i) % len(obs_list)]
                    request = DecisionRequest(obs, f"m-{r}", f"m-{r}:{name}:{i}", LIMIT_MS, BANK_MS)
                    t = time.perf_counter()
                    reply = seat.ask(request)
                    side.times.append(time.perf_counter() - t)
                    assert reply.status is Status.OK, reply.fault
                side.arena_cpu += time.process_time() - cpu0 + _cpu(relays) - relay0
                side.bot_cpu += cpu_seconds(bot_pid) - bot0
            n += per_round
        for seat, _, _ in seats.values():
            seat.close()
    return sides


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1)
    except urllib.error.HTTPError:
        return True  # a 405 to a GET: the server is up
    except OSError:
        return False
    return True


# -- the crowd --------------------------------------------------------------------------------


def _idle_streams(base: str, tokens: list[tuple[str, str]], ready: Any, stop: Any) -> None:
    """Hold one stream open per bot, reading whatever comes (keep-alives), until ``stop``."""
    parts = urlsplit(base)

    async def hold(bot_id: str, token: str, opened: list[int]) -> None:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        writer.write(
            f"GET /api/bots/{bot_id}/stream HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {token}\r\nAccept: application/x-ndjson\r\n\r\n".encode()
        )
        await writer.drain()
        status = await reader.readline()
        if b" 200 " in status:
            opened.append(1)
        while not stop.is_set():
            try:
                if not await asyncio.wait_for(reader.read(4096), timeout=1.0):
                    break
            except TimeoutError:
                continue
        writer.close()

    async def main() -> None:
        opened: list[int] = []
        tasks = []
        for bot_id, token in tokens:
            tasks.append(asyncio.create_task(hold(bot_id, token, opened)))
            await asyncio.sleep(0.002)  # a crowd arriving, not one burst
        while len(opened) < len(tokens) and not stop.is_set():
            await asyncio.sleep(0.1)
        ready.set()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


def _active_bots(base: str, tokens: list[tuple[str, str]], stop: Any) -> None:
    """The SDK's PullClient for each bot, in threads, until ``stop``."""
    from bot_sdk.connect import PullClient
    from bot_sdk.examples.lowest_card import LowestCard
    from bot_sdk.server import make_app

    clients = [
        PullClient(make_app(LowestCard, SECRET), arena=base, bot_id=bot_id, token=token)
        for bot_id, token in tokens
    ]
    threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    stop.wait()
    for client in clients:
        client.stop()


def _play(
    store: Any, seats_of: list[str], match_id: str, hands: int, push_url: str | None
) -> list[int]:
    """One match as a worker plays it, registered bots and house Easy bots: each registered
    bot's decision's latency (ms). The registered bots are the pull bots ``seats_of`` names,
    or, given ``push_url``, the push bot served there in each of their seats."""
    from arena.http_seat import Channel, HttpSeat
    from arena.match_loop import InProcessSeat, play_match
    from arena.pull_transport import PullTransport
    from arena.transport import BotTransport
    from bot_sdk.house import house_bot
    from bot_sdk.protocol import Status
    from referee import Game, Rules
    from replays.deals import DealSource
    from replays.log import SeatInfo, TimeControl

    players: list[Any] = []
    for seat, bot_id in enumerate(seats_of):
        info = SeatInfo(seat, bot_id, bot_id)
        if bot_id.startswith("house"):
            players.append(InProcessSeat(house_bot("easy", seed=f"{match_id}:{seat}"), info))
        else:
            channel: Channel = (
                PullTransport(store.mailbox, bot_id, [SECRET])
                if push_url is None
                else BotTransport(push_url, [SECRET], allow_private=True)
            )
            players.append(HttpSeat(info, channel))
    log = play_match(
        Game(Rules(fixed_hands=hands), seed=match_id),
        players,
        match_id=match_id,
        deals=DealSource.practice(match_id),
        time_control=TimeControl(LIMIT_MS, BANK_MS, 5),
    )
    pulled = [d for h in log.hands for d in h.decisions if not seats_of[d.seat].startswith("house")]
    assert all(d.status is Status.OK for d in pulled), [d.fault for d in pulled if d.fault]
    for player in players:
        if isinstance(player, HttpSeat):
            player.close()
    return [d.latency_ms or 0 for d in pulled]


def _tables_at_once(
    store: Any, tables: list[list[str]], hands: int, push_url: str | None
) -> tuple[list[int], float]:
    """Every table's match at once, a thread each: the decisions' latencies, the wall time."""
    results: list[list[int]] = [[] for _ in tables]
    kind = "push" if push_url else "pull"

    def play(i: int) -> None:
        results[i] = _play(store, tables[i], f"crowd-{kind}-{i}", hands, push_url)

    start = time.monotonic()
    threads = [threading.Thread(target=play, args=(i,)) for i in range(len(tables))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [ms for found in results for ms in found], time.monotonic() - start


def crowd(store: Any, base: str, idle: int, active: int, hands: int) -> dict[str, Any]:
    from arena.redis_server import free_port

    context = multiprocessing.get_context("spawn")
    idle_bots = _pull_bots(store, idle, "idle")
    active_bots = _pull_bots(store, active, "active")
    ready, stop = context.Event(), context.Event()
    holders = [
        context.Process(target=_idle_streams, args=(base, idle_bots, ready, stop)),
        context.Process(target=_active_bots, args=(base, active_bots, stop)),
    ]
    for process in holders:
        process.start()
    try:
        ready.wait(120)
        want = idle + active
        _wait(lambda: _ready(base)["pull_bots_connected"] == want, 60, f"{want} connected bots")
        web = _web_pids()
        ids = [bot_id for bot_id, _ in active_bots]
        tables = [ids[i : i + 4] for i in range(0, len(ids), 4)]
        tables = [t + ["house"] * (4 - len(t)) for t in tables]
        health: list[float] = []
        done = threading.Event()

        def read_health() -> None:
            while not done.is_set():
                t = time.perf_counter()
                urllib.request.urlopen(f"{base}/health", timeout=5).read()
                health.append(time.perf_counter() - t)
                time.sleep(0.05)

        reader = threading.Thread(target=read_health, daemon=True)
        reader.start()
        latencies, took = _tables_at_once(store, tables, hands, None)
        done.set()
        reader.join()
        # the same tables with the push bot in every registered seat, the crowd still connected
        port = free_port()
        serve = ["serve", BOT, "--port", str(port), "--threads", "16"]
        with bot_process(serve, {"GONGZHU_BOT_SECRET": SECRET}):
            url = f"http://127.0.0.1:{port}/bot"
            _wait(lambda: _answers(url), 20, "the push bot")
            pushed, push_took = _tables_at_once(store, tables, hands, url)
        return {
            "push_p50_ms": statistics.median(pushed),
            "push_p99_ms": sorted(pushed)[int(0.99 * (len(pushed) - 1))],
            "push_seconds": push_took,
            "connected": _ready(base)["pull_bots_connected"],
            "tables": len(tables),
            "decisions": len(latencies),
            "seconds": took,
            "p50_ms": statistics.median(latencies),
            "p99_ms": sorted(latencies)[int(0.99 * (len(latencies) - 1))],
            "health_p50_ms": 1000 * statistics.median(health),
            "health_max_ms": 1000 * max(health),
            "web_rss_mb": _rss_mb(web),
        }
    finally:
        stop.set()
        for process in holders:
            process.join(20)
            if process.is_alive():
                process.kill()


# -- the report -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds per side")
    parser.add_argument("--per-round", type=int, default=150, help="decisions per round")
    parser.add_argument("--idle", type=int, default=450, help="pull bots connected, idle")
    parser.add_argument("--active", type=int, default=50, help="pull bots playing")
    parser.add_argument("--hands", type=int, default=2, help="hands per crowd match")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir, ExitStack() as stack:
        server, store, keys = stack.enter_context(fresh_redis(Path(workdir), fsync="everysec"))
        base = stack.enter_context(web_service(server.url, keys))
        sides = overhead(store, base, args.rounds, args.per_round)
        print(f"## Decision round trip, push and pull, on loopback ({os.cpu_count()} cores)\n")
        print(
            "| transport | decisions | p50 ms | p90 ms | mean ms | p50 vs push | "
            "arena CPU ms/decision | vs push | bot CPU ms/decision |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for side in sides.values():
            print(side.row(sides["push"]))
        if args.idle + args.active:
            found = crowd(store, base, args.idle, args.active, args.hands)
            print(f"\n## {args.idle} idle pull bots and {args.active} playing\n")
            print(
                f"- connected (`/ready`): {found['connected']}; {found['tables']} matches of "
                f"{args.hands} hands at once, {found['decisions']:,} pull decisions in "
                f"{found['seconds']:.1f} s"
            )
            calm = 1000 * statistics.median(sides["pull (websocket)"].times)
            print(
                f"- pull decisions' round trip: p50 {found['p50_ms']:.0f} ms, p99 "
                f"{found['p99_ms']:.0f} ms (calm, one at a time: p50 {calm:.2f} ms)"
            )
            print(
                f"- the same matches with a push bot in those seats (the crowd still "
                f"connected): p50 {found['push_p50_ms']:.0f} ms, p99 {found['push_p99_ms']:.0f}"
                f" ms, in {found['push_seconds']:.1f} s; pull ÷ push p50: "
                f"{found['p50_ms'] / found['push_p50_ms']:.2f}×"
            )
            print(
                f"- `/health` during the matches: p50 {found['health_p50_ms']:.1f} ms, max "
                f"{found['health_max_ms']:.1f} ms"
            )
            print(
                f"- web processes' memory (RSS, master and workers): {found['web_rss_mb']:.0f} MB"
            )


if __name__ == "__main__":
    main()

"""One address flooding an expensive public read, and what another reader waits meanwhile.

    python -m benchmarks.flood                   # each route, 32 connections, 8 s, then limited
    python -m benchmarks.flood --seconds 2 --connections 4 --routes "replay JSON"

Setup as ``benchmarks.web`` does it (a fresh Redis, ``--bots`` bots, rated duplicate
tournaments really played and recorded until ``--matches`` are stored, the first to the rules'
end), and a human game started through the API. The web service runs as the Procfile's ``web``
line, twice in turn on the same data: without the limit on expensive reads
(``GONGZHU_READ_LIMIT`` empty), then with its default.

For each route (a replay's JSON and page, a divergence's JSON and page, head-to-head, a hint)
and each service, with no request counted by the limit yet (they are all one count): the
reader, a client of its own address (127.0.0.2), reads ``--reader-path``
(default: the ladder's JSON) one request at a time for ``--seconds`` alone, then as long again
while ``--connections`` keep-alive connections from 127.0.0.1 ask the route as fast as they are
answered. The report gives the route's own time (one request at a time: the service's first
request of it, and the median of 19 more), the reader's
p50 and p99 alone and during the flood and the flood's ratio of them, and what the flood got
(answers a second, and how many were ``429``), both services side by side. The load is made by
threads of this process (``http.client``), which share the machine's cores with the service.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.web import (
    UNLIMITED,
    Arena,
    fill,
    fresh_redis,
    in_threads,
    register_bots,
    web_command,
    web_service,
)

READER_ADDRESS = "127.0.0.2"
"""The other reader's address: loopback too, but not the flood's (the limits count per
address)."""
ROUTES = {
    "replay JSON": "/api/matches/{match}/replay",
    "replay page": "/matches/{match}",
    "divergence JSON": "/api/matches/{match}/divergence?bot={bot}",
    "divergence page": "/matches/{match}/divergence?bot={bot}",
    "head-to-head JSON": "/api/bots/{bot}/head-to-head",
    "hint JSON": "/api/play/{game}/hint",
}


@dataclass(frozen=True)
class Reading:
    """The reader's latencies (ms) over one window."""

    latencies: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies)

    @property
    def p99(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Flooded:
    """One route flooded on one service: the reader alone, the reader during the flood, and
    what the flood got."""

    alone: Reading
    during: Reading
    statuses: Counter[int]
    seconds: float

    @property
    def ratio(self) -> float:
        return self.during.p50 / self.alone.p50


def get(conn: http.client.HTTPConnection, path: str) -> int:
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    return response.status


def read_for(base: str, path: str, seconds: float, source: str) -> Reading:
    """``path`` one request at a time from ``source`` for ``seconds``: each one's latency."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60, source_address=(source, 0))
    latencies = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        began = time.perf_counter()
        status = get(conn, path)
        latencies.append((time.perf_counter() - began) * 1000)
        assert status == 200, (path, status)
    conn.close()
    return Reading(latencies)


def flood(base: str, path: str, seconds: float, connections: int) -> tuple[Counter[int], float]:
    """``connections`` keep-alive connections from 127.0.0.1 asking ``path`` for ``seconds``:
    the statuses answered, and the time it took until the last one was answered."""
    host, port = base.removeprefix("http://").split(":")
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        mine: Counter[int] = Counter()
        while time.monotonic() < deadline:
            try:
                mine[get(conn, path)] += 1
            except (OSError, http.client.HTTPException):
                conn.close()
                mine[0] += 1
        conn.close()
        with lock:
            statuses.update(mine)

    return statuses, in_threads(client, connections)


def flooded(base: str, route: str, args: argparse.Namespace) -> Flooded:
    """The reader alone, then the reader while ``route`` is flooded."""
    alone = read_for(base, args.reader_path, args.seconds, READER_ADDRESS)
    result: dict[str, Any] = {}

    def flooding() -> None:
        result["statuses"], result["seconds"] = flood(base, route, args.seconds, args.connections)

    thread = threading.Thread(target=flooding)
    thread.start()
    during = read_for(base, args.reader_path, args.seconds, READER_ADDRESS)
    thread.join()
    return Flooded(alone, during, result["statuses"], result["seconds"])


def one_at_a_time(base: str, path: str, count: int = 20) -> tuple[float, float]:
    """``path`` asked ``count`` times, alone, from an address of its own (the others' limits
    untouched): the first request's time (the service's first sight of it) and the median of
    the others."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60, source_address=("127.0.0.3", 0))
    times = []
    for _ in range(count):
        began = time.perf_counter()
        status = get(conn, path)
        times.append((time.perf_counter() - began) * 1000)
        assert status == 200, (path, status)
    conn.close()
    return times[0], statistics.median(times[1:])


def start_game(base: str) -> str:
    """A human game against three house bots, waiting for the person's move (for hints)."""
    import json

    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    body = json.dumps({"opponents": ["house:normal"] * 3})
    conn.request("POST", "/api/play", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    made = json.loads(response.read())
    assert response.status == 201, made
    return str(made["id"])


def report(
    rows: dict[str, dict[str, Flooded]],
    single: dict[str, tuple[float, float]],
    services: list[str],
) -> None:
    head = "| route | one request ms: first, then |"
    line = "|---|---:|"
    for name in services:
        head += (
            f" reader p50 ms alone → flooded ({name}) | reader p99 ms flooded ({name}) | "
            f"p50 ratio ({name}) | flood answers/s, 429 ({name}) |"
        )
        line += "---:|---:|---:|---:|"
    print(f"\n{head}\n{line}")
    for route, by_service in rows.items():
        first, then = single[route]
        cells = [f"{first:.1f}, {then:.1f}"]
        for name in services:
            f = by_service[name]
            answered = sum(n for status, n in f.statuses.items() if status)
            cells += [
                f"{f.alone.p50:.1f} → {f.during.p50:.1f}",
                f"{f.during.p99:.1f}",
                f"**{f.ratio:.1f}×**",
                f"{answered / f.seconds:,.0f}, {f.statuses[429]:,}",
            ]
        print(f"| {route} | {' | '.join(cells)} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--bots", type=int, default=8, help="registered bots")
    parser.add_argument("--matches", type=int, default=16, help="stored matches")
    parser.add_argument("--group", type=int, default=8, help="bots per tournament")
    parser.add_argument("--seconds", type=float, default=8, help="the reader alone, then flooded")
    parser.add_argument("--connections", type=int, default=32, help="the flood's connections")
    parser.add_argument("--reader-path", default="/api/ladder?per_page=100")
    parser.add_argument("--routes", nargs="*", default=list(ROUTES), choices=list(ROUTES))
    args = parser.parse_args(argv)
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; {args.connections} flooding connections from 127.0.0.1, "
        f"the reader at {READER_ADDRESS} reading {args.reader_path}, {args.seconds:g} s alone "
        f"and {args.seconds:g} s flooded; web: {web_command()}",
        flush=True,
    )
    services = {"no limit": UNLIMITED, "limited": {}}
    with (
        tempfile.TemporaryDirectory(prefix="gz-flood-bench-") as tmp,
        fresh_redis(Path(tmp), fsync="no") as (redis_server, store, keys),
    ):
        arena = Arena(store, keys.key, register_bots(store, args.bots), random.Random(1), 1)
        fill(arena, args.matches, args.group, [])
        match = store.get_match(arena.featured["match"])
        assert match is not None
        names = {"match": match.id, "bot": match.seats[0]}
        rows: dict[str, dict[str, Flooded]] = {route: {} for route in args.routes}
        single: dict[str, tuple[float, float]] = {}
        for name, env in services.items():
            with web_service(redis_server.url, keys, env=env) as base:
                names["game"] = start_game(base)
                for route in args.routes:
                    path = ROUTES[route].format(**names)
                    if name == "no limit":
                        single[route] = one_at_a_time(base, path)
                    for counted in store.redis.scan_iter("LIMITS:*"):
                        store.redis.delete(counted)  # each route's flood starts with none
                    rows[route][name] = flooded(base, path, args)
    report(rows, single, list(services))


if __name__ == "__main__":
    main()

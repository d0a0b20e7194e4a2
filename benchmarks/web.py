"""The web service under load: standings, pages and replays with many bots and matches.

    python -m benchmarks.web                     # 200 bots, 1,000 and 10,000 stored matches
    python -m benchmarks.web --bots 20 --small 100 --matches 400 --rounds 1 --seconds 1

Setup, all through the arena's own code paths: a fresh Redis (``arena.redis_server``, in a
temporary directory, ``appendfsync no`` to fill it quickly: the load is read-only), ``--bots``
bots stored with ``Store.create_bot``, then round-robin tournaments of ``--group`` of them
(``arena.pairing.plan``, duplicate format, rated), expanded as ``workers.jobs.run_tournament``
does (``create_match``, the total, ``running``). Every match is really played by
``arena.match_loop.play_match``: each seat a random legal player logged as a bot over HTTP (its
request's SHA-256, an answer, a latency: ``benchmarks.replays.ArenaSeat``), then sealed with
Ed25519 and recorded with ``Store.record_result``, which keeps the standings and the ladder up
to date incrementally. The first tournament (the one whose pages are loaded, and whose longest
match is the replay loaded) plays matches to the rules' end; the others one hand per match
(``--hands``), to keep the setup within minutes.
Tournaments are played until ``--small`` matches are stored (the last one may be left part
played, as a tournament in progress is); a second Redis is started on a copy of that data and
filled up to ``--matches``. Both sizes are then served side by side.

The web service runs as the Procfile's ``web`` line (gunicorn, 2 workers of 4 threads), one
per size, without the limit on expensive reads (the load comes from one address). Each
endpoint is loaded alone for ``--seconds`` by ``--connections`` keep-alive clients, on one
size then the other, ``--rounds`` times (the order alternating): wrk
(``apt-get install wrk``) when it is installed, else a small built-in Python load generator
(threads, ``http.client``), which is itself slower and competes for the same cores. The report
gives requests per second, p50 and p99 latency per endpoint for both sizes (medians of the
rounds), the ratio of the p50s (median of the rounds' ratios), and the
Redis commands one request of each endpoint issues (counted with ``INFO commandstats``): a
count that does not grow with the stored matches shows nothing is recomputed from them.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d\\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout + e.status,
    latency:percentile(50), latency:percentile(99)))
end
"""
ENDPOINTS = {
    "ladder JSON": "/api/ladder?per_page=100",
    "tournament standings JSON": "/api/tournaments/{tournament}/standings",
    "ladder page": "/",
    "tournament page": "/tournaments/{tournament}",
    "replay JSON": "/api/matches/{match}/replay",
    "replay viewer page": "/matches/{match}",
}


UNLIMITED = {"GONGZHU_READ_LIMIT": ""}
"""The load comes from one address: the limit on expensive reads would answer it ``429``
(what the limit does under a flood: ``benchmarks.flood``)."""


@dataclass
class Arena:
    """The store being filled, the sealing key, the bots and what the load asks for."""

    store: Any
    key: Any
    bots: list[Any]
    rng: random.Random
    hands: int | None
    tournaments: int = 0
    recorded: list[str] = field(default_factory=list)
    featured: dict[str, str] = field(default_factory=dict)
    """The tournament whose pages are loaded, and its longest match (the replay loaded)."""
    featured_hands: int = 0
    featuring: bool = True
    """Whether a longer match may still become the featured one: only while the small size is
    filled, since the featured match must be in both sizes' stores."""
    hands_played: int = 0


@dataclass(frozen=True)
class Load:
    """What one endpoint's load run measured."""

    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p99_ms: float

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


# -- filling the store ------------------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    """A fresh arena's Fernet key and replay-sealing key (and the PEM file holding it)."""

    secret_key: bytes
    key: Any
    key_path: Path

    @property
    def archive(self) -> Path:
        """The archive of sealed logs, beside the key."""
        return self.key_path.parent / "archive"

    def environment(self, redis_url: str) -> dict[str, str]:
        """The variables the arena's processes read (docs/OPERATIONS.md)."""
        return {
            "REDIS_URL": redis_url,
            "GONGZHU_SECRET_KEY": self.secret_key.decode(),
            "GONGZHU_REPLAY_KEY": str(self.key_path),
            "GONGZHU_ARCHIVE": str(self.archive),
        }


@contextmanager
def fresh_redis(workdir: Path, *, fsync: str) -> Iterator[tuple[Any, Any, Keys]]:
    """A new Redis in ``workdir`` (``arena.redis_server``), a ``Store`` on it and new keys."""
    from cryptography.fernet import Fernet

    from arena.archive import DirectoryArchive
    from arena.redis_server import start_redis
    from arena.store import Store
    from replays.integrity import generate_key, private_key_pem

    server = start_redis(workdir / "redis", fsync=fsync)
    try:
        key = generate_key()
        keys = Keys(Fernet.generate_key(), key, workdir / "replay-key.pem")
        keys.key_path.write_bytes(private_key_pem(key))
        archive = DirectoryArchive(keys.archive)
        yield server, Store.from_url(server.url, keys.secret_key, archive=archive), keys
    finally:
        server.stop()


def register_bots(store: Any, count: int) -> list[Any]:
    return [
        store.create_bot(
            name=f"bench-bot-{i:03d}",
            endpoint=f"https://bot{i}.example.org/gongzhu",
            description="a benchmark bot",
            contact="bench@example.org",
            version="1.0",
            secret=f"secret-{i}",
        )[0]
        for i in range(count)
    ]


def new_tournament(arena: Arena, group: int, hands: int | None) -> tuple[str, Any, list[Any]]:
    """A rated round-robin of ``group`` random bots, expanded as ``run_tournament`` does."""
    from arena.pairing import plan
    from arena.records import Format, TournamentSpec, TournamentStatus
    from arena.tournaments import store_planned
    from referee import Rules
    from replays.log import TimeControl

    participants = tuple(b.id for b in arena.rng.sample(arena.bots, min(group, len(arena.bots))))
    spec = TournamentSpec(
        name=f"bench {arena.tournaments + 1}",
        participants=participants,
        format=Format(duplicate=True, matches_per_table=1, hands=hands),
        rules=Rules(),
        time_control=TimeControl(1000, 30_000, 5),
    )
    store = arena.store
    tid = store.create_tournament(spec)
    planned = plan(participants, seed=tid, duplicate=True, matches_per_table=1)
    store_planned(store, tid, planned)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    arena.tournaments += 1
    return tid, spec, planned


def play_and_record(arena: Arena, tid: str, spec: Any, planned: Any) -> str:
    """Play one planned match (random players logged as HTTP bots), seal it, record it."""
    match_id, sealed, hands = play_sealed(arena, tid, spec, planned)
    assert arena.store.record_result(match_id, sealed)
    arena.recorded.append(match_id)
    arena.hands_played += hands
    return match_id


def play_sealed(arena: Arena, tid: str, spec: Any, planned: Any) -> tuple[str, Any, int]:
    """Play one planned match (random players logged as HTTP bots) and seal it: its id, the
    sealed log and the hands played."""
    from arena.match_loop import play_match
    from arena.store import timestamp
    from benchmarks.replays import ArenaSeat
    from referee import Game
    from replays.deals import DealSource, deal_seed
    from replays.integrity import key_id_of, seal
    from replays.log import SeatInfo

    match_id = planned.match_id(tid)
    rules = spec.rules
    if spec.format.hands is not None:
        rules = replace(rules, fixed_hands=spec.format.hands)
    by_id = {b.id: b for b in arena.bots}
    seats, elapsed = [], [0]
    for s, participant in enumerate(planned.seats):
        seat = ArenaSeat(s, f"{match_id}:{s}", elapsed)
        bot = by_id[participant]
        seat.info = SeatInfo(s, bot.id, bot.name, bot.version, kind="http")
        seats.append(seat)
    secret = arena.store.deal_secret(tid)
    log = play_match(
        Game(rules, seed=deal_seed(secret, planned.deal_label)),
        seats,
        match_id=match_id,
        deals=DealSource.committed(secret, planned.deal_label),
        time_control=spec.time_control,
        tournament_id=tid,
        table_id=planned.table_id,
        rated=spec.rated,
        started_at=timestamp(time.time()),
        finished_at=lambda: timestamp(time.time()),
        origin_ns=0,  # the seats' clock
    )
    sealed = seal(log.to_json(), arena.key, key_id=key_id_of(arena.key.public_key()))
    return match_id, sealed, log.outcome.hands_played


LAST_ROTATION = 3
"""The duplicate format's fourth seat rotation: when it is recorded, its deal is public."""


def fill(arena: Arena, target: int, group: int, pending: list[Any]) -> list[Any]:
    """Play tournaments until ``target`` matches are recorded; returns the unplayed rest of the
    last tournament (played first by the next call)."""
    while len(arena.recorded) < target or "match" not in arena.featured:
        if not pending:
            first = not arena.featured
            tid, spec, planned = new_tournament(arena, group, None if first else arena.hands)
            pending = [(tid, spec, p) for p in planned]
            if first:
                arena.featured["tournament"] = tid
        tid, spec, planned = pending.pop(0)
        before = arena.hands_played
        match_id = play_and_record(arena, tid, spec, planned)
        hands = arena.hands_played - before
        # a deal's replays open once its last rotation is recorded (the embargo): feature one
        featured = arena.featuring and tid == arena.featured["tournament"]
        if featured and planned.rotation == LAST_ROTATION and hands > arena.featured_hands:
            arena.featured["match"], arena.featured_hands = match_id, hands
    return pending


def verify_sample(arena: Arena, count: int) -> int:
    """Check the seal and re-run the referee (requests included) over ``count`` stored logs
    picked at random, and the loaded one; returns how many were checked."""
    from replays.integrity import check, key_id_of, unpack
    from replays.upgrade import read_log
    from replays.verify import verify

    public = arena.key.public_key()
    ids = arena.rng.sample(arena.recorded, min(count, len(arena.recorded)))
    ids = [arena.featured["match"], *ids]
    for match_id in ids:
        sealed = unpack(arena.store.replay_blob(match_id) or b"")
        check(sealed, {key_id_of(public): public})
        report = verify(read_log(sealed))
        assert report.ok, (match_id, report.discrepancy)
    return len(ids)


# -- the web service --------------------------------------------------------------------------


def web_command() -> str:
    """The Procfile's ``web`` line."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.split(":", 1)[1].strip()
    raise RuntimeError("the Procfile has no web line")


@contextmanager
def web_service(
    redis_url: str,
    keys: Keys,
    *,
    command: str | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Gunicorn as the Procfile runs it (or as ``command`` does), on a free loopback port, with
    ``env`` added to its environment; yields its base URL."""
    from arena.redis_server import free_port

    with web_process(redis_url, keys, free_port(), command=command, env=env) as (_, base):
        yield base


@contextmanager
def web_process(
    redis_url: str,
    keys: Keys,
    port: int,
    *,
    command: str | None = None,
    env: dict[str, str] | None = None,
    ready: bool = True,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Gunicorn as the Procfile runs it (or as ``command`` does) on ``port``, with ``env`` added
    to its environment, once it answers ``/health`` (at once with ``ready`` False): its master
    process and base URL. Its output is
    appended to ``gunicorn-PORT.log`` beside the keys; stopped with SIGTERM at the end if still
    running."""
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **keys.environment(redis_url),
        "GONGZHU_BIND": f"127.0.0.1:{port}",
        **(env or {}),
    }
    log = (keys.key_path.parent / f"gunicorn-{port}.log").open("a")
    process = subprocess.Popen(
        ["sh", "-c", f"exec {command or web_command()}"],
        cwd=ROOT,
        env=environment,
        stdout=log,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        if ready:
            _wait_for(f"{base}/health", process)
        yield process, base
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(60)  # gunicorn's graceful timeout is 30 s
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def _wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the web service did not answer {url} within 30 s")


# -- load -------------------------------------------------------------------------------------


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200, (url, response.status)
        return bytes(response.read())


def redis_calls(client: Any) -> int:
    """Commands Redis has run so far (INFO commandstats), not counting INFO itself."""
    stats = client.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k != "cmdstat_info")


def commands_per_request(client: Any, url: str) -> int:
    """The Redis commands one request issues (the least of 3, in case anything else ran)."""
    counts = []
    for _ in range(3):
        before = redis_calls(client)
        get(url)
        counts.append(redis_calls(client) - before)
    return min(counts)


def load_wrk(url: str, seconds: float, connections: int, script: Path) -> Load:
    out = subprocess.run(
        [
            "wrk",
            "-t2",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "30s",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"RESULT (\d+) (\d+) (\d+) (\d+) (\d+)", out)
    if not found:
        raise RuntimeError(f"wrk printed no result:\n{out}")
    requests, micros, errors, p50, p99 = map(int, found.groups())
    return Load(requests, micros / 1e6, errors, p50 / 1000, p99 / 1000)


def load_python(url: str, seconds: float, connections: int) -> Load:
    """The fallback: ``connections`` threads, each a keep-alive ``http.client`` connection."""
    parsed = urllib.request.urlparse(url)
    path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        mine: list[float] = []
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                conn.close()
                ok = False
            mine.append(time.perf_counter() - start)
            if not ok:
                with lock:
                    errors[0] += 1
        conn.close()
        with lock:
            latencies.extend(mine)

    wall = in_threads(client, connections)
    ordered = sorted(latencies)

    def pct(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000

    return Load(len(ordered), wall, errors[0], pct(0.5), pct(0.99))


def in_threads(work: Callable[[], None], count: int) -> float:
    """``work`` run in ``count`` threads at once: the seconds until the last one ended."""
    began = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


def load_tool(choice: str) -> str:
    """wrk if asked for or installed, else the built-in Python load generator (said so)."""
    if choice == "wrk" and not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: `apt-get install wrk`, or use --tool python")
    if choice != "auto":
        return choice
    if shutil.which("wrk"):
        return "wrk"
    print(
        "wrk is not installed (apt-get install wrk): using the built-in Python load generator, "
        "which is slower than the service and shares its cores; figures are lower bounds",
        flush=True,
    )
    return "python"


@dataclass
class Size:
    """One stored size: its Redis, the web service on it, and what was measured."""

    matches: int
    redis: Any
    base: str = ""
    commands: dict[str, int] = field(default_factory=dict)
    single: dict[str, list[float]] = field(default_factory=dict)
    loads: dict[str, list[Load]] = field(default_factory=dict)


def clone_redis(server: Any, directory: Path) -> Any:
    """A second Redis started on a copy of ``server``'s data (compacted first)."""
    from arena.redis_server import start_redis

    client = server_client(server)
    client.bgrewriteaof()
    while True:
        persistence = client.info("persistence")
        if not (persistence["aof_rewrite_in_progress"] or persistence["aof_rewrite_scheduled"]):
            break
        time.sleep(0.05)
    shutil.copytree(server.directory, directory, ignore=shutil.ignore_patterns("redis.log"))
    copy = start_redis(directory, fsync="no")
    assert server_client(copy).dbsize() == client.dbsize()
    return copy


def server_client(server: Any) -> Any:
    import redis

    return redis.Redis.from_url(server.url)


def quiesce(size: Size) -> None:
    """Wait for the requests a load left queued in the service to finish (its Redis goes
    quiet), so they do not slow the next run down."""
    client = server_client(size.redis)
    deadline = time.monotonic() + 30
    last = redis_calls(client)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = redis_calls(client)
        if now == last:
            return
        last = now


def load(url: str, args: argparse.Namespace, tool: str, script: Path) -> Load:
    if tool == "wrk":
        return load_wrk(url, args.seconds, args.connections, script)
    return load_python(url, args.seconds, args.connections)


def one_at_a_time(sizes: list[Size], name: str, path: str, count: int) -> None:
    """``count`` requests to each size, one client, one request at a time, alternating."""
    for i in range(count):
        for size in sizes[:: 1 if i % 2 == 0 else -1]:
            began = time.perf_counter()
            get(size.base + path)
            size.single.setdefault(name, []).append(time.perf_counter() - began)


def measure(sizes: list[Size], arena: Arena, args: argparse.Namespace, tool: str) -> None:
    """Redis commands per request on each size (counted before any load: a load leaves requests
    queued behind it), then for each endpoint: requests one at a time to both sizes in turn,
    then the load on each size in turn, ``--rounds`` times, the order of the sizes
    alternating."""
    script = Path(tempfile.mkdtemp(prefix="gz-wrk-")) / "report.lua"
    script.write_text(WRK_SCRIPT)
    paths = {name: template.format(**arena.featured) for name, template in ENDPOINTS.items()}
    for size in sizes:
        client = server_client(size.redis)
        size.commands = {n: commands_per_request(client, size.base + p) for n, p in paths.items()}
    for name, path in paths.items():
        one_at_a_time(sizes, name, path, 4)  # warm-up
        for size in sizes:
            size.single[name] = []
        one_at_a_time(sizes, name, path, args.single)
        for r in range(args.rounds):
            for size in sizes[:: 1 if r % 2 == 0 else -1]:
                size.loads.setdefault(name, []).append(load(size.base + path, args, tool, script))
                quiesce(size)
    shutil.rmtree(script.parent)


# -- report -----------------------------------------------------------------------------------


def report(small: Size, large: Size) -> None:
    print(
        f"| endpoint | req/s @{small.matches:,} | p50 ms | p99 ms | req/s @{large.matches:,} | "
        "p50 ms | p99 ms | p50 ratio (median of rounds) | per round | Redis cmds/request | "
        "errors |\n|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"
    )
    single: list[str] = []
    for name in ENDPOINTS:
        a, b = small.loads[name], large.loads[name]
        ratios = [y.p50_ms / x.p50_ms for x, y in zip(a, b, strict=True)]
        cells = []
        for loads in (a, b):
            cells += [
                f"{statistics.median(x.rate for x in loads):,.0f}",
                f"{statistics.median(x.p50_ms for x in loads):.1f}",
                f"{statistics.median(x.p99_ms for x in loads):.1f}",
            ]
        print(
            f"| {name} | {' | '.join(cells)} | **{statistics.median(ratios):.2f}×** | "
            f"{', '.join(f'{x:.2f}' for x in ratios)} | "
            f"{small.commands[name]} → {large.commands[name]} | "
            f"{sum(x.errors for x in a + b)} |"
        )
        x, y = (statistics.median(size.single[name]) * 1000 for size in (small, large))
        single.append(f"| {name} | {x:.1f} | {y:.1f} | **{y / x:.2f}×** |")
    print(
        f"\nOne client, one request at a time, the sizes alternating "
        f"({len(small.single[name])} requests each):\n"
        f"| endpoint | median ms @{small.matches:,} | median ms @{large.matches:,} | ratio |\n"
        "|---|---:|---:|---:|"
    )
    print("\n".join(single))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--bots", type=int, default=200, help="registered bots")
    parser.add_argument("--matches", type=int, default=10_000, help="stored matches, large size")
    parser.add_argument("--small", type=int, default=1_000, help="stored matches, small size")
    parser.add_argument("--group", type=int, default=20, help="bots per tournament")
    parser.add_argument("--hands", type=int, default=1, help="hands per match (not the first)")
    parser.add_argument("--seconds", type=float, default=3, help="each load run")
    parser.add_argument("--rounds", type=int, default=3, help="load runs per endpoint and size")
    parser.add_argument("--single", type=int, default=20, help="one-at-a-time requests")
    parser.add_argument("--connections", type=int, default=32, help="concurrent clients")
    parser.add_argument("--verify", type=int, default=20, help="stored logs to re-check")
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    args = parser.parse_args(argv)

    from arena.store import Store

    tool = load_tool(args.tool)
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}; load tool: {tool}, {args.connections} "
        f"connections, {args.rounds} x {args.seconds:g} s per endpoint and size; web: "
        f"{web_command()}",
        flush=True,
    )
    with (
        tempfile.TemporaryDirectory(prefix="gz-web-bench-") as tmp,
        fresh_redis(Path(tmp), fsync="no") as (redis_server, store, keys),
    ):
        arena = Arena(
            store, keys.key, register_bots(store, args.bots), random.Random(1), args.hands
        )
        small, pending = Size(args.small, redis_server), []
        pending = fill_and_tell(arena, args, small.matches, pending)
        large = Size(args.matches, clone_redis(redis_server, Path(tmp) / "redis-large"))
        try:
            arena.store = Store(
                server_client(large.redis), keys.secret_key, archive=arena.store.archive
            )
            arena.featuring = False
            fill_and_tell(arena, args, large.matches, pending)
            with (
                web_service(small.redis.url, keys, env=UNLIMITED) as small.base,
                web_service(large.redis.url, keys, env=UNLIMITED) as large.base,
            ):
                measure([small, large], arena, args, tool)
            describe(arena, args)
            report(small, large)
            checked = verify_sample(arena, args.verify)
        finally:
            large.redis.stop()
    ratios = [
        statistics.median(large.single[n]) / statistics.median(small.single[n]) for n in ENDPOINTS
    ]
    print(
        f"Latency at {args.matches:,} ÷ at {args.small:,} matches, one request at a time: "
        f"{min(ratios):.2f}× to {max(ratios):.2f}× over the endpoints"
    )
    print(
        f"{checked} stored logs (the loaded one and others picked at random) checked: seal and "
        "referee replay, request hashes included"
    )


def fill_and_tell(
    arena: Arena, args: argparse.Namespace, target: int, pending: list[Any]
) -> list[Any]:
    began = time.perf_counter()
    pending = fill(arena, target, args.group, pending)
    print(
        f"stored {len(arena.recorded):,} matches ({arena.hands_played:,} hands, "
        f"{arena.tournaments} tournaments, {len(pending)} matches of the last one unplayed) in "
        f"{time.perf_counter() - began:.0f} s; Redis uses "
        f"{arena.store.redis.info('memory')['used_memory'] / 2**20:.0f} MiB",
        flush=True,
    )
    return pending


def describe(arena: Arena, args: argparse.Namespace) -> None:
    store, featured = arena.store, arena.featured
    match = store.get_match(featured["match"])
    tournament = store.get_tournament(featured["tournament"])
    print(
        f"\nWeb load: {args.bots} bots; the tournament loaded has "
        f"{len(tournament.spec.participants)} entrants and {tournament.total} matches; the "
        f"replay loaded has {match.result.hands} hands "
        f"({len(store.replay_blob(featured['match']) or b''):,} bytes packed)"
    )


if __name__ == "__main__":
    main()

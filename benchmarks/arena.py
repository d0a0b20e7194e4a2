"""Arena speed: the cost of a bot decision over HTTP, and match throughput per worker.

Every part measures its contestants side by side in one run (these machines are shared and
noisy) and prints a table with the ratios.

    python -m benchmarks.arena                          # both parts, default sizes
    python -m benchmarks.arena --rounds 5 --matches 400

1. **Decision overhead.** A bot from the SDK (``bot_sdk.server.make_app`` around
   ``LowestCard``, signatures verified, waitress with 4 threads) is served on loopback in its
   own subprocess. Real observations come from referee games (house Easy bots choosing). The
   contestants, interleaved call by call (alternating which goes first):

   - ``arena``: ``arena.http_seat.HttpSeat.ask(request)``: the decision request built from
     the observation, canonical JSON, SHA-256, HMAC signing, the watchdog and total deadline,
     the body read in chunks, the answer parsed and checked against the observation.
   - ``raw``: a plain keep-alive ``requests.Session().post`` of the *same* signed body (built
     and signed before the clock starts, so the bot server does exactly the same work) and
     ``response.json()``.

   Each decision gets a fresh ``decision_id`` so the server's answer cache never helps.

2. **Match throughput.** ``arena.match_loop.play_match`` with four ``InProcessSeat`` house Easy
   bots, one hand per match, standard rules: the same total number of matches in 1 process,
   then split over 2 processes started together (each waits for a "go" after its imports).
   The referee's share: every applied move is recorded, then the same matches are replayed
   through the referee alone (``Game``, ``game.pending``, ``game.observation`` of the seat to
   move, ``game.push``), timed in the same process.

   With HTTP bots: the same, with four ``arena.http_seat.HttpSeat`` seats per match (made
   for the match, greeted with ``hello`` and closed after it, as a match job does) asking the
   SDK's LowestCard bot served by waitress on loopback: one bot server per match process, so
   the 2-process run has two. The bot servers run on the same cores as the matches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if Path(sys.path[0]).resolve() == ROOT / "benchmarks":  # run as a script: benchmarks/replays.py
    sys.path[0] = str(ROOT)  # would shadow the ``replays`` package
SECRET = "benchmark-secret"
BANK_MS = 30_000


# -- subprocess entry points ------------------------------------------------------------------


def start_bot_server() -> tuple[subprocess.Popen[str], str]:
    """A bot server subprocess (:func:`_serve_bot`) and its decision URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.arena", "--serve-bot"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, f"http://127.0.0.1:{int(server.stdout.readline())}/bot"


def stop_server(server: subprocess.Popen[str]) -> None:
    server.terminate()
    server.wait(10)


def _serve_bot() -> None:
    """Serve the LowestCard example bot on a free loopback port; print the port; run."""
    from bot_sdk.examples.lowest_card import LowestCard
    from bot_sdk.server import create_server, make_app

    server = create_server(make_app(LowestCard, SECRET), host="127.0.0.1", port=0, threads=4)
    print(server.effective_port, flush=True)
    server.run()


def _house_seats(seed: int) -> list[Any]:
    from arena.match_loop import InProcessSeat
    from bot_sdk.house import house_bot
    from replays.log import SeatInfo

    return [
        InProcessSeat(
            house_bot("easy", seed=f"{seed}:{s}"),
            SeatInfo(s, "house-easy", "house-easy", "1", kind="house"),
        )
        for s in range(4)
    ]


class _Recording:
    """Wraps a seat and remembers the moves it answered, in the referee's order."""

    def __init__(self, seat: Any, moves: list[Any]) -> None:
        self.seat, self.info, self.moves = seat, seat.info, moves

    def ask(self, request: Any) -> Any:
        reply = self.seat.ask(request)
        self.moves.append(reply.move)
        return reply

    def hand_end(self, *args: Any, **kwargs: Any) -> None:
        self.seat.hand_end(*args, **kwargs)

    def match_end(self, *args: Any, **kwargs: Any) -> None:
        self.seat.match_end(*args, **kwargs)

    def close(self) -> None:
        if hasattr(self.seat, "close"):
            self.seat.close()


def _http_seats(url: str, match_id: str, rules: Any, tc: Any) -> list[Any]:
    """Four ``HttpSeat`` seats asking the bot at ``url``, greeted as a match job greets them."""
    from arena.http_seat import HttpSeat
    from arena.transport import BotTransport
    from replays.log import SeatInfo

    seats = [
        HttpSeat(
            SeatInfo(s, f"bot-{s}", "lowest-card"),
            BotTransport(url, [SECRET], allow_private=True),
        )
        for s in range(4)
    ]
    for seat in seats:
        seat.hello(
            match_id=match_id,
            rules=rules,
            time_limit_ms=tc.decision_ms,
            time_bank_ms=tc.bank_ms,
            timeout_s=5,
        )
    return seats


SPIN = 100_000
"""Iterations of the pure-Python calibration loop per match of work (a few ms, like a match)."""


def _spin_worker(count: int) -> None:
    """The calibration contestant: a pure-Python loop with no I/O and no shared state, so its
    2-process speed-up is the most the machine offers at that moment."""
    print("ready", flush=True)
    sys.stdin.readline()
    began_wall, began = time.time(), time.perf_counter()
    x = 0
    for i in range(count * SPIN):
        x += i
    seconds = time.perf_counter() - began
    print(json.dumps({"start": began_wall, "end": time.time(), "seconds": seconds}), flush=True)


def _matches_worker(start: int, count: int, replay: bool, url: str | None = None) -> None:
    """Play matches ``start`` .. ``start + count - 1`` after a "go" on stdin; print timings.
    House Easy bots in-process, or (``url``) ``HttpSeat`` seats asking the bot served there."""
    import gc

    from arena.match_loop import play_match
    from referee import Game, Rules
    from replays.deals import DealSource
    from replays.log import TimeControl

    rules = Rules(fixed_hands=1, max_hands=1)
    tc = TimeControl(1000, 5000, 5)
    records: list[list[Any]] = [[] for _ in range(count)]
    house = [] if url else [_house_seats(start + i) for i in range(count)]

    def seats_for(i: int, match_id: str) -> list[Any]:
        four = _http_seats(url, match_id, rules, tc) if url else house[i]
        return [_Recording(s, records[i]) for s in four]

    warm = [
        _Recording(s, [])
        for s in (_http_seats(url, "w", rules, tc) if url else _house_seats(10**6))
    ]
    play_match(
        Game(rules, seed="w"),
        warm,
        match_id="warm",
        deals=DealSource.practice("w"),
        time_control=tc,
    )
    for seat in warm:
        seat.close()
    gc.collect()
    print("ready", flush=True)
    sys.stdin.readline()
    began_wall, began, cpu = time.time(), time.perf_counter(), time.process_time()
    faults = 0
    for i in range(count):
        match_id = f"m{start + i}"
        seats = seats_for(i, match_id)
        log = play_match(
            Game(rules, seed=start + i),
            seats,
            match_id=match_id,
            deals=DealSource.practice(str(start + i)),
            time_control=tc,
        )
        for seat in seats:
            seat.close()
        faults += sum(1 for h in log.hands for d in h.decisions if d.status.is_fault)
    played = time.perf_counter() - began
    result: dict[str, Any] = {
        "start": began_wall,
        "end": time.time(),
        "seconds": played,
        "cpu_seconds": time.process_time() - cpu,
        "faults": faults,
    }
    if replay:
        began = time.perf_counter()
        for i in range(count):
            game = Game(rules, seed=start + i)
            moves = iter(records[i])
            while not game.is_over():
                for decision in game.pending:
                    game.observation(decision.seat)
                    game.push(next(moves))
        result["referee_seconds"] = time.perf_counter() - began
    print(json.dumps(result), flush=True)


# -- part 1: decision overhead ----------------------------------------------------------------


def observations(games: int) -> list[Any]:
    """Every decision's observation of ``games`` one-hand games of house Easy bots."""
    from bot_sdk.house import house_bot
    from referee import Game, Rules

    out = []
    for g in range(games):
        game = Game(Rules(fixed_hands=1, max_hands=1), seed=g)
        bots = [house_bot("easy", seed=f"{g}:{s}") for s in range(4)]
        while not game.is_over():
            for decision in game.pending:
                obs = game.observation(decision.seat)
                out.append(obs)
                game.push(bots[decision.seat].decide(obs))
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ask_arena(seat: Any, obs: Any, match_id: str, decision_id: str, limit: int) -> float:
    from bot_sdk.protocol import DecisionRequest, Status

    t = time.perf_counter()
    reply = seat.ask(DecisionRequest(obs, match_id, decision_id, limit, BANK_MS))
    t = time.perf_counter() - t
    assert reply.status is Status.OK, reply.fault
    return t


def _post_raw(session: Any, url: str, body: bytes, headers: dict[str, str]) -> float:
    t = time.perf_counter()
    response = session.post(url, data=body, headers=headers)
    answer = response.json()
    t = time.perf_counter() - t
    assert response.status_code == 200 and "error" not in answer, answer
    return t


def decision_overhead(rounds: int, games: int) -> dict[str, Any]:
    import requests

    from arena.http_seat import HttpSeat
    from arena.transport import BotTransport
    from bot_sdk.protocol import decision_request, encode
    from bot_sdk.signing import sign
    from replays.log import SeatInfo

    server, url = start_bot_server()
    try:
        obs_list = observations(games)
        seats = {
            s: HttpSeat(SeatInfo(s, "b", "b"), BotTransport(url, [SECRET], allow_private=True))
            for s in range(4)
        }
        raw = requests.Session()
        raw.trust_env = False
        times: dict[str, list[float]] = {"arena": [], "raw": []}
        sizes: list[int] = []
        limit, bank = 1000, BANK_MS
        for r in range(rounds + 1):  # round 0 warms both connections and the server up
            stamp = int(time.time())
            prepared = []
            for i, obs in enumerate(obs_list):
                request = decision_request(
                    obs,
                    match_id=f"r-{r}-{i // 60}",
                    decision_id=f"r-{r}-{i}",
                    time_limit_ms=limit,
                    time_bank_ms=bank,
                )
                body = encode(request)
                headers = {
                    "Content-Type": "application/json",
                    "Accept-Encoding": "identity",
                    **sign([SECRET], body, stamp),
                }
                prepared.append((body, headers))
            for i, obs in enumerate(obs_list):
                seat = seats[obs.seat]
                body, headers = prepared[i]

                arena = partial(_ask_arena, seat, obs, f"a-{r}-{i // 60}", f"a-{r}-{i}", limit)
                plain = partial(_post_raw, raw, url, body, headers)
                pair = [("arena", arena), ("raw", plain)]
                if (i + r) % 2:
                    pair.reverse()
                for name, call in pair:
                    elapsed = call()
                    if r:
                        times[name].append(elapsed * 1e6)
                if r:
                    sizes.append(len(body))
        for seat in seats.values():
            seat.close()
        raw.close()
    finally:
        stop_server(server)
    return {"times": times, "sizes": sizes, "decisions": len(obs_list)}


# -- part 2: match throughput -----------------------------------------------------------------


def run_workers(
    splits: list[tuple[int, int]],
    replay: bool,
    spin: bool = False,
    urls: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Start one worker process per (start, count), release them together, collect results.
    With ``urls``, worker ``i`` plays HTTP bots served at ``urls[i]``."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.arena", "--matches-worker", str(start), str(count)]
            + (["--replay"] if replay else [])
            + (["--spin"] if spin else [])
            + (["--http", urls[i]] if urls else []),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for i, (start, count) in enumerate(splits)
    ]
    for p in procs:
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, _ = p.communicate()
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a live process has used (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _splits(matches: int, processes: int) -> list[tuple[int, int]]:
    if processes == 1:
        return [(0, matches)]
    half = matches // 2
    return [(0, half), (half, matches - half)]


def throughput(rounds: int, matches: int, http_matches: int = 0) -> dict[str, Any]:
    """Matches per second in 1 and 2 processes, in-process and (``http_matches`` > 0) with
    HTTP bots, and the calibration loop's: all interleaved, the order rotating by round."""
    kinds = ["", "spin "] + (["http "] if http_matches else [])
    rates: dict[str, list[float]] = {f"{k}{n}": [] for k in kinds for n in ("one", "two")}
    shares: dict[str, list[float]] = {"one": [], "http one": []}
    cpu: list[dict[str, float]] = []  # per HTTP 1-process run: seconds per match
    faults = 0
    servers = [start_bot_server() for _ in range(2 if http_matches else 0)]
    urls = [url for _, url in servers]
    try:
        for r in range(rounds):
            order = list(rates)
            order = order[r % len(order) :] + order[: r % len(order)]
            for which in order:
                spin, http = which.startswith("spin"), which.startswith("http")
                total = http_matches if http else matches
                one = which.endswith("one")
                server_cpu = cpu_seconds(servers[0][0].pid) if http else 0.0
                results = run_workers(
                    _splits(total, 1 if one else 2),
                    replay=one and not spin,
                    spin=spin,
                    urls=urls if http else None,
                )
                wall = max(x["end"] for x in results) - min(x["start"] for x in results)
                rates[which].append(total / wall)
                if spin:
                    continue
                faults += sum(x["faults"] for x in results)
                if one:
                    shares[which].append(results[0]["referee_seconds"] / results[0]["seconds"])
                if http and one:  # the server's share includes the warm-up match: + 1
                    server_cpu = cpu_seconds(servers[0][0].pid) - server_cpu
                    cpu.append(
                        {
                            "wall": results[0]["seconds"] / total,
                            "match": results[0]["cpu_seconds"] / total,
                            "server": server_cpu / (total + 1),
                        }
                    )
    finally:
        for server, _ in servers:
            stop_server(server)
    return {**rates, "shares": shares, "cpu": cpu, "faults": faults}


# -- report -----------------------------------------------------------------------------------


def report_throughput(t: dict[str, Any], args: argparse.Namespace) -> None:
    print(
        f"\nMatch throughput: one-hand matches, {args.rounds} rounds, faults {t['faults']}: "
        f"{args.matches} per run of 4 house Easy bots in-process"
        + (
            f", {args.http_matches} per run of 4 HttpSeat seats asking LowestCard over loopback "
            "(one waitress bot server per match process, on the same cores)"
            if args.http_matches
            else ""
        )
        + f"; calibration: a pure-Python loop, {SPIN:,} iterations per match of work"
    )
    print(
        "| contestant | 1 process /s | 2 processes /s | speed-up (median of rounds) | "
        "per round |\n|---|---:|---:|---:|---|"
    )
    rows = [("matches, house bots in-process", "")]
    rows += [("matches, HTTP bots on loopback", "http ")] if args.http_matches else []
    for name, kind in [*rows, ("calibration loop", "spin ")]:
        a, b = t[f"{kind}one"], t[f"{kind}two"]
        ups = [y / x for x, y in zip(a, b, strict=True)]
        print(
            f"| {name} | {statistics.median(a):,.1f} | {statistics.median(b):,.1f} | "
            f"**{statistics.median(ups):.2f}×** | {', '.join(f'{x:.2f}' for x in ups)} |"
        )
    print(
        "Target: 2 workers >= 1.8x one for in-process matches (the calibration loop shows the "
        "most the machine allowed during this run)"
    )
    for label, key in (("house bots in-process", "one"), ("HTTP bots", "http one")):
        if t["shares"][key]:
            shares = t["shares"][key]
            print(
                f"Referee's share of a match, {label} (same moves replayed through the referee "
                f"alone): {statistics.median(shares):.1%} "
                f"(per round {', '.join(f'{x:.1%}' for x in shares)})"
            )
    if t["cpu"]:
        ms = {k: statistics.median(x[k] for x in t["cpu"]) * 1000 for k in t["cpu"][0]}
        cores = (ms["match"] + ms["server"]) / ms["wall"]
        print(
            f"HTTP bots, 1 process, per match (medians): {ms['wall']:.0f} ms wall; CPU "
            f"{ms['match']:.0f} ms in the match process and {ms['server']:.0f} ms in the bot "
            f"server: {cores:.2f} cores busy, so on {os.cpu_count()} cores 2 workers (with "
            f"their bot servers) can be at most {min(2, (os.cpu_count() or 1) / cores):.2f}x one"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each part")
    parser.add_argument("--games", type=int, default=4, help="one-hand games of observations")
    parser.add_argument("--matches", type=int, default=300, help="matches per throughput run")
    parser.add_argument(
        "--http-matches",
        type=int,
        default=60,
        help="matches per throughput run with HTTP bots (0: skip them)",
    )
    parser.add_argument("--part", choices=["all", "decision", "throughput"], default="all")
    parser.add_argument("--serve-bot", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--matches-worker", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--replay", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--spin", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--http", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bot:
        _serve_bot()
        return
    if args.matches_worker and args.spin:
        _spin_worker(args.matches_worker[1])
        return
    if args.matches_worker:
        _matches_worker(*args.matches_worker, replay=args.replay, url=args.http)
        return
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if args.part in ("all", "decision"):
        d = decision_overhead(args.rounds, args.games)
        arena, raw = d["times"]["arena"], d["times"]["raw"]
        sizes = d["sizes"]
        print(
            f"\nDecision overhead: {len(arena)} calls each ({d['decisions']} observations x "
            f"{args.rounds} rounds), request body {min(sizes)}-{max(sizes)} bytes "
            f"(median {statistics.median(sizes):.0f})"
        )
        print("| contestant | median µs | p90 µs | mean µs |\n|---|---:|---:|---:|")
        for name, values in (("HttpSeat.ask (arena)", arena), ("raw keep-alive POST", raw)):
            print(
                f"| {name} | {statistics.median(values):,.0f} | {_pct(values, 0.9):,.0f} | "
                f"{statistics.fmean(values):,.0f} |"
            )
        med = statistics.median(arena) / statistics.median(raw)
        p90 = _pct(arena, 0.9) / _pct(raw, 0.9)
        paired = statistics.median(a / b for a, b in zip(arena, raw, strict=True))
        print(
            f"| **arena ÷ raw** | **{med:.2f}×** | {p90:.2f}× | "
            f"median of paired ratios {paired:.2f}× |"
        )
        diff = statistics.median(a - b for a, b in zip(arena, raw, strict=True))
        print(f"Median paired difference: {diff:,.0f} µs per decision (target ≤ 1.5×, aim 1.2×)")
    if args.part in ("all", "throughput"):
        report_throughput(throughput(args.rounds, args.matches, args.http_matches), args)


if __name__ == "__main__":
    main()

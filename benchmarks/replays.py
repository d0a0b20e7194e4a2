"""Match-log size and verification speed, side by side, over random matches.

Every seat is played as the arena logs a bot over HTTP (a random legal player; each decision
with its request's SHA-256, its latency, its timing and the answer as received), under random rules
profiles (any variants, up to the default 100 hands), and every log is sealed. The report
gives the bytes stored per hand (indented JSON, canonical JSON, and each codec: zlib as the
arena stored logs until the archive, zstd without and with the trained dictionary, the stored
form with the rebuilt fields left out, the cache's quick copy) and hands per second for
verification with and without rebuilding the requests (the seats spoken to in
``gongzhu-bot/1``, then the same matches in ``gongzhu-bot/2``), for packing, for reading each
stored form back, for schema validation, and for all that ``python -m replays verify`` checks
of a log's JSON (best of ``--rounds``, in CPU time: one process, a core's, which the machine's
load changes less than the wall clock).

    python benchmarks/replays.py                  # 100 matches (or python -m benchmarks.replays)
    python benchmarks/replays.py --matches 20 --rounds 1
    python benchmarks/replays.py --matches 100 --seed 7 --train-dictionary replays/dictionaries
    python benchmarks/replays.py --matches 100 --write logs/   # then: python -m replays verify
    python benchmarks/replays.py --matches 400 --rounds 3 --against 5eb77e3   # the command

With ``--against REV``, the report is instead ``python -m replays verify --digest-only --jobs N``
on the ``--matches`` logs in their stored form (files, as a season's are kept), in this tree and
in ``git archive`` of REV side by side (both with this tree's compiled build while their
compiled packages' sources are the same): each round runs every tree's command once for each
``--jobs``, the order of the trees alternating by round. It gives the command's hands per
second by the wall clock (what a person waits for; the machine's load counts) and by its CPU
time (user and system of the command's processes), the best of ``--rounds``, and this tree ÷
REV.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import zstandard

if not __package__:
    # Run as a file, this file's directory comes first on sys.path and its name hides the
    # replays package: the project's root goes there instead.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from arena.exchange import Exchange
from arena.match_loop import Reply, play_match
from bot_sdk.protocol import (
    PROTOCOL,
    DecisionRequest,
    ProtocolVersion,
    Status,
    answer_of,
    encode,
)
from referee import Game, HandResult, Observation, Outcome, RandomPlayer, Rules, RulesError, Variant
from replays.cli import LogCheck
from replays.deals import DealSource
from replays.integrity import canonical, generate_key, pack, seal, unpack, unpacked_json
from replays.log import Connection, MatchLog, SeatInfo, TimeControl
from replays.packing import DICTIONARY_ID, FAST_LEVEL, LEVEL, dictionary, train, whole
from replays.schema import validate
from replays.upgrade import read_log
from replays.verify import verify


class ArenaSeat:
    """A random player logged like a bot over HTTP, on a kept-alive connection; ``elapsed`` is
    the match's clock (in ns, from its start), which its answers move on."""

    def __init__(
        self, seat: int, seed: str, elapsed: list[int], protocol: ProtocolVersion = PROTOCOL
    ) -> None:
        self._elapsed = elapsed
        self.info = SeatInfo(seat, f"bot-{seat}", f"random-{seat}", "1.0", protocol=protocol)
        self._player = RandomPlayer(seed)
        self._rng = random.Random(seed)

    def ask(self, request: DecisionRequest) -> Reply:
        move = self._player.choose(request.observation)
        answer = encode(answer_of(move)).decode()
        latency, sent = self._rng.randint(5, 400), self._elapsed[0]
        self._elapsed[0] += latency * 1_000_000
        exchange = Exchange(
            sent, self._elapsed[0], Connection.REUSED, None, None,
            len(request.body), len(answer), retried=False,
        )  # fmt: skip
        return Reply(move, Status.OK, latency, answer, None, request.sha256, None, exchange)

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        """Notifications are not logged."""

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        """Notifications are not logged."""


def random_rules(rng: random.Random) -> Rules:
    while True:
        names = [v.value for v in Variant if rng.random() < 0.2]
        try:
            return Rules.from_json({"variants": names})
        except RulesError:
            continue


def play(matches: int, seed: int, protocol: ProtocolVersion = PROTOCOL) -> list[MatchLog]:
    """``matches`` random matches, every seat spoken to in ``protocol`` (the same matches, move
    for move, in either version: the players see the same observations)."""
    rng = random.Random(seed)
    logs = []
    for n in range(matches):
        match_id = f"bench:table-{n}:match-1"
        elapsed = [0]
        logs.append(
            play_match(
                Game(random_rules(rng), seed=f"bench-{seed}-{n}"),
                [ArenaSeat(s, f"{seed}-{n}-{s}", elapsed, protocol) for s in range(4)],
                match_id=match_id,
                deals=DealSource.practice(f"bench-{seed}-{n}"),
                time_control=TimeControl(1000, 30_000, 5),
                tournament_id="bench",
                table_id=f"table-{n}",
                started_at="2026-01-01T12:00:00Z",
                finished_at=lambda: "2026-01-01T12:05:00Z",
                origin_ns=0,
            )
        )
    return logs


def _each(function: Callable[[Any], object], items: Sequence[Any]) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            function(item)

    return run


def best_rates(
    hands: int, rounds: int, work: Mapping[str, Callable[[], object]]
) -> dict[str, float]:
    """Hands per second of the fastest of ``rounds`` runs of each of ``work``, in CPU time; each
    round runs every one in turn, so that a change in the machine's load falls on them all."""
    best = dict.fromkeys(work, float("inf"))
    for _ in range(rounds):
        for name, run in work.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return {name: hands / seconds for name, seconds in best.items()}


def report(matches: int, rounds: int, seed: int) -> list[str]:
    logs = play(matches, seed)
    logs_2 = play(matches, seed, ProtocolVersion.V2)
    key = generate_key()
    sealed: list[dict[str, Any]] = [seal(log.to_json(), key, key_id="bench") for log in logs]
    zlibbed = [zlib.compress(canonical(data), 9) for data in sealed]
    stored = [pack(data) for data in sealed]
    texts = [json.dumps(data).encode() for data in sealed]
    cached = [whole(blob) for blob in stored]
    hands = sum(len(log.hands) for log in logs)
    decisions = sum(len(hand.decisions) for log in logs for hand in log.hands)
    trained = zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary(DICTIONARY_ID))
    sizes = {
        "JSON, indented (json.dumps indent=2)": sum(len(json.dumps(d, indent=2)) for d in sealed),
        "canonical JSON (sorted keys, no spaces)": sum(len(canonical(d)) for d in sealed),
        "zlib-9 canonical JSON (stored until now)": sum(map(len, zlibbed)),
        f"zstd-{LEVEL} canonical JSON, no dictionary": sum(
            len(zstandard.ZstdCompressor(level=LEVEL).compress(canonical(d))) for d in sealed
        ),
        f"zstd-{LEVEL} + dictionary, canonical JSON": sum(
            len(trained.compress(canonical(d))) for d in sealed
        ),
        f"zstd-{FAST_LEVEL} + dictionary (the Redis cache's copy)": sum(map(len, cached)),
        f"rebuilt fields left out, zstd-{LEVEL} + dict (stored)": sum(map(len, stored)),
    }
    packed = sizes["zlib-9 canonical JSON (stored until now)"]
    work: dict[str, Callable[[], None]] = {
        "verify, rebuilding every request": _each(verify, logs),
        "verify, without the request check": _each(
            lambda log: verify(log, check_requests=False), logs
        ),
        "verify, rebuilding every request, gongzhu-bot/2": _each(verify, logs_2),
        "verify, without the request check, gongzhu-bot/2": _each(
            lambda log: verify(log, check_requests=False), logs_2
        ),
        "pack (the stored form, from sealed JSON)": _each(pack, sealed),
        "unpack + read_log, zlib form": _each(lambda blob: read_log(unpack(blob)), zlibbed),
        "unpack + read_log, stored form (rebuilds)": _each(
            lambda blob: read_log(unpack(blob)), stored
        ),
        "unpack + read_log, the cache's copy": _each(lambda blob: read_log(unpack(blob)), cached),
        "schema validation": _each(validate, sealed),
        "python -m replays verify's checks of a log": _each(_cli_check, texts),
    }
    rates = best_rates(hands, rounds, work)
    assert all(verify(log).ok for log in logs + logs_2)
    assert all(unpacked_json(b) == canonical(d) for b, d in zip(stored, sealed, strict=True))
    lines = [
        f"{matches} random matches (seed {seed}): {hands} hands, {decisions} decisions, "
        f"{decisions / hands:.1f} decisions per hand; dictionary {DICTIONARY_ID}",
        "",
        f"  {'storage':<50}{'bytes/hand':>12}{'vs zlib':>9}",
    ]
    for name, size in sizes.items():
        lines.append(f"  {name:<50}{size / hands:>12,.0f}{size / packed:>8.2f}x")
    lines += ["", f"  {'speed (best of ' + str(rounds) + ', CPU time)':<50}{'hands/s':>12}"]
    lines += [f"  {name:<50}{rate:>12,.0f}" for name, rate in rates.items()]
    v2 = rates["verify, rebuilding every request, gongzhu-bot/2"]
    lines.append(
        f"  gongzhu-bot/2 logs ÷ gongzhu-bot/1 logs, verify rebuilding every request: "
        f"{v2 / rates['verify, rebuilding every request']:.2f}x"
    )
    return lines


def _cli_check(text: bytes) -> None:
    """What ``python -m replays verify --digest-only`` does with a log's JSON, in one process:
    its seal's SHA-256, its schema, reading it, and the referee's verification."""
    report, status = LogCheck(None, True, None, None).reported(text)
    assert status == 0, report


def train_dictionary(path: Path, matches: int, seed: int) -> None:
    """Train the stored form's zstd dictionary on ``matches`` random matches and write it to
    ``path`` (named by its id: ``replays/dictionaries/<id>.zdict``)."""
    key = generate_key()
    sealed = [seal(log.to_json(), key, key_id="bench") for log in play(matches, seed)]
    data = train(sealed)
    dict_id = zstandard.ZstdCompressionDict(data).dict_id()
    target = path / f"{dict_id}.zdict"
    target.write_bytes(data)
    print(f"dictionary {dict_id} ({len(data):,} bytes) written to {target}")


def write(path: Path, matches: int, seed: int) -> int:
    """Seal ``matches`` random logs (a throwaway key: verify them with --digest-only) and write
    each in its stored form in ``path``; their hands."""
    key = generate_key()
    path.mkdir(parents=True, exist_ok=True)
    logs = play(matches, seed)
    for n, log in enumerate(logs):
        (path / f"match-{n}.json.z").write_bytes(pack(seal(log.to_json(), key, key_id="bench")))
    hands = sum(len(log.hands) for log in logs)
    print(f"{len(logs)} logs, {hands} hands, written to {path}", file=sys.stderr)
    return hands


def command_report(
    matches: int, rounds: int, seed: int, against: str, jobs: list[int]
) -> list[str]:
    """``python -m replays verify`` on stored files, this tree against ``against`` (module
    docstring)."""
    from benchmarks.decision_cost import share_compiled_build
    from benchmarks.layers import archive

    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="gz-verify-") as directory:
        workdir = Path(directory)
        hands = write(workdir / "logs", matches, seed)
        files = sorted(str(path) for path in (workdir / "logs").iterdir())
        earlier = workdir / "earlier"
        archive(against, earlier)
        shared = share_compiled_build(earlier)
        trees = {"this tree": root, f"at {against}": earlier}
        load = [os.getloadavg()[0]]
        best: dict[tuple[str, int], tuple[float, float]] = {}
        for r in range(rounds):
            for name in list(trees) if r % 2 == 0 else list(reversed(trees)):
                for n in jobs:
                    wall, cpu = _timed_command(trees[name], files, n)
                    old_wall, old_cpu = best.get((name, n), (float("inf"), float("inf")))
                    best[name, n] = min(wall, old_wall), min(cpu, old_cpu)
            load.append(os.getloadavg()[0])
    this, before = trees
    lines = [
        f"python -m replays verify --digest-only on {matches} stored logs ({hands} hands), best "
        f"of {rounds}; {os.cpu_count()} CPUs, load average {load[0]:.1f} at the start, "
        f"{max(load):.1f} at most, {load[-1]:.1f} at the end",
        "" if shared else f"at {against} the compiled packages run as pure Python (sources differ)",
        f"  {'--jobs':<8}{'this ÷ before (wall)':>22}{'this, hands/s wall':>20}"
        f"{'before, hands/s wall':>22}{'this, hands/s CPU':>19}{'before, hands/s CPU':>21}",
    ]
    for n in jobs:
        (wall, cpu), (old_wall, old_cpu) = best[this, n], best[before, n]
        lines.append(
            f"  {n:<8}{old_wall / wall:>21.2f}x{hands / wall:>20,.0f}{hands / old_wall:>22,.0f}"
            f"{hands / cpu:>19,.0f}{hands / old_cpu:>21,.0f}"
        )
    return lines


def _timed_command(tree: Path, files: list[str], jobs: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user and system, all its processes) of the command in
    ``tree`` on ``files``; it must verify them all."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "replays", "verify", "--digest-only", "--jobs", str(jobs), *files],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode or done.stdout.count("referee    ok") != len(files):
        sys.exit(f"python -m replays verify failed in {tree}:\n{done.stdout[-2000:]}{done.stderr}")
    cpu = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--train-dictionary",
        type=Path,
        metavar="DIR",
        help="train the stored form's dictionary instead (on --matches matches of --seed; the "
        "shipped one: --matches 100 --seed 7) and write it in DIR",
    )
    parser.add_argument(
        "--write",
        type=Path,
        metavar="DIR",
        help="instead: write the --matches sealed logs (packed) in DIR (for replays verify)",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="instead: python -m replays verify on the --matches logs, stored, in this tree and "
        "in the git revision REV side by side",
    )
    parser.add_argument(
        "--jobs", default="1,2", help="with --against: the command's --jobs values, comma-separated"
    )
    args = parser.parse_args()
    if args.against is not None:
        jobs = [int(n) for n in args.jobs.split(",")]
        print("\n".join(command_report(args.matches, args.rounds, args.seed, args.against, jobs)))
        return
    if args.write is not None:
        write(args.write, args.matches, args.seed)
        return
    if args.train_dictionary is not None:
        train_dictionary(args.train_dictionary, args.matches, args.seed)
        return
    print("\n".join(report(args.matches, args.rounds, args.seed)))


if __name__ == "__main__":
    main()

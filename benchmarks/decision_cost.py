"""The arena's cost per decision and verification speed: this tree against an earlier revision,
side by side in one run.

    python -m benchmarks.decision_cost --against ed784a3 --rounds 3
    python -m benchmarks.decision_cost --against ed784a3 --rounds 1 --instructions
    python -m benchmarks.decision_cost --against ed784a3 --profile   # where the CPU goes

Each round runs one process per tree (this one, and ``git archive`` of the revision), the order
alternating by round, or with ``--together`` both at the same time, so that whatever else loads
the machine loads both alike (each then also slows the other: compare their ratio, not their
figures with a run's without it); each process imports only its own tree's code (its tree
first on ``PYTHONPATH``) and measures:

1. **Arena CPU per decision.** Matches of ``--hands`` hands (1 and 20 by default: a one-hand
   match is the figure of earlier runs, a long one shows what grows with the match), each played
   by ``arena.match_loop.play_match`` with four ``arena.http_seat.HttpSeat`` seats made for the
   match, greeted with ``hello`` and closed after it, as a match job does. They ask the SDK's
   LowestCard bot (``bot_sdk.server``, waitress, signatures verified) served on loopback by one
   process of this tree for both trees. The figure is the match process's CPU time
   (``time.process_time``: user and system, all its threads) over the matches, per decision:
   hello, notifications and the seats' set-up included, the bot server's CPU not. With
   ``--instructions`` the same matches are also counted in instructions under valgrind's
   callgrind (start-up, measured with the warm-up match alone, subtracted), which the
   machine's load does not change.
2. **Verification.** ``--logs`` random matches logged as bots over HTTP
   (``benchmarks.replays.play``: random rules profiles, every decision with its request's
   SHA-256), then hands per second of ``replays.verify.verify`` rebuilding and hashing every
   request (what ``python -m replays verify`` does), of ``verify`` without the request check,
   and of reading the archive's stored form back (``unpack`` + ``read_log``, which rebuilds
   every request's hash); the best of three passes, CPU time. With ``--jobs N`` (N > 1), also
   hands per second of ``verify`` of the same logs in N processes at once: wall clock, so it
   counts the machine's load; the single-process figures are per core. With ``--instructions``,
   ``verify``'s instructions per hand (rebuilding the requests) are counted too: under
   callgrind, one run that makes the logs and verifies them once less one that only makes
   them. Valgrind hides the CPU's SHA extensions, so OpenSSL hashes in software there: the
   count overstates the SHA-256's share (about 28 instructions a byte, where the CPU takes
   about 2 cycles).

With ``--profile``, each tree's process runs each part once under cProfile (CPU time) and
prints its top functions instead.

The table gives both trees' medians over the rounds and the ratio this ÷ earlier (the median
of the rounds' ratios).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if Path(sys.path[0]).resolve() == ROOT / "benchmarks":  # run as a script
    # This directory would shadow the ``replays`` package. A child measures the tree it runs in
    # (its working directory, which may be the earlier revision's): that tree comes first.
    sys.path[0] = str(Path.cwd() if "--child" in sys.argv else ROOT)

VERIFY_PASSES = 3
PROFILE_LINES = 14
SECRET = "benchmark-secret"
"""The bot server's (``benchmarks.arena``)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="ed784a3", help="the earlier revision (git)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--hands", default="1,20", help="hands per match, comma-separated (none: '')"
    )
    parser.add_argument("--decisions", type=int, default=1000, help="decisions per figure")
    parser.add_argument("--logs", type=int, default=40, help="random matches to verify")
    parser.add_argument("--jobs", type=int, default=1, help="also verify in this many processes")
    parser.add_argument("--instructions", action="store_true", help="also count instructions")
    parser.add_argument(
        "--together",
        action="store_true",
        help="run both trees' processes of a round at the same time (the same load for both)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead: where each tree's CPU goes (cProfile), one round, top functions",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        # the child runs in the tree it measures: that tree's code, not this file's
        sys.path.insert(0, os.getcwd())
        print(json.dumps(measure(json.loads(args.child.read_text()))))
        return
    compare(args)


# -- the parent ---------------------------------------------------------------------------------


def compare(args: argparse.Namespace) -> None:
    from benchmarks.arena import start_bot_server, stop_server
    from benchmarks.layers import archive

    hands = [int(h) for h in args.hands.split(",") if h]
    with tempfile.TemporaryDirectory(prefix="gz-decisions-") as directory:
        workdir = Path(directory)
        earlier = workdir / "earlier"
        archive(args.against, earlier)
        share_compiled_build(earlier)
        trees = {"this tree": ROOT, f"at {args.against}": earlier}
        server, url = start_bot_server()
        try:
            plan = {
                "url": url,
                "hands": hands,
                "decisions": args.decisions,
                "logs": args.logs,
                "jobs": args.jobs,
                "profile": args.profile,
            }
            if args.profile:
                for name, tree in trees.items():
                    print(f"## {name}\n\n{child(tree, plan, workdir)['profile']}")
                return
            results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
            for r in range(args.rounds):
                order = list(trees) if r % 2 == 0 else list(reversed(trees))
                if args.together:
                    running = {name: start(trees[name], plan, workdir) for name in order}
                    for name in order:
                        results[name].append(finish(running[name], trees[name]))
                else:
                    for name in order:
                        results[name].append(child(trees[name], plan, workdir))
                print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
            counts: dict[str, dict[str, float]] = {}
            if args.instructions:
                for name, tree in trees.items():
                    counts[name] = instructions(tree, plan, workdir)
        finally:
            stop_server(server)
    report(args, results, counts)


def share_compiled_build(tree: Path) -> bool:
    """Give ``tree`` this tree's compiled build when the compiled packages' sources are the same
    (the build is chosen by their digest, referee/build.py), so that both trees run the same one.
    False, with a warning on stderr, when they differ: ``tree`` then runs them as pure Python,
    and a comparison of the two trees is not of their other code alone."""
    from referee import build

    if build.choice().compiled and build.sources_digests(tree) == build.sources_digests():
        for package in build.COMPILED_MODULES:
            shutil.copytree(build.compiled_dir(package), build.compiled_dir(package, tree))
        return True
    print(
        f"warning: {tree.name}'s compiled packages (referee, bot_sdk, replays) differ from this"
        " tree's (or this one is not compiled): it runs them as pure Python, so the two trees'"
        " figures differ by the build too",
        file=sys.stderr,
    )
    return False


def child(
    tree: Path, plan: dict[str, Any], workdir: Path, prefix: list[str] | None = None
) -> dict[str, Any]:
    """One process on ``tree``'s code (under ``prefix``, e.g. valgrind): its figures."""
    return finish(start(tree, plan, workdir, prefix), tree)


def start(
    tree: Path, plan: dict[str, Any], workdir: Path, prefix: list[str] | None = None
) -> subprocess.Popen[str]:
    """The process of :func:`child`, started."""
    path = workdir / "plan.json"
    path.write_text(json.dumps(plan))
    return subprocess.Popen(
        [*(prefix or []), sys.executable, __file__, "--child", str(path)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], tree: Path) -> dict[str, Any]:
    """The figures of a process :func:`start` started, once it ends."""
    out, err = process.communicate()
    if process.returncode:
        sys.exit(f"the process on {tree} failed:\n{err}")
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    figures["stderr"] = err
    return figures


def instructions(tree: Path, plan: dict[str, Any], workdir: Path) -> dict[str, float]:
    """Instructions per decision of each match length, under callgrind, start-up subtracted."""
    prefix = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]

    def count(hands: int, decisions: int) -> tuple[int, int]:
        step = {**plan, "hands": [hands], "decisions": decisions, "logs": 0}
        done = child(tree, step, workdir, prefix)
        line = next(x for x in done["stderr"].splitlines() if "Collected :" in x)
        return int(line.split(":")[-1].strip()), done["decided"].get(str(hands), 0)

    def verified(passes: int) -> tuple[int, int]:
        step = {**plan, "hands": [], "verify_passes": passes}
        done = child(tree, step, workdir, prefix)
        line = next(x for x in done["stderr"].splitlines() if "Collected :" in x)
        return int(line.split(":")[-1].strip()), done["verified_hands"]

    out: dict[str, float] = {}
    for hands in plan["hands"]:
        base, _ = count(hands, 0)
        total, decided = count(hands, 100)
        out[f"instructions per decision, {hands}-hand matches"] = (total - base) / decided
    if plan["logs"]:
        base, _ = verified(0)
        total, verified_hands = verified(1)
        out["verify instructions per hand, rebuilding every request"] = (
            total - base
        ) / verified_hands
    return out


def report(
    args: argparse.Namespace,
    results: dict[str, list[dict[str, Any]]],
    counts: dict[str, dict[str, float]],
) -> None:
    this, earlier = results["this tree"], results[f"at {args.against}"]
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds\n"
    )
    print(f"| figure | this tree | at {args.against} | this ÷ earlier (per round) |")
    print("|---|---:|---:|---|")
    for name in this[0]["figures"]:
        mine = [r["figures"][name] for r in this]
        theirs = [r["figures"][name] for r in earlier]
        ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
        print(
            f"| {name} | {statistics.median(mine):,.3f} | {statistics.median(theirs):,.3f} | "
            f"**{statistics.median(ratios):.2f}×** ({', '.join(f'{x:.2f}' for x in ratios)}) |"
        )
    if counts:
        a, b = counts["this tree"], counts[f"at {args.against}"]
        for name in a:
            print(f"| {name} | {a[name]:,.0f} | {b[name]:,.0f} | **{a[name] / b[name]:.2f}×** |")
    print("\nbytes sent per request, headers included (median, largest), by hands per match:")
    for name, runs in results.items():
        print(f"  {name}: {runs[0]['sizes']}")


# -- a child: one tree's code -------------------------------------------------------------------


def measure(plan: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, float] = {}
    decided: dict[str, int] = {}
    sizes: dict[str, list[int]] = {}
    profiles: list[str] = []

    def profiled(title: str, work: Callable[[], Any]) -> Any:
        if not plan.get("profile"):
            return work()
        profile = cProfile.Profile(time.process_time)
        result = profile.runcall(work)
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).strip_dirs().sort_stats("cumulative")
        stats.print_stats(PROFILE_LINES)
        stats.sort_stats("tottime").print_stats(PROFILE_LINES)
        profiles.append(f"### {title}\n\n```text\n{out.getvalue().strip()}\n```\n")
        return result

    for hands in plan["hands"]:
        cpu, count, bodies = profiled(
            f"{hands}-hand matches against HTTP bots",
            partial(arena_cpu, plan["url"], hands, plan["decisions"]),
        )
        decided[str(hands)] = count
        sizes[str(hands)] = [int(statistics.median(bodies or [0])), max(bodies or [0])]
        if count:
            figures[f"arena CPU ms per decision, {hands}-hand matches"] = cpu * 1000 / count
    if "verify_passes" in plan:  # counted under callgrind: the work, untimed
        return {"verified_hands": verify_passes(plan["logs"], plan["verify_passes"])}
    if plan["logs"]:
        figures.update(
            profiled(
                "verification",
                partial(verification, plan["logs"], bool(plan.get("profile")), plan["jobs"]),
            )
        )
    return {"figures": figures, "decided": decided, "sizes": sizes, "profile": "\n".join(profiles)}


def arena_cpu(url: str, hands: int, decisions: int) -> tuple[float, int, list[int]]:
    """CPU seconds of whole matches of ``hands`` hands until ``decisions`` were asked, the
    number asked, and the request bodies' sizes (after a warm-up match)."""
    from arena.http_seat import HttpSeat
    from arena.match_loop import play_match
    from arena.transport import BotTransport
    from referee import Game, Rules
    from replays.deals import DealSource
    from replays.log import SeatInfo, TimeControl

    rules = Rules(fixed_hands=hands, max_hands=hands)
    tc = TimeControl(10_000, 600_000, 5)  # generous: callgrind slows the arena down

    def match(n: int) -> int:
        match_id = f"tournament-1:table-{n}:match-1"
        seats = [
            HttpSeat(
                SeatInfo(s, f"bot-{s}", "lowest-card"),
                BotTransport(url, [SECRET], allow_private=True),
            )
            for s in range(4)
        ]
        for seat in seats:
            answer = seat.hello(
                match_id=match_id,
                rules=rules,
                time_limit_ms=tc.decision_ms,
                time_bank_ms=tc.bank_ms,
                timeout_s=30,
            )
            # the version the bot chose, as arena.matches records it (a tree before versions:
            # none, its one version)
            chosen = getattr(answer, "protocol", None)
            if chosen is not None:
                seat.info = dataclasses.replace(seat.info, protocol=chosen)
        log = play_match(
            Game(rules, seed=n),
            seats,
            match_id=match_id,
            deals=DealSource.practice(str(n)),
            time_control=tc,
        )
        for seat in seats:
            seat.close()
        records = [d for h in log.hands for d in h.decisions]
        assert all(d.status.value == "ok" for d in records), [d.fault for d in records]
        bodies.extend(d.timing.bytes_sent for d in records if d.timing and d.timing.bytes_sent)
        return len(records)

    bodies: list[int] = []
    match(-1)  # also with no decisions asked: the start-up that --instructions subtracts
    if decisions == 0:
        return 0.0, 0, []
    bodies.clear()
    count, n = 0, 0
    start = time.process_time()
    while count < decisions:
        count += match(n)
        n += 1
    return time.process_time() - start, count, bodies


def verify_passes(matches: int, passes: int) -> int:
    """Make ``matches`` random logs and verify them ``passes`` times; their hands."""
    from benchmarks.replays import play
    from replays.verify import verify

    logs = play(matches, 1)
    for _ in range(passes):
        assert all(verify(log).ok for log in logs)
    return sum(len(log.hands) for log in logs)


def verification(matches: int, only_verify: bool = False, jobs: int = 1) -> dict[str, float]:
    """Hands per second of each of the work below (with ``only_verify``, of ``verify`` with
    the request check alone)."""
    from benchmarks.replays import play
    from replays.integrity import generate_key, pack, seal, unpack
    from replays.upgrade import read_log
    from replays.verify import verify

    logs = play(matches, 1)
    hands = sum(len(log.hands) for log in logs)
    key = generate_key()
    stored = [pack(seal(log.to_json(), key, key_id="bench")) for log in logs]
    if jobs > 1 and not only_verify:
        out = {f"verify hands/s in {jobs} processes, wall clock": in_processes(logs, jobs)}
    else:
        out = {}
    work: dict[str, Callable[[], object]] = {
        "verify hands/s, rebuilding every request": lambda: [verify(log) for log in logs],
        "verify hands/s, without the request check": lambda: [
            verify(log, check_requests=False) for log in logs
        ],
        "stored form read back, hands/s (rebuilds requests)": lambda: [
            read_log(unpack(blob)) for blob in stored
        ],
    }
    if only_verify:
        work = dict(list(work.items())[:1])
    for name, run in work.items():
        best = float("inf")
        for _ in range(VERIFY_PASSES):
            start = time.process_time()
            run()
            best = min(best, time.process_time() - start)
        out[name] = hands / best
    assert all(verify(log).ok for log in logs)
    return out


_LOGS: list[Any] = []
"""The logs :func:`in_processes` verifies: its processes, forked after they are set, have them."""


def in_processes(logs: list[Any], jobs: int) -> float:
    """Hands per second (wall clock, best of three) of ``logs`` verified by ``jobs`` forked
    processes, each verifying its share (the pool started and warm before the clock starts)."""
    import multiprocessing

    _LOGS[:] = logs
    hands = sum(len(log.hands) for log in logs)
    best = float("inf")
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        pool.map(verified_hands, range(jobs))
        for _ in range(VERIFY_PASSES):
            start = time.perf_counter()
            assert sum(pool.map(verified_hands, range(len(logs)), chunksize=1)) == hands
            best = min(best, time.perf_counter() - start)
    return hands / best


def verified_hands(index: int) -> int:
    """Verify the ``index``-th log of :data:`_LOGS`: its hands."""
    from replays.verify import verify

    result = verify(_LOGS[index])
    assert result.ok, result.discrepancy
    return result.hands


if __name__ == "__main__":
    main()

"""The arena's layers, this tree against an earlier revision: the same store writes and web reads
timed on both, side by side, in one run.

    python -m benchmarks.layers --against 1c52590 --rounds 5

A fresh Redis (``arena.redis_server``) is filled once, by this tree's code, as
``benchmarks.web`` fills it: 20 bots, one rated tournament of 20 played to the rules' end by
random legal players logged as HTTP bots, sealed and recorded; and a second tournament whose
planned matches are played and sealed but not recorded. Each round then runs one process per
tree (this one, and ``git archive`` of the revision), the order alternating by round, on the
same Redis. Each process imports only its own tree's code (its tree first on ``PYTHONPATH``):
it records its share of the unrecorded matches (``Store.record_result``, the transaction that
writes a result, the standings, the progress and the ladder), then asks each endpoint through
the app factory's test client, one request at a time. It reports the median CPU time of each
operation in its own process (``time.process_time``: the arena's Python work, not the wait for
Redis, which wall-clock time on a shared machine drowns in noise) and the Redis commands each
issued. The table gives both trees' medians over the rounds and the ratio this ÷ earlier, the
median of the rounds' ratios; the command counts do not depend on the machine at all.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
READS = {
    "ladder JSON": "/api/ladder?per_page=100",
    "tournament JSON": "/api/tournaments/{tournament}",
    "tournament standings JSON": "/api/tournaments/{tournament}/standings",
    "bots JSON": "/api/bots?per_page=100",
    "matches JSON": "/api/matches?tournament={tournament}&per_page=100",
    "replay JSON": "/api/matches/{match}/replay",
    "ladder page": "/",
    "tournament page": "/tournaments/{tournament}",
    "replay viewer page": "/matches/{match}",
}
WRITE = "record a result (Store.record_result)"
REPEATS = 30
"""Requests per endpoint and process, after 3 to warm up."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="1c52590", help="the earlier revision (git)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(json.loads(args.child.read_text()))))
        return
    compare(args.against, args.rounds)


# -- the parent: fill once, then alternate the two trees --------------------------------------


def compare(against: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="gz-layers-") as directory:
        workdir = Path(directory)
        earlier = workdir / "earlier"
        archive(against, earlier)
        with filled(workdir, batches=2 * rounds) as setup:
            trees = {"this tree": ROOT, f"at {against}": earlier}
            results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
            for r in range(rounds):
                order = list(trees) if r % 2 == 0 else list(reversed(trees))
                for name in order:
                    batch = setup["batches"].pop()
                    plan = {**setup, "batch": batch}
                    results[name].append(child(trees[name], plan, workdir))
                print(f"round {r + 1} of {rounds} done", file=sys.stderr)
        report(against, results)


def archive(revision: str, target: Path) -> None:
    """The revision's tracked files in ``target`` (``git archive``)."""
    target.mkdir(parents=True)
    tar = target.with_suffix(".tar")
    subprocess.run(["git", "archive", "-o", str(tar), revision], cwd=ROOT, check=True)
    with tarfile.open(tar) as files:
        files.extractall(target, filter="data")


@contextmanager
def filled(workdir: Path, *, batches: int) -> Iterator[dict[str, Any]]:
    """A Redis holding a played tournament, and ``batches`` sets of sealed, unrecorded logs."""
    from benchmarks.web import (
        UNLIMITED,
        Arena,
        fresh_redis,
        new_tournament,
        play_sealed,
        register_bots,
    )

    with fresh_redis(workdir, fsync="no") as (server, store, keys):
        bots = register_bots(store, 20)
        arena = Arena(store, keys.key, bots, random.Random(7), hands=None)
        tid, spec, planned = new_tournament(arena, 20, None)
        hands_of: dict[str, int] = {}
        for p in planned:
            match_id, sealed, hands_of[match_id] = play_sealed(arena, tid, spec, p)
            assert store.record_result(match_id, sealed)
        longest = max(hands_of, key=hands_of.__getitem__)
        spare_tid, spare_spec, spare = new_tournament(arena, 20, 1)
        logs = []
        for p in spare[: batches * 8]:
            match_id, sealed, _ = play_sealed(arena, spare_tid, spare_spec, p)
            path = workdir / f"{match_id}.json"
            path.write_text(json.dumps(sealed))
            logs.append([match_id, str(path)])
        yield {
            "environment": {**keys.environment(server.url), **UNLIMITED},  # one address
            "tournament": tid,
            "match": longest,
            "batches": [logs[i::batches] for i in range(batches)],
        }


def child(tree: Path, plan: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """One process on ``tree``'s code: its figures."""
    path = workdir / "plan.json"
    path.write_text(json.dumps(plan))
    env = {**os.environ, **plan["environment"], "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def report(against: str, results: dict[str, list[dict[str, Any]]]) -> None:
    this, earlier = results["this tree"], results[f"at {against}"]
    print(f"the store's code: this tree {this[0]['store']}, at {against} {earlier[0]['store']}\n")
    print(
        f"| operation | this tree CPU µs | at {against} CPU µs | ratio this ÷ earlier (per round) "
        "| Redis commands: this / earlier |"
    )
    print("|---|---:|---:|---|---|")
    for name in [WRITE, *READS]:
        mine = [r["us"][name] for r in this]
        theirs = [r["us"][name] for r in earlier]
        ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
        rounds = ", ".join(f"{x:.2f}" for x in ratios)
        commands = f"{this[0]['commands'][name]} / {earlier[0]['commands'][name]}"
        print(
            f"| {name} | {statistics.median(mine):,.0f} | {statistics.median(theirs):,.0f} "
            f"| {statistics.median(ratios):.2f}× ({rounds}) | {commands} |"
        )


# -- a child: one tree's code ------------------------------------------------------------------


def measure(plan: dict[str, Any]) -> dict[str, Any]:
    """Time the writes and the reads with the code on ``PYTHONPATH`` (this tree's or the
    earlier one's: each names its modules its own way)."""
    # the earlier tree first: this tree's packages are installed (editable) and would answer
    # for an arena/ the earlier tree does not have
    try:
        from workers.config import Config  # type: ignore[import-not-found]
    except ImportError:
        from arena.config import Config
    from service.app import create_app

    app = create_app(Config.from_environment(plan["environment"]))
    store = app.extensions["gongzhu"].store
    client = app.test_client()
    us: dict[str, float] = {}
    commands: dict[str, float] = {}

    batch = [(match_id, json.loads(Path(path).read_text())) for match_id, path in plan["batch"]]
    times, before = [], _commands(store)
    for match_id, sealed in batch:
        start = time.process_time()
        assert store.record_result(match_id, sealed)
        times.append(time.process_time() - start)
    us[WRITE] = statistics.median(times) * 1e6
    commands[WRITE] = round((_commands(store) - before) / len(batch), 1)

    for name, template in READS.items():
        url = template.format(tournament=plan["tournament"], match=plan["match"])
        for _ in range(3):
            assert client.get(url).status_code == 200, url
        times, before = [], _commands(store)
        for _ in range(REPEATS):
            start = time.process_time()
            response = client.get(url)
            times.append(time.process_time() - start)
            assert response.status_code == 200, url
        us[name] = statistics.median(times) * 1e6
        commands[name] = round((_commands(store) - before - 1) / REPEATS, 1)
    return {"us": us, "commands": commands, "store": type(store).__module__}


def _commands(store: Any) -> int:
    """Redis commands served so far (the INFO asking for it is one more)."""
    stats = store.redis.info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


if __name__ == "__main__":
    here = str(Path(__file__).resolve().parent)
    if here in sys.path:  # run as a script (a child): import only the tree on PYTHONPATH
        sys.path.remove(here)
    main()

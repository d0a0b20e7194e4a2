"""How long re-rating the ladder takes (``gongzhu rerate``, :mod:`arena.store.rerating`).

    python -m benchmarks.rerating                  # 1,000 matches
    python -m benchmarks.rerating --matches 200

A fresh Redis and a directory archive (:func:`benchmarks.web.fresh_redis`, no fsync), and
``--matches`` random matches of :func:`benchmarks.replays.play` (four random players logged as
bots over HTTP, about 5 hands a match), each sealed and recorded with
``Store.record_result`` as a worker records a rated match: its stored form in the archive, the
ratings, the journal of rated matches. The store is then marked as holding ratings of another
scale, as an upgraded arena's is, and re-rated; then re-rated again, its scale current. Printed
for each: the wall and CPU time, per match, and how many such matches one re-rating gets
through in rq's default job timeout (180 s), which bounds the matchmaker's round.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from arena import ratings
from arena.store import keys
from arena.store.rerating import rerate
from benchmarks.replays import play
from benchmarks.web import fresh_redis
from replays.integrity import seal

JOB_TIMEOUT_S = 180


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="gz-rerating-bench-") as tmp,
        fresh_redis(Path(tmp), fsync="no") as (_, store, bench_keys),
    ):
        logs = play(args.matches, args.seed)
        hands = sum(log.outcome.hands_played for log in logs)
        for log in logs:
            sealed = seal(log.to_json(), bench_keys.key, key_id="bench")
            assert store.record_result(log.match_id, sealed)
        print(f"{len(logs):,} rated matches recorded, {hands:,} hands")
        for what in ("ratings of another scale", "ratings already on the current scale"):
            if what.startswith("ratings of another"):
                store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)
            wall, cpu = time.perf_counter(), time.process_time()
            rated = rerate(store)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert rated == len(logs) and store.ratings_scale() == ratings.SCALE
            print(
                f"re-rating {what}: {wall:.2f} s wall, {cpu:.2f} s CPU; "
                f"{1000 * wall / rated:.2f} ms a match; "
                f"about {JOB_TIMEOUT_S * rated / wall:,.0f} such matches in {JOB_TIMEOUT_S} s"
            )


if __name__ == "__main__":
    main()

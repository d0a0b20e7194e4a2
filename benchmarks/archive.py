"""Sealed logs out of Redis: the migration of a store of logs kept in Redis (as the arena kept
them before the archive) into the directory archive, with Redis's ``INFO memory`` before and
after, and the replay endpoint's latency served from Redis, from the archive and from the
Redis cache, side by side.

    python -m benchmarks.archive                  # 10,000 logs
    python -m benchmarks.archive --logs 1000 --requests 100

A fresh Redis (``arena.redis_server``, no fsync: the figure is memory, not durability) and an
archive directory, both in a temporary directory. The logs are copies of ``--templates`` random
matches of :mod:`benchmarks.replays` (logged as bots over HTTP), each given its own match id
and sealed again; each is written as the arena wrote a result before the archive: the zlib form
in ``gz:replay:{id}`` and the match's record. ``gongzhu migrate-replays`` then moves them
(``arena.archiving.migrate``, each log checked against its seal, written, fsynced, read back
and deleted from Redis).

The endpoint, ``GET /api/matches/{id}/replay`` through the app in-process (Flask's test client:
no network, so the figure is the arena's own work), for ``--requests`` different matches each:
a log kept in Redis (before the migration); a migrated log from the archive (zlib form); the
templates recorded as new matches are, in the stored form (``replays.packing``: rebuilt on
every read with the cache off), from the archive; the same from the Redis cache
(``GONGZHU_REPLAY_CACHE_S``), read again.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import statistics
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena import archiving
from arena.config import Config
from arena.context import Arena
from arena.store import codecs, keys
from benchmarks.replays import play
from benchmarks.web import fresh_redis
from replays.integrity import ALGORITHM, canonical, seal
from replays.log import MatchLog
from service.app import create_app


def keep_in_redis(client: Any, templates: Sequence[dict[str, Any]], count: int, key: Any) -> None:
    """``count`` logs, the templates in turn, each with its own match id (``bench-{n}``) and
    sealed again, kept as the arena recorded a result before the archive: the zlib form of its
    canonical JSON in its own key, and the match's record. (Each copy's canonical JSON is the
    template's with the match id replaced and the new seal in the old one's place: no JSON is
    parsed or written again per copy.)"""
    parts, fields = [], []
    for template in templates:
        block = canonical({"integrity": template["integrity"]})[1:-1]
        before, after = canonical(template).split(block)
        unsealed = canonical({k: v for k, v in template.items() if k != "integrity"})
        parts.append((template["match_id"].encode(), before, after, unsealed))
        log = MatchLog.from_json(template)
        recorded = codecs.recorded_match_fields(log, finished_at=log.finished_at or "")
        fields.append({**recorded, "created_at": log.started_at})
    pipe = client.pipeline(transaction=False)
    for n in range(count):
        old, before, after, unsealed = parts[n % len(templates)]
        new = f"bench-{n}".encode()
        body = unsealed.replace(old, new)
        seal_block = {
            "sha256": hashlib.sha256(body).hexdigest(),
            "algorithm": ALGORITHM,
            "key_id": "bench",
            "signature": base64.b64encode(key.sign(body)).decode(),
        }
        sealed = (
            before.replace(old, new)
            + canonical({"integrity": seal_block})[1:-1]
            + after.replace(old, new)
        )
        pipe.set(keys.replay(new.decode()), zlib.compress(sealed, 9))
        pipe.hset(keys.match(new.decode()), mapping=fields[n % len(templates)])
        if n % 200 == 199:
            pipe.execute()
    pipe.execute()


def memory(client: Any) -> dict[str, int]:
    info = client.info("memory")
    return {name: int(info[name]) for name in ("used_memory", "used_memory_dataset")}


def latencies(get: Callable[[str], Any], match_ids: Sequence[str]) -> list[float]:
    """Milliseconds of each request, each match once."""
    found = []
    for match_id in match_ids:
        start = time.perf_counter()
        answer = get(f"/api/matches/{match_id}/replay")
        found.append((time.perf_counter() - start) * 1000)
        assert answer.status_code == 200, answer.data
    return found


def run(args: argparse.Namespace) -> list[str]:
    with (
        tempfile.TemporaryDirectory(prefix="gz-archive-bench-") as tmp,
        fresh_redis(Path(tmp), fsync="no") as (server, store, bench_keys),
    ):
        config = Config(
            redis_url=server.url,
            secret_key=bench_keys.secret_key.decode(),
            replay_key_path=bench_keys.key_path,
            archive=str(bench_keys.archive),
            replay_cache_s=0,
            read_limit="",  # every replay read from one address
        )
        templates = [
            seal(log.to_json(), bench_keys.key, key_id="bench")
            for log in play(args.templates, args.seed)
        ]
        hands = sum(len(t["hands"]) for t in templates) / len(templates)
        keep_in_redis(store.redis, templates, args.logs, bench_keys.key)
        app = create_app(config).test_client()
        sample = [f"bench-{n}" for n in range(0, args.logs, max(1, args.logs // args.requests))]
        sample = sample[: args.requests]
        from_redis = latencies(app.get, sample)
        before = memory(store.redis)
        arena = Arena.from_config(config)
        start = time.perf_counter()
        done = archiving.migrate(arena, archiving.to_migrate(arena), each=lambda _: None)
        migrate_s = time.perf_counter() - start
        assert done.moved == args.logs and not done.left
        after = memory(store.redis)
        archived = [p.stat().st_size for p in bench_keys.archive.glob("??/*")]
        from_archive = latencies(app.get, sample)
        for template in templates:  # matches recorded since, in the stored form
            assert store.record_result(template["match_id"], template)
        recorded = [templates[n % len(templates)]["match_id"] for n in range(args.requests)]
        stored_form = latencies(app.get, recorded)
        cached_app = create_app(dataclasses.replace(config, replay_cache_s=600)).test_client()
        latencies(cached_app.get, recorded)  # the first read fills the cache
        from_cache = latencies(cached_app.get, recorded)
    return report(
        args,
        hands=hands,
        memory_before=before,
        memory_after=after,
        migrate_s=migrate_s,
        archived=archived,
        rows={
            "kept in Redis (before the migration)": from_redis,
            "archive: a migrated log (zlib form)": from_archive,
            "archive: a new log (stored form, rebuilt)": stored_form,
            "the Redis cache (a log read again)": from_cache,
        },
    )


def report(
    args: argparse.Namespace,
    *,
    hands: float,
    memory_before: dict[str, int],
    memory_after: dict[str, int],
    migrate_s: float,
    archived: list[int],
    rows: dict[str, list[float]],
) -> list[str]:
    mib = 1024 * 1024
    used_before, used_after = memory_before["used_memory"], memory_after["used_memory"]
    lines = [
        f"{args.logs:,} logs ({args.templates} random matches of seed {args.seed}, "
        f"{hands:.1f} hands a log on average), kept in Redis, then migrated",
        "",
        f"  {'Redis INFO memory':<40}{'before':>12}{'after':>12}{'after/before':>14}",
    ]
    for name in ("used_memory", "used_memory_dataset"):
        a, b = memory_before[name], memory_after[name]
        lines.append(f"  {name + ' (MiB)':<40}{a / mib:>12,.1f}{b / mib:>12,.1f}{b / a:>13.3f}x")
    lines += [
        f"  freed per log: {(used_before - used_after) / args.logs:,.0f} bytes; "
        f"the archive: {len(archived):,} files, {sum(archived) / mib:,.1f} MiB",
        f"  migration: {migrate_s:.1f} s, {args.logs / migrate_s:,.0f} logs/s",
        "",
        f"  {'GET /api/matches/{id}/replay, from':<44}"
        f"{'median ms':>10}{'p95 ms':>9}{'vs Redis':>10}",
    ]
    base = statistics.median(next(iter(rows.values())))
    for name, found in rows.items():
        median = statistics.median(found)
        p95 = statistics.quantiles(found, n=20)[-1]
        lines.append(f"  {name:<44}{median:>10.2f}{p95:>9.2f}{median / base:>9.2f}x")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=10_000)
    parser.add_argument("--templates", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    print("\n".join(run(parser.parse_args())))


if __name__ == "__main__":
    main()

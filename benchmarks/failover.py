"""What a Redis failover costs a tournament: the primary SIGKILLed mid-tournament, Sentinel
promotes the replica, and the matches are counted.

    python -m benchmarks.failover                  # the tests' recovery settings
    python -m benchmarks.failover --procfile       # the Procfile's (the defaults)

On loopback (``benchmarks.sentinels``): a primary and its replica, both append-only with
``appendfsync always``, three Sentinels (quorum 2, ``down-after-milliseconds`` ``--down-ms``),
all with a password; ``--workers`` real ``python -m workers worker`` processes with
``REDIS_URL=redis+sentinel://…``; a tournament of four HTTP bots (the SDK's LowestCard on
loopback) and house Easy, one hand a match. When ``--kill-at`` of its matches are recorded the
primary is killed with SIGKILL, and the run reports:

- **lost**: results the primary held just before the kill (read from it) that the promoted
  replica does not have: acknowledged writes that asynchronous replication had not carried;
- **played again**: matches whose job ran more than once (rq's retries);
- **interrupted**: matches being played at the kill, and when each was recorded after it;
- the times from the kill to the promotion, to the first result recorded after it, and to the
  tournament's end, against the tournament's pace before the kill;
- at the end, every planned match recorded once (the tournament's count, the standings).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from cryptography.fernet import Fernet
from rq.job import Job

from arena.archive import DirectoryArchive
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import MatchStatus, TournamentStatus
from arena.store import Store
from benchmarks.arena import ROOT, start_bot_server, stop_server
from benchmarks.memory import start_tournament
from benchmarks.sentinels import Cluster, sentinel_cluster
from benchmarks.web import Keys
from replays.integrity import generate_key, private_key_pem

POLL_S = 0.02
TESTS_RECOVERY = {
    "GONGZHU_WORKER_TTL_S": "16",
    "GONGZHU_JOB_HEARTBEAT_S": "1",
    "GONGZHU_ABANDONED_AFTER_S": "2",
    "GONGZHU_MAINTENANCE_INTERVAL_S": "1",
}
"""tests/workers/conftest.py's: a dead worker's job is retried within about 4 s."""


@dataclass
class Outcome:
    lags: list[int]
    """Bytes of the replication stream the replica had not yet applied, sampled before the kill
    (at most: the replica is read first)."""
    waits: list[tuple[float, float]]
    """A write's round trip, then the same write followed by ``WAIT 1``, in seconds."""
    matches: int
    before_kill: dict[str, int]
    """Recorded match → its result's points total (a fingerprint), read from the primary just
    before the kill."""
    running_at_kill: list[str]
    repl_lag_bytes: int
    """How far the replica's replication offset was behind the primary's just before the kill."""
    pace_s: float
    """Seconds a match before the kill (the tournament's rate with these workers)."""
    promoted_s: float
    lost: list[str]
    first_record_s: float
    interrupted_recorded_s: list[float]
    done_s: float
    played_again: int
    changed: int
    """Results lost and played again that came out differently."""
    recorded: int
    standings_matches: int
    tournament_done: int


def _matches(store: Any, tid: str) -> list[Any]:
    return list(store.list_matches(page=1, per_page=10_000, tournament_id=tid).items)


def _fingerprint(match: Any) -> int:
    return hash(repr(match.result))


def _retry(call: Any) -> Any:
    """``call()`` again until Redis answers (during the failover it does not)."""
    while True:
        try:
            return call()
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            time.sleep(POLL_S)


def run(args: argparse.Namespace) -> Outcome:
    """Set up, play the tournament through the failover, and count."""
    with (
        tempfile.TemporaryDirectory(prefix="gz-failover-") as tmp,
        sentinel_cluster(
            Path(tmp), password=secrets.token_urlsafe(16), down_ms=args.down_ms
        ) as cluster,
    ):
        key = generate_key()
        keys = Keys(Fernet.generate_key(), key, Path(tmp) / "replay-key.pem")
        keys.key_path.write_bytes(private_key_pem(key))
        archive = DirectoryArchive(keys.archive)
        store = Store.from_url(cluster.url, keys.secret_key, archive=archive)
        bot_server, bot_url = start_bot_server()
        env = {
            **os.environ, **keys.environment(cluster.url),
            "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "1", "PYTHONPATH": str(ROOT),
            **({} if args.procfile else TESTS_RECOVERY),
        }  # fmt: skip
        with (Path(tmp) / "workers.log").open("wb") as log:
            workers = [
                subprocess.Popen(
                    [sys.executable, "-m", "workers", "worker"],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
                for _ in range(args.workers)
            ]
            try:
                tid = start_tournament(store, bot_url, args.matches, 1)
                return measure(store, cluster, tid, args.kill_at)
            finally:
                _stop(workers)
                stop_server(bot_server)


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each worker and its work horse, SIGKILL to those still there after 30 s."""
    for worker in workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def _offset(client: redis.Redis, field: str) -> int:
    info: dict[str, Any] = client.info("replication")  # type: ignore[assignment]
    return int(info[field])


def _write_and_wait(primary: redis.Redis) -> tuple[float, float]:
    """The round trip of one write, and of one write and ``WAIT 1 1000`` (until the replica
    has it)."""
    start = time.perf_counter()
    primary.set("gz:bench:probe", start)
    written = time.perf_counter()
    primary.set("gz:bench:probe", written)
    replicas = primary.wait(1, 1000)
    assert replicas == 1, "the replica did not acknowledge within 1 s"
    return written - start, time.perf_counter() - written


def measure(store: Store, cluster: Cluster, tid: str, kill_at: float) -> Outcome:
    """Wait for ``kill_at`` of the matches, kill the primary, follow the tournament to its
    end."""
    primary = redis.Redis.from_url(cluster.primary.url)
    replica = redis.Redis.from_url(cluster.replica.url)
    began = time.monotonic()
    lags, waits = [], []
    while True:
        tournament = store.get_tournament(tid)
        assert tournament is not None
        if tournament.total and tournament.done >= kill_at * tournament.total:
            break
        behind = _offset(replica, "slave_repl_offset")
        lags.append(_offset(primary, "master_repl_offset") - behind)
        waits.append(_write_and_wait(primary))
        time.sleep(POLL_S)
    matches = _matches(store, tid)
    before = {m.id: _fingerprint(m) for m in matches if m.status is MatchStatus.DONE}
    running = [m.id for m in matches if m.status is MatchStatus.RUNNING]
    lag = _offset(primary, "master_repl_offset") - _offset(replica, "master_repl_offset")
    pace_s = (time.monotonic() - began) / max(1, len(before))
    cluster.primary.kill()
    killed = time.monotonic()
    while cluster.primary_port() != cluster.replica.port:
        time.sleep(POLL_S)
    promoted_s = time.monotonic() - killed
    after = {m.id: m for m in _retry(lambda: _matches(store, tid))}
    lost = [mid for mid in before if after[mid].status is not MatchStatus.DONE]
    first_record_s = 0.0
    recorded_at: dict[str, float] = {}
    while True:
        tournament = _retry(lambda: store.get_tournament(tid))
        now = time.monotonic() - killed
        for match in _retry(lambda: _matches(store, tid)):
            if match.status is MatchStatus.DONE and match.id not in recorded_at:
                recorded_at[match.id] = now
                if match.id not in before and not first_record_s:
                    first_record_s = now
        if tournament.status is TournamentStatus.DONE:
            break
        time.sleep(POLL_S)
    final = {m.id: m for m in _matches(store, tid)}
    again = [
        mid
        for mid in final
        if Job.fetch(match_job_id(mid), connection=store.redis).retries_left != MATCH_RETRIES
    ]
    return Outcome(
        lags=lags,
        waits=waits,
        matches=tournament.total,
        before_kill=before,
        running_at_kill=running,
        repl_lag_bytes=lag,
        pace_s=pace_s,
        promoted_s=promoted_s,
        lost=lost,
        first_record_s=first_record_s,
        interrupted_recorded_s=[recorded_at[mid] for mid in running],
        done_s=time.monotonic() - killed,
        played_again=len(again),
        changed=sum(1 for mid in lost if _fingerprint(final[mid]) != before[mid]),
        recorded=sum(1 for m in final.values() if m.status is MatchStatus.DONE),
        standings_matches=sum(s.matches for s in store.standings(tid)),
        tournament_done=tournament.done,
    )


def report(outcome: Outcome, args: argparse.Namespace) -> None:
    o = outcome
    settings = "the Procfile's" if args.procfile else "the tests'"
    print(
        f"\nA Redis failover mid-tournament: {o.matches} one-hand matches, {args.workers} "
        f"workers, primary SIGKILLed after {len(o.before_kill)} results; Sentinel "
        f"down-after {args.down_ms} ms; {settings} recovery settings"
    )
    interrupted = ", ".join(f"{s:.1f}" for s in o.interrupted_recorded_s) or "none"
    lags = sorted(o.lags)
    write_s = statistics.median(w for w, _ in o.waits) * 1000
    wait_s = statistics.median(w for _, w in o.waits) * 1000
    rows = [
        (
            f"replica behind the primary, {len(lags)} samples before the kill",
            f"median {lags[len(lags) // 2]:,}, max {lags[-1]:,} bytes",
        ),
        ("replica behind the primary just before the kill", f"{o.repl_lag_bytes} bytes"),
        ("a write's round trip / with WAIT 1 (median)", f"{write_s:.2f} / {wait_s:.2f} ms"),
        ("results lost (held by the primary, not by the promoted replica)", f"{len(o.lost)}"),
        ("  of which played again with a different result", f"{o.changed}"),
        ("matches played again (their job ran more than once)", f"{o.played_again}"),
        ("matches being played at the kill", f"{len(o.running_at_kill)}"),
        ("  recorded, seconds after the kill", interrupted),
        ("kill → replica promoted (Sentinel)", f"{o.promoted_s:.1f} s"),
        ("kill → first new result recorded", f"{o.first_record_s:.1f} s"),
        ("kill → tournament done", f"{o.done_s:.1f} s"),
        ("pace before the kill", f"{o.pace_s:.2f} s a match"),
        (
            "recorded / planned / tournament's count / standings ÷ 4",
            f"{o.recorded} / {o.matches} / {o.tournament_done} / {o.standings_matches / 4:g}",
        ),
    ]
    print("| figure | value |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=60, help="matches in the tournament")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--kill-at", type=float, default=0.4, help="share recorded at the kill")
    parser.add_argument("--down-ms", type=int, default=1000, help="Sentinel's down-after")
    parser.add_argument(
        "--procfile", action="store_true", help="the Procfile's recovery settings (slow)"
    )
    args = parser.parse_args(argv)
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    outcome = run(args)
    report(outcome, args)


if __name__ == "__main__":
    main()

"""The chaos run: a tournament of 40 short matches on 2 real workers while a driver SIGKILLs a
random work horse, worker (with its horse; started again at once, as a process manager would)
or Redis (started again on its append-only file after up to 3 s) every few seconds. It must
complete with every match recorded exactly once and every replay verified.

Run it on its own (about two minutes)::

    .venv/bin/python -m tests.reliability.chaos          # prints its figures
    .venv/bin/pytest -m chaos tests/reliability          # the same run as a test

It is not in the default test run (``-m "not chaos"`` in pyproject.toml).
"""

from __future__ import annotations

import random
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import redis
from rq import Worker
from rq.job import Job, JobStatus

from arena.config import Config
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import Format, MatchStatus, TournamentStatus
from arena.redis_server import RedisProcess, start_redis
from arena.store import Store
from tests.reliability.accounting import Accounting, account
from tests.workers.conftest import arena_config, start_worker_process, stop_workers
from tests.workers.crashes import children, sigkill
from tests.workers.test_worker_tournaments import Deliberate, _logs, _register, _start

WORKERS = 2
KILLS = 12
"""At most this many kills, ..."""
KILLING_S = 90.0
"""... within this long from the first match."""
PAUSE_S = (2.0, 5.0)
"""The driver waits a random time in this range between two kills."""
REDIS_DOWN_S = (0.0, 3.0)
FINISH_S = 120.0
"""The tournament must be done this long after the last kill."""


class Quick(Deliberate):
    """The lowest card after 20 ms: a one-hand match lasts about a second."""

    name = "quick"
    delay_s: ClassVar[float] = 0.02


@dataclass
class Kill:
    victim: str
    """``horse``, ``worker`` (with its horse) or ``redis``."""
    at_s: float
    """When, from the first match."""
    interrupted: dict[str, int]
    """The matches being played by the killed horses (all busy workers' when Redis is the
    victim), each with the retries its job had left."""
    requeued_s: float | None = None
    """How long until each of their jobs was queued again (or had finished after all)."""
    recorded_s: float | None = None
    """How long until the last of them was recorded."""


@dataclass
class ChaosRun:
    kills: list[Kill]
    accounting: Accounting
    replays_verified: int
    replayed_matches: int
    """Matches whose job ran more than once (a retry after a crash)."""
    seconds: float
    seed: int

    def figures(self) -> dict[str, Any]:
        requeued = [k.requeued_s for k in self.kills if k.requeued_s is not None]
        recorded = [k.recorded_s for k in self.kills if k.recorded_s is not None]
        return {
            "seed": self.seed,
            "kills": dict(Counter(k.victim for k in self.kills)),
            "matches_interrupted": sum(len(k.interrupted) for k in self.kills),
            "queued_again_s_median": _median(requeued),
            "queued_again_s_max": _max(requeued),
            "recorded_s_median": _median(recorded),
            "recorded_s_max": _max(recorded),
            "matches_replayed": self.replayed_matches,
            "replays_verified": self.replays_verified,
            **asdict(self.accounting),
            "seconds": round(self.seconds),
        }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _max(values: list[float]) -> float | None:
    return round(max(values), 1) if values else None


class Arena:
    """The run's Redis and workers, which the driver kills and starts again."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.redis: RedisProcess = start_redis(directory / "redis", fsync="always")
        self.config: Config = arena_config(self.redis.url, directory)
        self.workers: list[subprocess.Popen[bytes]] = []
        self.everyone: list[subprocess.Popen[bytes]] = []

    def start_worker(self) -> None:
        self.workers.append(start_worker_process(self.config))
        self.everyone.append(self.workers[-1])

    def kill(self, victim: str, rng: random.Random) -> dict[str, int] | None:
        """SIGKILL the victim (a busy worker's, when it is a horse or a worker) and start it
        again; the matches it interrupted (:attr:`Kill.interrupted`), or None if there was no
        such victim (no worker busy)."""
        playing = self._playing()
        if victim == "redis":
            self.redis.kill()
            time.sleep(rng.uniform(*REDIS_DOWN_S))
            self.redis = start_redis(self.redis.directory, port=self.redis.port, fsync="always")
            return dict(playing.values())
        busy = [w for w in self.workers if w.pid in playing and children(w.pid)]
        if not busy:
            return None
        worker = rng.choice(busy)
        horses = children(worker.pid)
        for pid in horses if victim == "horse" else [worker.pid, *horses]:
            sigkill(pid)
        if victim == "worker":
            worker.wait(5)
            self.workers.remove(worker)
            self.start_worker()
        return dict([playing[worker.pid]])

    def _playing(self) -> dict[int, tuple[str, int]]:
        """By worker pid: the match its horse plays and the retries its job has left."""
        connection = redis.Redis.from_url(self.redis.url)
        playing = {}
        for worker in Worker.all(connection=connection):
            job_id = worker.get_current_job_id()
            if job_id and job_id.startswith("match-"):
                job = Job.fetch(job_id, connection=connection)
                playing[worker.pid] = (job_id.removeprefix("match-"), job.retries_left or 0)
        return playing

    def stop(self) -> None:
        stop_workers(self.everyone)
        self.redis.stop()


def _running(store: Store, tournament_id: str) -> bool:
    matches = store.list_matches(page=1, per_page=100, tournament_id=tournament_id).items
    return any(m.status is MatchStatus.RUNNING for m in matches)


def _recorded(store: Store, match_ids: list[str]) -> bool:
    statuses = store.match_statuses(match_ids)
    return all(statuses.get(m) is MatchStatus.DONE for m in match_ids)


def _requeued(store: Store, interrupted: dict[str, int]) -> bool:
    for match_id, retries_left in interrupted.items():
        job = Job.fetch(match_job_id(match_id), connection=store.redis)
        if job.retries_left == retries_left and job.get_status() != JobStatus.FINISHED:
            return False
    return True


def _settled(store: Store, tournament_id: str, kills: list[Kill], start: float) -> bool:
    """Note each kill's recovery as it happens; True when the tournament is done."""
    for kill in kills:
        since = round(time.monotonic() - start - kill.at_s, 1)
        if kill.interrupted and kill.requeued_s is None and _requeued(store, kill.interrupted):
            kill.requeued_s = since
        if kill.interrupted and kill.recorded_s is None and _recorded(store, [*kill.interrupted]):
            kill.recorded_s = since
    tournament = store.get_tournament(tournament_id)
    return tournament is not None and tournament.status is TournamentStatus.DONE


def _patiently(call: Any, *args: Any) -> Any:
    """``call(*args)``, waiting out a Redis the driver has just killed."""
    while True:
        try:
            return call(*args)
        except redis.ConnectionError:
            time.sleep(0.1)


def chaos_run(seed: int | None = None) -> ChaosRun:
    seed = random.randrange(1 << 30) if seed is None else seed
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as directory, ExitStack() as stack:
        arena = Arena(Path(directory))
        stack.callback(arena.stop)
        store = Store.from_config(arena.config)
        bots = [_register(store, stack, Quick, f"quick-{i}") for i in range(2)]
        participants = [*bots, "house:easy", "house:normal", "house:hard"]
        fmt = Format(duplicate=True, matches_per_table=2, hands=1)
        tournament_id = _start(arena.config, store, participants, format=fmt)
        for _ in range(WORKERS):
            arena.start_worker()
        while not _running(store, tournament_id):
            time.sleep(0.05)
        start = time.monotonic()
        kills: list[Kill] = []
        done = False
        while not done and len(kills) < KILLS and time.monotonic() - start < KILLING_S:
            next_kill = time.monotonic() + rng.uniform(*PAUSE_S)
            while not done and time.monotonic() < next_kill:
                time.sleep(0.1)
                done = _patiently(_settled, store, tournament_id, kills, start)
            if done:
                break
            victim = rng.choice(["horse", "worker", "redis"])
            at_s = round(time.monotonic() - start, 1)
            interrupted = _patiently(arena.kill, victim, rng)
            if interrupted is not None:
                kills.append(Kill(victim, at_s, interrupted))
        deadline = time.monotonic() + FINISH_S
        while not _patiently(_settled, store, tournament_id, kills, start):
            if time.monotonic() > deadline:
                raise AssertionError(f"the chaos run (seed {seed}) did not finish: {kills}")
            time.sleep(0.1)
        matches = store.list_matches(page=1, per_page=100, tournament_id=tournament_id).items
        replayed = sum(
            1
            for m in matches
            if Job.fetch(match_job_id(m.id), connection=store.redis).retries_left != MATCH_RETRIES
        )
        return ChaosRun(
            kills=kills,
            accounting=account(store, tournament_id),
            replays_verified=len(_logs(arena.config, store, tournament_id)),
            replayed_matches=replayed,
            seconds=time.monotonic() - start,
            seed=seed,
        )


def main() -> None:
    run = chaos_run()
    for kill in run.kills:
        print(
            f"{kill.at_s:6.1f} s  {kill.victim:<6}  interrupted {sorted(kill.interrupted)}: "
            f"queued again after {kill.requeued_s} s, recorded after {kill.recorded_s} s"
        )
    for name, value in run.figures().items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()

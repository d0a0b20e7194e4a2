"""What a Redis restart costs the matches in flight, under the run command.

    python -m benchmarks.redis_restart               # Redis down 2 s as the matches end
    python -m benchmarks.redis_restart --down 40     # longer than the workers ride out (30 s)

``gongzhu run`` (the Procfile's processes and recovery settings: two workers playing up to 64
matches each, the web service, cron) against a Redis of the benchmark's own (append-only,
``appendfsync always``, named by ``REDIS_URL`` as an operator's would be), with its demo (which
lets the workers call bots on loopback; the benchmark waits until the demo's tournament is
over) and no ladder rounds (``GONGZHU_LADDER_INTERVAL_S=0``: only the benchmark's matches
run). Four bots over HTTP (the SDK's LowestCard answering after ``--think`` ms, served by the
benchmark) and house Easy play two tournaments of 20 one-hand matches, all in flight at once:
the first undisturbed, the second with Redis SIGKILLed ``--at`` seconds after its matches all
started, and started again on its data ``--down`` seconds later. Reported, for each
tournament: each match's time from being seen running to being recorded; the matches played
again (their job ran more than once); the faults in the bots' decisions; every match recorded
once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import redis
from rq import Queue
from rq.job import Job

from arena.config import Config
from arena.queue import MATCH_RETRIES, enqueue_tournament, match_job_id
from arena.records import Format, MatchStatus, TournamentSpec, TournamentStatus
from arena.redis_server import RedisProcess, free_port, start_redis
from arena.settings import load_settings
from arena.store import Store
from benchmarks.arena import ROOT, SECRET
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status
from bot_sdk.server import create_server, make_app
from referee import Card, Observation, Rules
from replays.integrity import unpack
from replays.log import TimeControl
from replays.upgrade import read_log

T = TypeVar("T")
POLL_S = 0.05
BOTS = 4
TIME_CONTROL = TimeControl(decision_ms=1000, bank_ms=30_000, fault_limit=5)
"""The ladder's."""


@dataclass
class Round:
    """One tournament's matches, as the benchmark saw them."""

    durations_s: dict[str, float]
    """Match → from first seen running to first seen recorded."""
    in_flight: list[str]
    """The matches running when Redis was killed (all of them, undisturbed: none killed)."""
    played_again: int
    faults: int
    """Decisions of the HTTP bots that were not answered in time and legally."""
    planned: int
    recorded: int
    standings_matches: int


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--down", type=float, default=2.0, help="seconds Redis is down")
    parser.add_argument("--at", type=float, default=4.0, help="seconds after all matches started")
    parser.add_argument("--think", type=int, default=100, help="the bots' ms a decision")
    args = parser.parse_args(argv)
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="gz-redis-restart-") as tmp:
        redis_server = Restartable(start_redis(Path(tmp) / "redis", fsync="always"))
        try:
            with _run_command(Path(tmp), redis_server.current) as arena, _bots(args.think) as url:
                bots = [_bot(arena.store, url, i) for i in range(BOTS)]
                quiet = _play(arena, bots, restart=None)
                restarted = _play(arena, bots, restart=redis_server, at_s=args.at, down_s=args.down)
        finally:
            redis_server.current.stop()
    _report(quiet, restarted, args)


class Restartable:
    """The benchmark's Redis, and when it was last killed."""

    def __init__(self, server: RedisProcess) -> None:
        self.current = server
        self.killed_at = 0.0

    def restart(self, at_s: float, down_s: float) -> None:
        """``at_s`` from now, SIGKILL Redis; ``down_s`` later, start it again on its data."""
        time.sleep(at_s)
        self.current.kill()
        self.killed_at = time.monotonic()
        time.sleep(down_s)
        self.current = start_redis(self.current.directory, port=self.current.port, fsync="always")


# -- the arena, its bots ------------------------------------------------------------------------


@dataclass(frozen=True)
class Arena:
    config: Config
    store: Store


@contextmanager
def _run_command(directory: Path, server: RedisProcess) -> Iterator[Arena]:
    """``gongzhu run`` on ``server`` (its demo over, no ladder); its configuration and store."""
    data = directory / "data"
    env = {
        **os.environ,
        "REDIS_URL": server.url,
        "GONGZHU_LADDER_INTERVAL_S": "0",
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, "-m", "service", "run", "--data-dir", str(data)]
    command += ["--port", str(free_port()), "--hands", "1"]
    with (directory / "run.log").open("wb") as log:
        run = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            _wait_for((data / "arena.json").exists, 60, "the run command's settings")
            settings = load_settings({"GONGZHU_DATA_DIR": str(data)})
            config = Config.from_environment(settings.environment())
            store = Store.from_config(config)
            _wait_for(lambda: _demo_over(store), 300, "the demo's tournament to end")
            yield Arena(config, store)
        finally:
            run.terminate()  # as Ctrl-C does: the run command stops every process
            run.wait(60)


def _demo_over(store: Store) -> bool:
    tournaments = store.list_tournaments(page=1, per_page=10).items
    return bool(tournaments) and all(t.status.is_over for t in tournaments)


class Thinking(LowestCard):
    """The lowest card, after :attr:`think_s`."""

    think_s = 0.1

    def play(self, obs: Observation) -> Card:
        time.sleep(self.think_s)
        return super().play(obs)


@contextmanager
def _bots(think_ms: int) -> Iterator[str]:
    """The bot server (enough threads for every seat of every match at once); its URL."""
    Thinking.think_s = think_ms / 1000
    server = create_server(make_app(Thinking, SECRET), host="127.0.0.1", port=0, threads=96)
    threading.Thread(target=server.run, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}/bot"
    finally:
        server.close()


def _bot(store: Store, url: str, number: int) -> str:
    created, _ = store.create_bot(
        name=f"thinking-{number}-{os.getpid()}",
        endpoint=url,
        description="LowestCard, thinking",
        contact="bench@example.org",
        version="1",
        secret=SECRET,
    )
    return created.id


# -- a tournament, a restart --------------------------------------------------------------------


def _play(
    arena: Arena,
    bots: list[str],
    restart: Restartable | None,
    at_s: float = 0.0,
    down_s: float = 0.0,
) -> Round:
    """Play a tournament of ``bots`` and house Easy (5 tables, 4 rotations: 20 one-hand
    matches), restarting Redis (``at_s`` after every match is running, for ``down_s``) if
    ``restart`` is given."""
    store = arena.store
    spec = TournamentSpec(
        name="redis-restart",
        participants=(*bots, "house:easy"),
        format=Format(duplicate=True, matches_per_table=1, hands=1),
        rules=Rules(),
        time_control=TIME_CONTROL,
    )
    tid = store.create_tournament(spec)
    store.move_tournament(tid, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED])
    enqueue_tournament(Queue(arena.config.queue_name, connection=store.redis), tid)
    running_at: dict[str, float] = {}
    recorded_at: dict[str, float] = {}
    restarting: threading.Thread | None = None
    while True:
        matches = _retry(lambda: store.list_matches(page=1, per_page=100, tournament_id=tid))
        now = time.monotonic()
        for match in matches.items:
            if match.status in {MatchStatus.RUNNING, MatchStatus.DONE}:
                running_at.setdefault(match.id, now)
            if match.status is MatchStatus.DONE:
                recorded_at.setdefault(match.id, now)
        total = _retry(lambda: store.get_tournament(tid)).total  # type: ignore[union-attr]
        everyone = total and len(running_at) == total
        if restart is not None and restarting is None and everyone:
            restarting = threading.Thread(target=restart.restart, args=(at_s, down_s))
            restarting.start()
        if total and len(recorded_at) == total:
            break
        time.sleep(POLL_S)
    in_flight = list(running_at)
    if restarting is not None and restart is not None:
        restarting.join()
        in_flight = [m for m in running_at if recorded_at[m] > restart.killed_at]
    durations = {m: recorded_at[m] - running_at[m] for m in recorded_at}
    return _counted(store, tid, durations, in_flight)


def _counted(store: Store, tid: str, durations: dict[str, float], in_flight: list[str]) -> Round:
    matches = store.list_matches(page=1, per_page=100, tournament_id=tid).items
    again = sum(
        1
        for m in matches
        if Job.fetch(match_job_id(m.id), connection=store.redis).retries_left != MATCH_RETRIES
    )
    faults = 0
    for match in matches:
        blob = store.replay_blob(match.id)
        assert blob is not None
        log = read_log(unpack(blob))
        http = {s.seat for s in log.seats if s.kind == "http"}
        faults += sum(
            1
            for h in log.hands
            for d in h.decisions
            if d.seat in http and d.status is not Status.OK
        )
    tournament = store.get_tournament(tid)
    assert tournament is not None
    return Round(
        durations_s=durations,
        in_flight=in_flight,
        played_again=again,
        faults=faults,
        planned=tournament.total,
        recorded=sum(1 for m in matches if m.status is MatchStatus.DONE),
        standings_matches=sum(s.matches for s in store.standings(tid)),
    )


def _retry(call: Callable[[], T]) -> T:
    """``call()`` again until Redis answers (it does not while it restarts)."""
    while True:
        try:
            return call()
        except (redis.ConnectionError, redis.TimeoutError):
            time.sleep(POLL_S)


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not _retry(condition):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {seconds:g} s waiting for {what}")
        time.sleep(0.2)


# -- the report ---------------------------------------------------------------------------------


def _report(quiet: Round, restarted: Round, args: argparse.Namespace) -> None:
    def spread(durations: list[float]) -> str:
        return f"{statistics.median(durations):.1f} / {max(durations):.1f} s"

    quiet_s = list(quiet.durations_s.values())
    baseline = statistics.median(quiet_s)
    hit = [restarted.durations_s[m] for m in restarted.in_flight]
    added = [d - baseline for d in hit]
    print(
        f"\nRedis SIGKILLed {args.at:g} s after all 20 matches of a tournament started, down "
        f"{args.down:g} s; {BOTS} bots over HTTP thinking {args.think} ms a card and house "
        "Easy, one hand a match; `gongzhu run` with the Procfile's settings"
    )
    both = "undisturbed / restarted"
    rows = [
        ("match, running to recorded, undisturbed (median / max)", spread(quiet_s)),
        ("matches in flight at the restart", f"{len(restarted.in_flight)}"),
        ("  running to recorded (median / max)", spread(hit) if hit else "-"),
        (
            "  delay added (each less the undisturbed median; median / max)",
            f"{statistics.median(added):.1f} / {max(added):.1f} s" if added else "-",
        ),
        (f"matches played again, {both}", f"{quiet.played_again} / {restarted.played_again}"),
        (f"faults in the bots' decisions, {both}", f"{quiet.faults} / {restarted.faults}"),
        (
            "recorded / planned / standings ÷ 4, restarted",
            f"{restarted.recorded} / {restarted.planned} / {restarted.standings_matches / 4:g}",
        ),
    ]
    print("| figure | value |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()

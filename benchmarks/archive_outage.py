"""What a short archive outage costs, under the README's run command: the arena's directory
archive taken away for ``--outage-s`` seconds while a tournament and the ladder play.

    python -m benchmarks.archive_outage                 # the arena as it runs by default
    python -m benchmarks.archive_outage --hold-mb 0     # no log held in Redis: matches fail

``gongzhu run`` (its own Redis, the web service, two workers, cron, the demo: three example
bots entered in the ladder, which plays every minute) in a fresh data directory, with the
Procfile's settings. Once the demo has played its tournament and the ladder has seated its
first tables, a tournament of the three demo bots and house Easy and Normal (20 matches of
``--hands`` hands) is started; when
``--in-flight`` of its matches are being played, the archive's directory is moved aside and a
file put in its place (what a lost mount looks like: nothing can be written there, whoever
asks), and ``--outage-s`` later put back. The run then waits, up to ``--wait-s``, until the
tournament and every ladder table are over and no log waits in Redis, polling the store and
``/ready`` every 0.2 s, and reports:

- the matches (the tournament's and the ladder's) recorded during the outage, and the most
  logs held in Redis at once;
- the matches that failed (their job out of runs) and those played more than once (their job
  run again, or the match queued again by the recovery);
- what ``/ready`` said during the outage, and how long after the archive came back the logs
  held in Redis had all moved into it;
- the tournament's and the ladder tables' final statuses, and when the tournament ended.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import requests
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from arena.config import Config
from arena.queue import MATCH_RETRIES, enqueue_tournament, match_job_id
from arena.records import Format, MatchStatus, TournamentSpec, TournamentStatus
from arena.redis_server import free_port
from arena.store import Store
from benchmarks.arena import ROOT
from referee import Rules
from replays.log import TimeControl

POLL_S = 0.2


class DirectoryOutage:
    """The directory archive at ``root`` taken away (:meth:`begin`: moved aside, a file in its
    place, which is what a lost mount or a failed disk looks like to the arena, and stops root
    too, whom permissions do not) and put back (:meth:`end`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.aside = root.with_name(root.name + ".away")

    def begin(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.rename(self.aside)
        self.root.write_bytes(b"")  # in the way: nothing can be made under it

    def end(self) -> None:
        self.root.unlink()
        self.aside.rename(self.root)


@dataclass
class Seen:
    """What the polls saw."""

    statuses: dict[str, MatchStatus] = field(default_factory=dict)
    runs: Counter[str] = field(default_factory=Counter)
    """Runs of each match's job seen so far: those of its jobs before each time it was queued
    again, and its current job's."""
    failed: set[str] = field(default_factory=set)
    recorded_in_outage: set[str] = field(default_factory=set)
    most_held: int = 0
    ready: Counter[str] = field(default_factory=Counter)
    """/ready's status during the outage, by answer."""
    in_flight: list[str] = field(default_factory=list)
    """The tournament's matches being played when the archive went."""
    drained_after: float | None = None
    """When the last log held in Redis had moved into the archive (after it was back)."""
    ended_after: float | None = None
    """When the tournament was done, from when the archive was back (negative: before)."""
    tournament: str = ""
    """The tournament's status and its matches done and planned, at the end."""
    tables: Counter[str] = field(default_factory=Counter)
    """The ladder tables by their status at the end."""

    @property
    def played_again(self) -> list[str]:
        return sorted(m for m, runs in self.runs.items() if runs > 1)


def start_arena(data: Path, port: int, env: dict[str, str], hands: int) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "service", "run", "--data-dir", str(data), "--port",
               str(port), "--redis-port", str(free_port()), "--hands", str(hands)]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    assert process.stdout is not None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if "Ctrl-C stops it" in line:
            return process
    os.killpg(process.pid, signal.SIGKILL)
    raise SystemExit("gongzhu run did not start its demo within 300 s")


def start_tournament(store: Store, config: Config, hands: int) -> str:
    bots = [bot.id for bot in store.list_bots(page=1, per_page=10).items]
    spec = TournamentSpec(
        name="outage",
        participants=(*bots, "house:easy", "house:normal"),
        format=Format(duplicate=True, matches_per_table=1, hands=hands),
        rules=Rules(),
        time_control=TimeControl(2000, 30_000, 5),
    )
    tid = store.create_tournament(spec)
    store.move_tournament(tid, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED])
    enqueue_tournament(Queue(config.queue_name, connection=store.redis), tid)
    return tid


def watched(store: Store, tournament_id: str) -> list[str]:
    """The tournament's and the ladder tables' ids."""
    tables = [t.id for t in store.list_tournaments(page=1, per_page=100, ladder=True).items]
    return [tournament_id, *tables]


def poll(store: Store, tournaments: list[str], seen: Seen, url: str, outage: bool) -> int:
    """One look at every match of ``tournaments``; returns the logs held in Redis."""
    heals = store.heals()
    for tid in tournaments:
        for match in store.list_matches(page=1, per_page=100, tournament_id=tid).items:
            before = seen.statuses.get(match.id)
            seen.statuses[match.id] = match.status
            if match.status is MatchStatus.FAILED:
                seen.failed.add(match.id)
            if outage and match.status is MatchStatus.DONE and before is not MatchStatus.DONE:
                seen.recorded_in_outage.add(match.id)
            try:
                job = Job.fetch(match_job_id(match.id), connection=store.redis)
            except NoSuchJobError:
                continue
            started = job.get_status() not in (JobStatus.QUEUED, JobStatus.DEFERRED)
            runs = MATCH_RETRIES - (job.retries_left or 0) + started  # the current job's
            failed_jobs = heals.get(match.id, (0, 0.0))[0]  # each ran 1 + MATCH_RETRIES times
            runs += failed_jobs * (1 + MATCH_RETRIES)
            seen.runs[match.id] = max(seen.runs[match.id], runs)
    held = store.held_size()[0]
    seen.most_held = max(seen.most_held, held)
    if outage:
        with contextlib.suppress(requests.RequestException):
            seen.ready[requests.get(f"{url}/ready", timeout=5).json()["status"]] += 1
    return held


def over(store: Store, tournaments: list[str]) -> bool:
    for tid in tournaments:
        tournament = store.get_tournament(tid)
        if tournament is None or tournament.status not in (
            TournamentStatus.DONE,
            TournamentStatus.CANCELLED,
        ):
            return False
    return True


def run(args: argparse.Namespace) -> Seen:
    """The outage, measured on an arena of its own (stopped after)."""
    with tempfile.TemporaryDirectory(prefix="gongzhu-outage-") as tmp:
        data, port = Path(tmp) / "data", free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "GONGZHU_"))}
        if args.hold_mb is not None:
            env["GONGZHU_ARCHIVE_HOLD_MB"] = str(args.hold_mb)
        arena = start_arena(data, port, env, args.hands)
        try:
            return measure(args, data, f"http://127.0.0.1:{port}")
        finally:
            os.killpg(arena.pid, signal.SIGINT)
            try:
                arena.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(arena.pid, signal.SIGKILL)


def measure(args: argparse.Namespace, data: Path, url: str) -> Seen:
    config = Config.from_environment({"GONGZHU_DATA_DIR": str(data)})
    store = Store.from_config(config)
    deadline = time.monotonic() + 180
    while not store.list_tournaments(page=1, per_page=1, ladder=True).items:
        if time.monotonic() > deadline:
            raise SystemExit("the ladder seated no table within 180 s")
        time.sleep(POLL_S)  # its first round: the outage hits its tables too
    tournament_id = start_tournament(store, config, args.hands)
    seen = Seen()
    deadline = time.monotonic() + 120
    while sum(s is MatchStatus.RUNNING for s in seen.statuses.values()) < args.in_flight:
        if time.monotonic() > deadline:
            raise SystemExit("the tournament's matches did not start")
        poll(store, watched(store, tournament_id), seen, url, outage=False)
        time.sleep(POLL_S)
    seen.in_flight = sorted(m for m, s in seen.statuses.items() if s is MatchStatus.RUNNING)
    outage = DirectoryOutage(Path(config.archive))
    outage.begin()
    began = time.monotonic()
    print(f"archive away with {len(seen.in_flight)} matches being played", flush=True)
    while time.monotonic() - began < args.outage_s:
        poll(store, watched(store, tournament_id), seen, url, outage=True)
        tournament = store.get_tournament(tournament_id)
        if tournament and tournament.status is TournamentStatus.DONE and not seen.ended_after:
            seen.ended_after = time.monotonic() - began - args.outage_s  # before it was back
        time.sleep(POLL_S)
    outage.end()
    back = time.monotonic()
    print(f"archive back after {back - began:.1f} s", flush=True)
    deadline = back + args.wait_s
    while time.monotonic() < deadline:
        tournaments = watched(store, tournament_id)
        held = poll(store, tournaments, seen, url, outage=False)
        if held == 0 and seen.drained_after is None:
            seen.drained_after = time.monotonic() - back
        tournament = store.get_tournament(tournament_id)
        done = tournament is not None and tournament.status is TournamentStatus.DONE
        if done and seen.ended_after is None:  # done only now
            seen.ended_after = time.monotonic() - back
        if seen.drained_after is not None and over(store, tournaments):
            break
        time.sleep(POLL_S)
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None
    seen.tournament = f"{tournament.status.value} ({tournament.done}/{tournament.total})"
    for table_id in watched(store, tournament_id)[1:]:
        table = store.get_tournament(table_id)
        seen.tables[table.status.value if table else "missing"] += 1
    return seen


def report(seen: Seen, args: argparse.Namespace) -> None:
    def after(value: float | None) -> str:
        if value is None:
            return "not within the wait"
        return f"{value:.1f} s after it was back" if value >= 0 else "while it was away"

    print(f"archive away {args.outage_s:g} s, GONGZHU_ARCHIVE_HOLD_MB={args.hold_mb}")
    print(f"  matches being played when it went:        {len(seen.in_flight)}")
    print(f"  matches recorded during the outage:       {len(seen.recorded_in_outage)}")
    print(f"  most logs held in Redis at once:          {seen.most_held}")
    print(f"  matches failed (job out of runs):         {len(seen.failed)}")
    print(f"  matches played more than once:            {len(seen.played_again)}")
    print(f"  /ready during the outage:                 {dict(seen.ready)}")
    print(f"  logs held in Redis all archived:          {after(seen.drained_after)}")
    print(f"  tournament: {seen.tournament}, done {after(seen.ended_after)}")
    print(f"  ladder tables: {dict(seen.tables)}")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--outage-s", type=float, default=17.0, help="how long it is away")
    parser.add_argument("--hands", type=int, default=1, help="hands a match")
    parser.add_argument("--in-flight", type=int, default=5, help="matches playing at the start")
    parser.add_argument("--hold-mb", type=int, default=None, help="GONGZHU_ARCHIVE_HOLD_MB")
    parser.add_argument("--wait-s", type=float, default=900.0, help="the longest wait after")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    print(
        f"CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    report(run(args), args)


if __name__ == "__main__":
    main()

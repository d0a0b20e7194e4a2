"""The run command supervises its processes (``service/supervisor.py``), end to end under the
real ``gongzhu run --no-demo``: its own Redis, the Procfile's web, two workers and cron, in a
temporary data directory on free ports, with a pull bot connected by ``python -m bot_sdk
connect`` (the only kind of bot ``--no-demo`` allows: it needs no endpoint on loopback).

One arena serves the module's tests in order: a worker's main process SIGKILLed while its work
horse plays matches (the horse is rq's, in a process group of its own), the web's master
SIGKILLed, the arena's Redis SIGKILLed; each is started again, said on the run command's
output and in its log, and the arena goes on. SIGTERM to the run command then stops every
process. A second arena, whose cron is SIGKILLed each time it starts, stops by itself with
the reason.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from arena.redis_server import free_port
from service.supervisor import CRASH_LIMIT, STOP_WAIT_S, children_of
from tests.e2e.run_support import alive, descendants, processes_of
from tests.workers.crashes import wait_for

START_TIMEOUT_S = 120
BOT = "bot_sdk.examples.lowest_card:LowestCard"


@dataclass
class Arena:
    """A running ``gongzhu run``: its process, address, data directory and output so far."""

    process: subprocess.Popen[str]
    base: str
    data: Path
    output: list[str] = field(default_factory=list)

    @property
    def token(self) -> str:
        return (self.data / "operator-token").read_text().strip()

    def said(self, pattern: str, timeout_s: float = 60) -> re.Match[str]:
        """The first line of the run command's output matching ``pattern``, waited for."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.output):
                found = re.search(pattern, line)
                if found:
                    return found
            if self.process.poll() is not None and not self._reading.is_alive():
                break
            time.sleep(0.1)
        raise AssertionError(f"the run command never said {pattern!r}:\n" + "\n".join(self.output))

    def logged(self) -> str:
        return (self.data / "logs" / "arena.log").read_text()

    def pid_of(self, name: str) -> int:
        """The pid of ``name``'s latest start, as the log says it."""
        starts = re.findall(
            rf"\| {re.escape(name)} started(?: again)? \(pid (\d+)\)", self.logged()
        )
        assert starts, f"{name} never started:\n{self.logged()}"
        return int(starts[-1])

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        """An API call, with ``token`` (default: the operator's when it changes something)."""
        token = token or (None if method == "GET" else self.token)
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        response = requests.request(method, self.base + path, headers=headers, timeout=10, **kwargs)
        assert response.ok, (path, response.status_code, response.text)
        return response.json() if response.content else None

    def start_reading(self) -> None:
        self._reading = threading.Thread(target=self._read, daemon=True)
        self._reading.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # read to the end: the pipe never fills
            self.output.append(line.rstrip())


def start_arena(where: Path, *options: str) -> Arena:
    port, redis_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "GONGZHU_"))}
    command = [sys.executable, "-m", "service", "run", "--no-demo", "--data-dir", str(where),
               "--port", str(port), "--redis-port", str(redis_port), *options]  # fmt: skip
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    arena = Arena(process, f"http://127.0.0.1:{port}", where)
    arena.start_reading()
    return arena


def stop_arena(arena: Arena) -> None:
    """Whatever a failed test left running, stopped: the run command's descendants and every
    process with its data directory, its Redis too even if the run command was killed."""
    running = descendants(arena.process.pid)
    if arena.process.poll() is None:
        arena.process.send_signal(signal.SIGTERM)
        try:
            arena.process.wait(3 * STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            arena.process.kill()
    for pid in {*running, *processes_of(arena.data)}:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


class Reads:
    """``path`` read every 50 ms in a thread while the block runs: every failure kept."""

    def __init__(self, arena: Arena, path: str) -> None:
        self._url, self._done = arena.base + path, threading.Event()
        self.ok, self.failures = 0, list[str]()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Reads:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._done.wait(0.05):
            try:
                status = requests.get(self._url, timeout=5).status_code
            except requests.RequestException as error:
                self.failures.append(str(error))
                continue
            if status == 200:
                self.ok += 1
            else:
                self.failures.append(f"answered {status}")


def ready(arena: Arena) -> bool:
    """Whether the arena answers ``/ready`` with 200 (Redis reachable, workers alive)."""
    try:
        return requests.get(arena.base + "/ready", timeout=5).ok
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    running = start_arena(tmp_path_factory.mktemp("supervised") / "data")
    try:
        running.said(r"^Serving ", START_TIMEOUT_S)
        yield running
    finally:
        stop_arena(running)


@pytest.fixture(scope="module")
def pull_bot(arena: Arena) -> Iterator[str]:
    """A pull bot registered through the API and connected: its id (active)."""
    made = arena.call("POST", "/api/bots", json={
        "name": "supervised", "contact": "ops@example.org", "transport": "pull"})  # fmt: skip
    bot_id = made["bot"]["id"]
    env = {**os.environ, "GONGZHU_BOT_TOKEN": made["token"],
           "GONGZHU_BOT_SECRET": made["signing_secret"]}  # fmt: skip
    command = [sys.executable, "-m", "bot_sdk", "connect", BOT, "--arena", arena.base,
               "--bot-id", bot_id]  # fmt: skip
    bot = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(
            lambda: arena.call("GET", f"/api/bots/{bot_id}", made["token"])["status"] == "active",
            60,
            "the bot",
        )
        yield bot_id
    finally:
        bot.terminate()
        bot.wait(10)


def start_tournament(arena: Arena, bot_id: str, hands: int) -> str:
    """A tournament of 4 matches (the bot and the 3 house bots), started: its id."""
    made = arena.call("POST", "/api/tournaments", json={
        "name": "supervised", "format": {"matches_per_table": 1, "hands": hands},
        "participants": [bot_id, "house:easy", "house:normal", "house:hard"]})  # fmt: skip
    arena.call("POST", f"/api/tournaments/{made['id']}/start")
    return str(made["id"])


def playing_worker(arena: Arena, tournament: str) -> tuple[str, int, list[int]]:
    """A worker whose work horse plays the tournament's matches: its name, pid and horse."""
    workers = {name: arena.pid_of(name) for name in ("worker.1", "worker.2")}
    busy: dict[str, list[int]] = {}

    def a_horse_plays() -> bool:
        matches = arena.call("GET", f"/api/matches?tournament={tournament}")["items"]
        busy.update({name: children_of(pid) for name, pid in workers.items()})
        return any(m["status"] == "running" for m in matches) and any(busy.values())

    wait_for(a_horse_plays, 60, "a match played by a work horse")
    name = next(name for name, horses in busy.items() if horses)
    return name, workers[name], busy[name]


def test_a_killed_worker_is_started_again_while_its_horse_finishes_its_matches(
    arena: Arena, pull_bot: str
) -> None:
    tournament = start_tournament(arena, pull_bot, hands=3)
    name, killed, horses = playing_worker(arena, tournament)
    with Reads(arena, f"/api/tournaments/{tournament}") as reads:
        killed_at = time.monotonic()
        os.kill(killed, signal.SIGKILL)
        ended = arena.said(rf"^{name} \(pid {killed}\) ended \(killed by SIGKILL\) after .*; "
                           r"starting it again in 1 s")  # fmt: skip
        again = int(arena.said(rf"^{name} started again \(pid (\d+)\)")[1])
        wait_for(
            lambda: arena.call("GET", f"/api/tournaments/{tournament}")["status"] != "running",
            120, "the tournament",
        )  # fmt: skip
    print(
        f"{name} SIGKILLed: the tournament ended {time.monotonic() - killed_at:.1f} s later; "
        f"{reads.ok} reads of it meanwhile, {len(reads.failures)} failed"
    )
    assert reads.failures == [] and reads.ok > 10, (reads.failures, reads.ok)
    done = arena.call("GET", f"/api/tournaments/{tournament}")
    assert done["status"] == "done", done
    assert done["progress"]["done"] == done["progress"]["total"] == 4, done["progress"]
    assert done["progress"].get("failed", 0) == 0
    matches = arena.call("GET", f"/api/matches?tournament={tournament}")["items"]
    assert sorted(m["status"] for m in matches) == ["done"] * 4
    log = arena.logged()
    assert ended[0] in log and f"{name} started again (pid {again})" in log
    assert alive(again)
    # the orphans finished their matches and ended by themselves (a moment after the last)
    assert all(f"{name} left pid {horse} running" in log for horse in horses), log
    by_themselves = [f"pid {horse}, left by {name}, ended (exit status 0)" for horse in horses]
    wait_for(lambda: all(line in arena.logged() for line in by_themselves), 30, "the horses to end")


def test_a_killed_web_master_is_started_again_with_its_workers_gone(arena: Arena) -> None:
    master = arena.pid_of("web")
    workers = children_of(master)
    assert len(workers) == 2, workers
    killed_at = time.monotonic()
    os.kill(master, signal.SIGKILL)
    arena.said(rf"^web \(pid {master}\) ended \(killed by SIGKILL\) after .*; starting it again")
    # killed with their master's group before that was said: by themselves they would notice
    # within a second, then take seconds to end, holding the port the new master must bind
    wait_for(lambda: not any(alive(pid) for pid in workers), 0.5, "the old workers gone")
    again = int(arena.said(r"^web started again \(pid (\d+)\)")[1])
    wait_for(lambda: ready(arena), 90, "the web back")
    print(f"web SIGKILLed: /ready answered 200 again {time.monotonic() - killed_at:.1f} s later")
    assert alive(again) and len(children_of(again)) == 2


def test_the_arenas_own_redis_killed_is_started_again(arena: Arena) -> None:
    redis_pid = arena.pid_of("redis")
    before = arena.call("GET", "/api/tournaments")["items"]
    killed_at = time.monotonic()
    os.kill(redis_pid, signal.SIGKILL)
    arena.said(rf"^redis \(pid {redis_pid}\) ended \(killed by SIGKILL\) after .*; starting it")
    arena.said(r"^redis started again \(pid \d+\)")
    wait_for(lambda: ready(arena), 90, "Redis back")
    print(f"Redis SIGKILLed: /ready answered 200 again {time.monotonic() - killed_at:.1f} s later")
    assert arena.call("GET", "/api/tournaments")["items"] == before  # append-only: nothing lost


def test_sigterm_stops_every_process_of_the_arena(arena: Arena, pull_bot: str) -> None:
    """Stopped while matches are played, some by the horse of a worker killed just before (an
    orphan), held still (SIGSTOP) so that it outlives the stop's wait whatever its matches do:
    every process ends, that horse too."""
    tournament = start_tournament(arena, pull_bot, hands=12)
    name, killed, horses = playing_worker(arena, tournament)
    os.kill(killed, signal.SIGKILL)
    arena.said(rf"^{name} \(pid {killed}\) ended \(killed by SIGKILL\)")
    for horse in horses:
        os.kill(horse, signal.SIGSTOP)
    running = {*descendants(arena.process.pid), *horses}
    assert len(running) >= 7, running  # redis, web and its 2 workers, 2 workers, cron, horses
    arena.process.send_signal(signal.SIGTERM)
    assert arena.process.wait(2 * STOP_WAIT_S + 10) == 128 + signal.SIGTERM
    arena.said(r"^The arena stops: SIGTERM received\.$")
    left = [pid for pid in {*running, *processes_of(arena.data)} if alive(pid)]
    assert left == [], "processes of the arena left running"
    with pytest.raises(ProcessLookupError):  # nothing left in the run command's group either
        os.killpg(arena.process.pid, 0)


def test_a_process_that_keeps_crashing_stops_the_arena_with_the_reason(tmp_path: Path) -> None:
    """cron SIGKILLed each time it starts: started again after 1, 2, 4 and 8 s, then its
    fifth exit stops the arena (about 20 s, 15 of them the back-off this test is about)."""
    arena = start_arena(tmp_path / "data", "--workers", "1")
    try:
        killed: set[int] = set()
        while arena.process.poll() is None and len(killed) < CRASH_LIMIT:
            try:
                pid = arena.pid_of("cron")
            except (AssertionError, FileNotFoundError):  # not started yet
                continue
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            time.sleep(0.05)
        assert arena.process.wait(60) == 1
        arena.said(
            rf"^cron \(pid \d+\) ended \(killed by SIGKILL\) .*: {CRASH_LIMIT} exits in a row"
        )
        arena.said(rf"^The arena stops: cron keeps crashing \({CRASH_LIMIT} exits in a row\)\.$")
        for delay in (1, 2, 4, 8):
            arena.said(rf"^cron \(pid \d+\) ended .*; starting it again in {delay} s")
        assert "The arena stops: cron keeps crashing" in arena.logged()
        assert processes_of(arena.data) == []
    finally:
        stop_arena(arena)

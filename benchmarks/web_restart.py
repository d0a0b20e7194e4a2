"""A graceful restart of the web process, with and without a pull bot connected: how long the
stopping master takes, the outage a client sees, and when the bot is back.

    python -m benchmarks.web_restart              # 5 restarts of each kind
    python -m benchmarks.web_restart --runs 10

Each restart, on loopback: a fresh Redis and the Procfile's ``web`` line (gunicorn, 2 gevent
workers); for ``websocket`` and ``stream``, one pull bot connected on that channel by
``python -m bot_sdk connect`` (the SDK's LowestCard). Then SIGTERM to gunicorn's master, and a
new master started the moment it exits, on the same port (as a process manager restarting it
does), while this process asks ``/health`` every 20 ms (each on a new connection, 1 s timeout).
For each kind, the median and the largest of the runs:

- stop: from SIGTERM until the master has exited;
- start: from the new master's start until it answers ``/health`` (its workers import the
  arena: the part of the outage no stop can shorten);
- outage: from the first ``/health`` that failed until the first that answered again;
- bye: how many runs the bot was told ``bye`` (``shutdown``), from its log;
- back: from SIGTERM until the bot is connected to the new master.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.pull import BOT, SECRET, _pull_bots, _wait, bot_process
from benchmarks.web import fresh_redis, web_process

KINDS = ("none", "websocket", "stream")
"""No pull bot, or one connected on that channel."""
BYE = "the arena closed the connection (shutdown)"
"""What ``python -m bot_sdk connect`` logs when it is told ``bye`` for a stopping arena."""


@dataclass(frozen=True)
class Restart:
    stop_s: float
    start_s: float
    outage_s: float
    bye: bool | None
    back_s: float | None


@contextmanager
def pull_bot(store: Any, base: str, channel: str, log: Path) -> Iterator[str]:
    """A pull bot connected on ``channel`` by ``python -m bot_sdk connect`` (its output in
    ``log``), once the arena counts it connected: its id."""
    bot_id, token = _pull_bots(store, 1, f"restart-{channel}")[0]
    command = ["connect", BOT, "--arena", base, "--bot-id", bot_id, "--channel", channel]
    env = {"GONGZHU_BOT_SECRET": SECRET, "GONGZHU_BOT_TOKEN": token}
    with bot_process(command, env, log=log):
        _wait(lambda: bool(store.mailbox.connected([bot_id])), 30, "the pull bot")
        yield bot_id


def stop(master: subprocess.Popen[bytes], timeout_s: float = 60) -> float:
    """SIGTERM to gunicorn's master; the seconds until it exited."""
    started = time.monotonic()
    master.send_signal(signal.SIGTERM)
    master.wait(timeout_s)
    return time.monotonic() - started


class Prober:
    """``/health`` every 20 ms in a thread; the outage is from the first failure to the first
    success after it."""

    def __init__(self, base: str) -> None:
        self._url = f"{base}/health"
        self._done = threading.Event()
        self.failed_at: float | None = None
        self.back_at: float | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.is_set():
            asked = time.monotonic()
            try:
                with urllib.request.urlopen(self._url, timeout=1) as response:
                    ok = response.status == 200
            except OSError:
                ok = False
            if not ok and self.failed_at is None:
                self.failed_at = asked
            if ok and self.failed_at is not None and self.back_at is None:
                self.back_at = time.monotonic()
            self._done.wait(0.02)

    def outage(self) -> float:
        _wait(lambda: self.failed_at is None or self.back_at is not None, 60, "/health")
        self._done.set()
        self._thread.join()
        if self.failed_at is None or self.back_at is None:
            return 0.0
        return self.back_at - self.failed_at


def restart(kind: str) -> Restart:
    """One graceful restart of the web process with a pull bot of ``kind`` connected."""
    from arena.redis_server import free_port

    with ExitStack() as stack:
        where = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        server, store, keys = stack.enter_context(fresh_redis(where, fsync="no"))
        port = free_port()
        master, base = stack.enter_context(web_process(server.url, keys, port))
        log = where / "bot.log"
        bot_id = None if kind == "none" else stack.enter_context(pull_bot(store, base, kind, log))
        time.sleep(0.5)  # a quiet moment: every process settled
        prober = Prober(base)
        started = time.monotonic()
        stop_s = stop(master)
        stack.enter_context(web_process(server.url, keys, port))
        start_s = time.monotonic() - started - stop_s
        outage_s = prober.outage()
        if bot_id is None:
            return Restart(stop_s, start_s, outage_s, None, None)
        _wait(lambda: bool(store.mailbox.connected([bot_id])), 60, "the bot back")
        back_s = time.monotonic() - started
        return Restart(stop_s, start_s, outage_s, BYE in log.read_text(), back_s)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="restarts of each kind")
    args = parser.parse_args(argv)
    found: dict[str, list[Restart]] = {kind: [] for kind in KINDS}
    for _ in range(args.runs):  # the kinds interleaved: the machine's load weighs on all alike
        for kind in KINDS:
            found[kind].append(restart(kind))
    print(f"## A graceful restart of the web process ({args.runs} runs each)\n")
    print(
        "| pull bot | stop, median / max | start, median / max | outage, median / max | bye "
        "| back, median / max |"
    )
    print("|---|---|---|---|---|---|")
    for kind, runs in found.items():
        byes = [r.bye for r in runs if r.bye is not None]
        backs = [r.back_s for r in runs if r.back_s is not None]
        print(
            f"| {kind} | {_spread([r.stop_s for r in runs])} | "
            f"{_spread([r.start_s for r in runs])} | {_spread([r.outage_s for r in runs])} | "
            + (f"{sum(byes)}/{len(byes)}" if byes else "—")
            + f" | {_spread(backs) if backs else '—'} |"
        )


def _spread(seconds: list[float]) -> str:
    return f"{statistics.median(seconds):.2f} s / {max(seconds):.2f} s"


if __name__ == "__main__":
    main()

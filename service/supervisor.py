"""The run command's processes, kept running: :class:`Supervisor`.

``gongzhu run`` supervises the Procfile's processes itself. Each of them is built to be lost
alone: a killed worker's match is played again from its deals and recorded once, the workers
and the web ride out a Redis restart, a pull bot reconnects to a restarted web (docs/
RELIABILITY.md). A process manager that stops everything when one process ends (honcho's,
foreman's) turns any such crash, a worker the out-of-memory killer chose, into an outage of
the whole arena. So here a process that ends is started again, and only a signal to the run
command or a process that keeps crashing stops the arena:

- **Back-off.** A process that ends is started again after 1 s, then 2, 4 and 8 s while it
  keeps ending within a minute of its start (:data:`BACKOFF_S`, :data:`STEADY_S`); once it has
  run a minute, its next exit counts as the first again.
- **Giving up.** The :data:`CRASH_LIMIT`-th such exit in a row stops the arena (exit status 1):
  a process that cannot run (its port taken, a broken install, Redis unreachable at its start)
  is not restarted for ever unseen.
- **Process groups.** Each process runs in a session of its own, so that Ctrl-C in a terminal
  reaches the run command alone, which stops the processes in order. When a process ends, what
  it left in its process group (gunicorn's workers without their master) is killed before it is
  started again, and so frees its port.
- **Orphans.** On Linux the run command adopts what its processes leave behind (a child
  subreaper): a work horse whose worker was killed (rq runs it in a process group of its own)
  finishes the matches it has, records them and ends (:mod:`workers.stable`); it is waited for
  and stopped with the rest.
- **Stopping.** SIGINT (Ctrl-C), SIGTERM or SIGHUP: every process is sent SIGTERM (the web
  finishes its requests, a worker its matches), those named last (Redis) once the others are
  gone; whatever runs :data:`STOP_WAIT_S` later is killed. The exit status is 128 + the
  signal's number. The same signal again kills what is left at once.

Every start, exit and restart is a line of the log, beside the processes' output; the exits,
restarts and the reason to stop are also said on the run command's output.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, TextIO

BACKOFF_S = (1.0, 2.0, 4.0, 8.0)
"""How long a process waits to be started again after its first, second, ... exit in a row."""
CRASH_LIMIT = len(BACKOFF_S) + 1
"""The exits in a row that stop the arena: a process that keeps crashing."""
STEADY_S = 60.0
"""A process that ran this long before it ended had not been crashing: its count starts again."""
STOP_WAIT_S = 10.0
"""How long the processes have to stop after SIGTERM before they are killed (per stage)."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_TICK_S = 0.1
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def read_procfile(text: str) -> dict[str, str]:
    """A Procfile's processes, name -> command, in their order (``name: command`` lines; other
    lines, such as ``#`` comments, are not processes)."""
    found = re.finditer(r"^([A-Za-z0-9_-]+):(.+)$", text, re.MULTILINE)
    return {match[1]: match[2].strip() for match in found}


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from ``/proc``; none where there is none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        if int(stat[1]) == pid:
            found.append(int(entry.name))
    return found


def how_it_ended(code: int) -> str:
    """An exit code as ``os.waitstatus_to_exitcode`` gives it, in words."""
    if code >= 0:
        return f"exit status {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


@dataclass
class _Process:
    name: str
    command: str
    popen: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    exits: int = 0
    """Exits in a row, each within :data:`STEADY_S` of its start."""
    due: float | None = 0.0
    """When to start it (monotonic); None while it runs, or once the arena stops."""


class Supervisor:
    """Runs ``processes`` (name -> shell command) with ``env`` in ``cwd`` and keeps them running
    until :meth:`stop` or a stopping signal (see the module's doc). Their output goes to
    ``log``, a line each with its time and the process's name; ``echo`` says the exits, the
    restarts and why the arena stops. ``last``: the processes stopped once the others are gone
    (the Redis they need to finish)."""

    def __init__(
        self,
        processes: Mapping[str, str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        log: TextIO,
        echo: Callable[[str], None],
        last: Collection[str] = (),
    ) -> None:
        self._processes = [_Process(name, command) for name, command in processes.items()]
        self._env, self._cwd, self._log, self._echo = dict(env), cwd, log, echo
        self._last = set(last)
        self._width = max([len("supervisor"), *(len(name) for name in processes)])
        self._orphans: dict[int, str] = {}
        """Processes adopted after their parent ended: pid -> the process that left them."""
        self._adopting = False
        self._lock = threading.Lock()
        """Held while a line is written to the log."""
        self._stopping = threading.Lock()
        self._stop: tuple[str, int] | None = None
        self._hurry = threading.Event()
        self._readers: list[threading.Thread] = []

    def stop(self, why: str, status: int) -> None:
        """Stop the arena (from any thread): say ``why``, exit with ``status``. The first
        reason given is the one kept."""
        with self._stopping:
            if self._stop is None:
                self._stop = (why, status)

    def run(self) -> int:
        """Start the processes and keep them running until the arena stops; then stop them and
        return the exit status."""
        self._adopting = _become_subreaper()
        handlers = {number: signal.signal(number, self._signalled) for number in STOP_SIGNALS}
        try:
            while self._stop is None:
                now = time.monotonic()
                for process in self._processes:
                    if process.due is not None and process.due <= now:
                        self._start(process)
                self._reap()
                time.sleep(_TICK_S)
        finally:  # on an error of its own too: no process left running unsupervised
            why, status = self._stop or ("the run command failed", 1)
            self._say(f"The arena stops: {why}.")
            self._stop_all()
            for number, handler in handlers.items():
                signal.signal(number, handler)
            for reader in self._readers:
                reader.join(timeout=2)
        return status

    def _signalled(self, number: int, frame: FrameType | None) -> None:
        if self._stop is not None:
            self._hurry.set()  # asked again: kill what is left
            return
        name = signal.Signals(number).name
        why = f"{'Ctrl-C, ' if number == signal.SIGINT else ''}{name} received"
        self._stop = (why, 128 + number)  # no lock here: the interrupted code may hold it

    # -- running --------------------------------------------------------------------------------

    def _start(self, process: _Process) -> None:
        again = process.exits > 0
        process.due = None
        process.started = time.monotonic()
        try:
            process.popen = subprocess.Popen(
                ["sh", "-c", f"exec {process.command}"],
                env=self._env,
                cwd=self._cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            self._write("supervisor", f"{process.name} could not start: {error}")
            self._ended(process, None, 127)
            return
        reader = threading.Thread(
            target=self._copy, args=(process.name, process.popen.stdout), daemon=True
        )
        reader.start()
        self._readers = [*(r for r in self._readers if r.is_alive()), reader]
        started = f"{process.name} started{' again' if again else ''} (pid {process.popen.pid})"
        if again:
            self._say(started)
        else:
            self._write("supervisor", started)

    def _copy(self, name: str, stream: IO[bytes] | None) -> None:
        """``name``'s output into the log, line by line, until every process holding its pipe
        (a worker's horse too) has closed it."""
        assert stream is not None
        with stream:
            for line in stream:
                self._write(name, line.decode("utf-8", "replace").rstrip("\n"))

    def _reap(self) -> None:
        for process in self._processes:
            if process.popen is None:
                continue
            code = _exit_code(process.popen.pid)
            if code is not None:
                popen, process.popen = process.popen, None
                popen.returncode = code  # waited for here: Popen must not wait again
                self._ended(process, popen.pid, code)
        for pid, whose in list(self._orphans.items()):
            code = _exit_code(pid)
            if code is not None:
                del self._orphans[pid]
                self._write(
                    "supervisor", f"pid {pid}, left by {whose}, ended ({how_it_ended(code)})"
                )

    def _ended(self, process: _Process, pid: int | None, code: int) -> None:
        ran = time.monotonic() - process.started
        if pid is not None:
            _signal_group(pid, signal.SIGKILL)  # what it left in its group (gunicorn's workers)
            self._adopt(process.name)
        ended = f"{process.name} (pid {pid}) ended ({how_it_ended(code)}) after {ran:.1f} s"
        if self._stop is not None:
            self._write("supervisor", ended)
            return
        process.exits = 1 if ran >= STEADY_S else process.exits + 1
        if process.exits >= CRASH_LIMIT:
            self._say(f"{ended}: {process.exits} exits in a row, each within {STEADY_S:g} s of "
                      "its start")  # fmt: skip
            self.stop(f"{process.name} keeps crashing ({process.exits} exits in a row)", 1)
            return
        delay = BACKOFF_S[min(process.exits, len(BACKOFF_S)) - 1]
        process.due = time.monotonic() + delay
        self._say(
            f"{ended}; starting it again in {delay:g} s (exit {process.exits} in a row of the "
            f"{CRASH_LIMIT} that stop the arena)"
        )

    def _adopt(self, whose: str) -> None:
        """Take note of the processes ``whose`` left behind, now this process's children."""
        if not self._adopting:
            return
        ours = {p.popen.pid for p in self._processes if p.popen is not None} | set(self._orphans)
        for pid in children_of(os.getpid()):
            if pid not in ours:
                self._orphans[pid] = whose
                self._write("supervisor", f"{whose} left pid {pid} running: waited for here")

    # -- stopping -------------------------------------------------------------------------------

    def _stop_all(self) -> None:
        """SIGTERM to each process (``last`` ones in a second stage), SIGKILL to whatever is
        left after :data:`STOP_WAIT_S`; every process and orphan waited for."""
        for process in self._processes:
            process.due = None
        first = [p for p in self._processes if p.name not in self._last]
        for stage, orphans in (
            (first, True),
            ([p for p in self._processes if p.name in self._last], False),
        ):
            for process in stage:
                if process.popen is not None:
                    _signal_group(process.popen.pid, signal.SIGTERM)
            self._wait(stage, orphans, STOP_WAIT_S)
            left = self._running(stage, orphans)
            if left:
                self._say(f"Killed what was still running: {', '.join(left)}")
                for process in stage:
                    if process.popen is not None:
                        _signal_group(process.popen.pid, signal.SIGKILL)
                self._wait(stage, orphans, STOP_WAIT_S, kill_orphans=True)

    def _wait(
        self, stage: list[_Process], orphans: bool, seconds: float, *, kill_orphans: bool = False
    ) -> None:
        """Reap ``stage`` (and the ``orphans``) until none runs, ``seconds`` pass, or, unless
        already killing, the stop is hurried."""
        deadline = time.monotonic() + seconds
        while self._running(stage, orphans) and time.monotonic() < deadline:
            if kill_orphans:
                for pid in self._orphans:  # those that the killed ones left too
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            elif self._hurry.is_set():
                return
            time.sleep(_TICK_S / 4)
            self._reap()

    def _running(self, stage: list[_Process], orphans: bool) -> list[str]:
        """The processes of ``stage`` still running, and the orphans if ``orphans``."""
        running = [p.name for p in stage if p.popen is not None]
        if orphans:
            running += [f"pid {pid} (left by {whose})" for pid, whose in self._orphans.items()]
        return running

    # -- saying ---------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        """``text`` on the run command's output, and in the log."""
        self._write("supervisor", text)
        with contextlib.suppress(OSError):  # nobody reads the output any more: the log has it
            self._echo(text)

    def _write(self, name: str, text: str) -> None:
        with self._lock:
            self._log.write(f"{time.strftime('%H:%M:%S')} {name:<{self._width}} | {text}\n")
            self._log.flush()


def _exit_code(pid: int) -> int | None:
    """``pid``'s exit code (negative: the signal that killed it) once it has ended, else
    None."""
    try:
        found, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # waited for already
        return 0
    return None if found == 0 else os.waitstatus_to_exitcode(status)


def _signal_group(pid: int, number: int) -> None:
    """Send ``number`` to the process group ``pid`` leads (each process is a session's)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, number)


def _become_subreaper() -> bool:
    """Make this process the parent of its descendants' orphans (Linux); whether it is."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)

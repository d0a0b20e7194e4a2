"""The resident memory of worker processes and their work horses, read from ``/proc``.

An RQ worker forks a work horse for each job; the horse keeps the worker's session, so every
process of a session started with ``start_new_session`` is that worker or one of its horses.
``VmHWM`` is a process's peak resident set so far: sampling it often enough (a horse lives for
a whole match) catches the peak of every horse.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

PROC = Path("/proc")


def status_kib(pid: int, field: str) -> int | None:
    """A ``kB`` field of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``), None once it has gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def session_of(pid: int) -> int | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[3])  # state, ppid, pgrp, session


class PeakMemory:
    """While entered, samples the peak resident memory of every process in ``sessions``."""

    def __init__(self, sessions: set[int], interval_s: float = 0.05) -> None:
        self.sessions = sessions
        self.interval_s = interval_s
        self.peak_kib: dict[int, int] = {}
        """Per process seen (worker or horse), its peak resident set."""
        self._session: dict[int, int | None] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="peak-memory")

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sample()

    def workers(self) -> dict[int, int]:
        """The peaks of the workers themselves (the sessions' leaders)."""
        return {pid: kib for pid, kib in self.peak_kib.items() if pid in self.sessions}

    def horses(self) -> dict[int, int]:
        """The peaks of the work horses (every process but the workers themselves)."""
        return {pid: kib for pid, kib in self.peak_kib.items() if pid not in self.sessions}

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        for entry in PROC.iterdir():
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            if pid not in self._session:
                self._session[pid] = session_of(pid)
            if self._session[pid] not in self.sessions:
                continue
            kib = status_kib(pid, "VmHWM")
            if kib is not None:
                self.peak_kib[pid] = max(kib, self.peak_kib.get(pid, 0))

"""One thread for all the process's alarms: :data:`ALARMS`.

``ALARMS.set(seconds, call)`` has ``call`` called, in the alarms' thread, once ``seconds`` have
passed, unless ``ALARMS.cancel(alarm)`` came first. Every request to a bot arms one (its
watchdog, :mod:`arena.transport`) and nearly all of them are cancelled when the answer comes: a
thread started per request (``threading.Timer``) cost about 0.2 ms of CPU a request; here an
alarm is a heap entry, set and cancelled under one lock. A cancelled alarm stays in the heap
until its time or until the heap is compacted, which happens when cancelled entries outnumber
pending ones.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable

_log = logging.getLogger(__name__)
_SLACK = 64
"""Cancelled entries tolerated in the heap beyond the pending ones before it is compacted."""


class Alarm:
    """One alarm: its call, and whether it was cancelled or has rung."""

    __slots__ = ("call", "done")

    def __init__(self, call: Callable[[], None]) -> None:
        self.call = call
        self.done = False
        """Cancelled, or rung: either way it will not ring (again)."""


class Alarms:
    """The alarms of one process (see the module's doc)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start()

    def _start(self) -> None:
        self._lock = threading.Lock()
        """Held to change the heap (entered directly: a plain lock's ``with`` costs no Python
        call, the condition's does)."""
        self._ready = threading.Condition(self._lock)
        self._heap: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        self.pending = 0
        """Alarms set that have neither rung nor been cancelled."""
        self._thread: threading.Thread | None = None
        self._running = False
        """Whether the thread runs: set as it is started, cleared as it ends (cheaper to read
        for every alarm than asking the thread)."""

    def set(self, seconds: float, call: Callable[[], None]) -> Alarm:
        """Call ``call`` once ``seconds`` (at least 0) have passed, unless cancelled first."""
        alarm = Alarm(call)
        at = self._clock() + max(0.0, seconds)
        with self._lock:
            heapq.heappush(self._heap, (at, next(self._order), alarm))
            self.pending += 1
            if len(self._heap) > _SLACK + 2 * self.pending:
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapq.heapify(self._heap)
            if not self._running:
                self._running = True
                self._thread = threading.Thread(target=self._run, name="alarms", daemon=True)
                self._thread.start()
            elif self._heap[0][2] is alarm:  # the thread sleeps until a later alarm
                self._ready.notify()
        return alarm

    def cancel(self, alarm: Alarm) -> None:
        """The alarm will not ring (unless its call has already begun)."""
        with self._lock:
            if not alarm.done:
                alarm.done = True
                self.pending -= 1

    def _run(self) -> None:
        try:
            self._ring()
        finally:
            with self._lock:  # set() reads the flag under it
                self._running = False

    def _ring(self) -> None:
        with self._ready:
            while True:
                heap = self._heap
                while heap and heap[0][2].done:
                    heapq.heappop(heap)
                if not heap:
                    self._ready.wait()
                    continue
                wait = heap[0][0] - self._clock()
                if wait > 0:
                    self._ready.wait(wait)
                    continue
                alarm = heapq.heappop(heap)[2]
                alarm.done = True
                self.pending -= 1
                self._ready.release()
                try:
                    alarm.call()
                except Exception:  # one alarm's failure must not stop the others
                    _log.exception("an alarm failed")
                finally:
                    self._ready.acquire()


ALARMS = Alarms()
"""The process's alarms."""

# A forked child has none of its parent's threads, and the lock may have been held at the fork.
os.register_at_fork(after_in_child=ALARMS._start)

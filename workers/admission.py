"""Admission by lateness: a work horse with matches in flight takes another only while a thread
that wakes up gets to run promptly.

A bot's time is measured from the moment its request is built until its answer is read, so a
decision whose answer waits for the interpreter lock (another match's house bot thinking, many
matches' bookkeeping) or for a core (a machine busy with other work) is charged to the bot.
:class:`Lateness` measures that wait directly: a thread of the horse sleeps :data:`PERIOD_S`
again and again and notes how late it wakes up. The horse (:mod:`workers.stable`) takes no new
job while the median of the last :data:`WINDOW` wake-ups is later than the limit
(``GONGZHU_ADMISSION_LATENESS_MS``), nor before most of them were measured since it took the
last one (so that the median says what the jobs in flight do to the lateness: a job every 30 ms
at most); the matches in flight go on, and it takes jobs again once the lateness falls. The
median ignores a single slow wake-up (a garbage collection, a page fault) and rises as soon as
one thread keeps the interpreter lock busy (it is handed over every 5 ms):
``python -m benchmarks.lateness`` measures it beside busy threads (docs/BENCHMARKS.md, "Many
matches in flight").
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque

PERIOD_S = 0.01
"""How long the measuring thread sleeps between two readings."""
WINDOW = 5
"""How many of the latest wake-ups the median is taken over (50 ms, when they are on time)."""


class Lateness:
    """How late a sleeping thread of this process wakes up, over the latest :data:`WINDOW`
    wake-ups: a daemon thread from :meth:`start` until :meth:`stop`.

    >>> lateness = Lateness()
    >>> lateness.median_ms()  # nothing measured yet
    0.0
    """

    def __init__(self) -> None:
        self._late_ms: deque[float] = deque(maxlen=WINDOW)
        self.measured = 0
        """How many wake-ups were measured so far."""
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._measure, name="lateness", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def recent_ms(self) -> list[float]:
        """The lateness of the latest :data:`WINDOW` wake-ups, in milliseconds."""
        return list(self._late_ms)

    def median_ms(self) -> float:
        """The median lateness of the latest wake-ups, in milliseconds (0 before any)."""
        late = self.recent_ms()
        return statistics.median(late) if late else 0.0

    def admits(self, limit_ms: float, since: int) -> bool:
        """Whether the latest :data:`WINDOW` wake-ups, most of them measured after the
        ``since``-th, were on time within ``limit_ms`` (median)."""
        return self.measured - since > WINDOW // 2 and self.median_ms() <= limit_ms

    def _measure(self) -> None:
        while True:
            asleep = time.perf_counter()
            if self._stopped.wait(PERIOD_S):
                return
            self._late_ms.append(max(0.0, (time.perf_counter() - asleep - PERIOD_S) * 1000))
            self.measured += 1

"""The process's alarms (``arena.alarms``): one thread rings each alarm at its time, in time
order, and never one that was cancelled."""

from __future__ import annotations

import threading
import time

from arena import alarms
from arena.alarms import Alarms


def test_alarms_ring_in_time_order_and_a_cancelled_one_never_rings() -> None:
    clock = Alarms()
    rung: list[str] = []
    done = threading.Event()
    began = time.monotonic()
    late = clock.set(0.3, lambda: (rung.append("late"), done.set()))
    time.sleep(0.05)  # the alarms' thread starts and sleeps until the late alarm
    early: list[float] = []
    clock.set(0.1, lambda: (rung.append("early"), early.append(time.monotonic())))
    # sooner than the alarm the thread sleeps until: it is woken
    cancelled = clock.set(0.05, lambda: rung.append("cancelled"))
    clock.cancel(cancelled)
    assert done.wait(10)
    assert rung == ["early", "late"]
    assert time.monotonic() - began >= 0.3
    assert early[0] - began < 0.25
    assert late.done and clock.pending == 0


def test_a_failing_alarm_does_not_stop_the_next() -> None:
    clock = Alarms()
    done = threading.Event()

    def failing() -> None:
        raise RuntimeError("boom")

    clock.set(0, failing)
    clock.set(0.01, done.set)
    assert done.wait(10)


def test_cancelled_alarms_do_not_pile_up() -> None:
    clock = Alarms()
    for _ in range(1000):
        clock.cancel(clock.set(60, lambda: None))
    assert clock.pending == 0
    assert len(clock._heap) <= alarms._SLACK + 1

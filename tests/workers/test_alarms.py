"""The process's alarms (``arena.alarms``): one thread rings each alarm at its time, in time
order, and never one that was cancelled."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from arena import alarms
from arena.alarms import Alarms


def test_alarms_ring_in_time_order_and_a_cancelled_one_never_rings() -> None:
    clock = Alarms()
    rung: list[tuple[str, float]] = []
    done = threading.Event()

    def ring(name: str) -> Callable[[], None]:
        def call() -> None:
            rung.append((name, time.monotonic()))
            if name == "late":
                done.set()

        return call

    began = time.monotonic()
    late = clock.set(0.3, ring("late"))
    time.sleep(0.05)  # the alarms' thread starts and sleeps until the late alarm
    clock.set(0.1, ring("early"))  # sooner: the sleeping thread is woken for it
    cancelled = clock.set(0.05, ring("cancelled"))
    clock.cancel(cancelled)
    assert done.wait(10)
    assert [name for name, _ in rung] == ["early", "late"]
    assert rung[0][1] - began < 0.25 and rung[1][1] - began >= 0.3
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
    """Not even after many pending alarms were cancelled at once."""
    clock = Alarms()
    for alarm in [clock.set(60, lambda: None) for _ in range(100)]:
        clock.cancel(alarm)
    for _ in range(1000):
        clock.cancel(clock.set(60, lambda: None))
    assert clock.pending == 0
    assert len(clock._heap) <= alarms._SLACK + 1


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_the_next_alarm_starts_the_thread_again_if_it_ended() -> None:
    clock = Alarms()

    def ending() -> None:
        raise SystemExit  # not an alarm's failure: it ends the thread

    clock.set(0, ending)
    first = clock._thread
    assert first is not None
    first.join(10)
    assert not first.is_alive()
    done = threading.Event()
    clock.set(0, done.set)
    assert done.wait(10)
    assert clock._thread is not first


@pytest.mark.parametrize("seconds", [0.0, -3.0], ids=["now", "past"])
def test_an_alarm_due_now_or_in_the_past_rings_at_once(seconds: float) -> None:
    """The clock stands still: only an alarm due by its reading rings (one due even a second
    later would wait for ever)."""
    clock = Alarms(clock=lambda: 100.0)
    done = threading.Event()
    clock.set(seconds, done.set)
    assert done.wait(10)


def test_one_thread_rings_every_alarm_and_waits_for_the_next() -> None:
    clock = Alarms()
    first = threading.Event()
    clock.set(0, first.set)
    assert first.wait(10)
    thread = clock._thread
    time.sleep(0.05)  # nothing left to ring: the thread waits
    second = threading.Event()
    clock.set(0, second.set)
    assert second.wait(10)
    assert clock._thread is thread and thread is not None and thread.is_alive()

"""``python -m tests.workers.stalling_worker worker``: the arena's worker (:mod:`workers.cli`),
whose work horse stops once at a named point so that a test can SIGKILL it there.
:data:`STALL_AT_ENV` names the point (:data:`POINTS`); the horse creates the file
:data:`MARK_ENV` names when it gets there, then sleeps. A horse finding the file made already
(the job's retry) goes on at once."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from arena import disputes
from arena.store.disputes import DisputeBook
from workers.cli import main
from workers.stable import Stable

STALL_AT_ENV = "GONGZHU_TEST_STALL_AT"
MARK_ENV = "GONGZHU_TEST_STALL_MARK"
STALL_S = 120.0
"""Far longer than a test waits to find the mark and kill the horse."""
POINTS: dict[str, tuple[object, str]] = {
    "before": (DisputeBook, "void_and_replace"),  # a remedy's transaction
    "after": (disputes, "enqueue_match"),  # a remedy's transaction done, its replacement not queued
    "registering": (Stable, "_register"),  # a job taken off the queue, not yet the horse's own
    "starting": (Stable, "_start"),  # a job registered as the horse's, not started
}
"""Where a horse can be stopped: the object and the name of the function it stops in."""


def stalling(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func``, which first stops (see the module's doc) the first time any horse calls it."""

    @wraps(func)
    def stalled(*args: Any, **kwargs: Any) -> Any:
        mark = Path(os.environ[MARK_ENV])
        try:
            mark.touch(exist_ok=False)
        except FileExistsError:
            return func(*args, **kwargs)
        time.sleep(STALL_S)
        return func(*args, **kwargs)

    return stalled


if __name__ == "__main__":
    point = os.environ[STALL_AT_ENV]
    if point not in POINTS:
        raise SystemExit(f"{STALL_AT_ENV} is one of {', '.join(POINTS)}, not {point!r}")
    owner, name = POINTS[point]
    setattr(owner, name, stalling(getattr(owner, name)))
    main()

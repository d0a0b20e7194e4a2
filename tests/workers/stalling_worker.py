"""``python -m tests.workers.stalling_worker worker``: the arena's worker (:mod:`workers.cli`),
whose work horse stops once at a named point of a remedy's job so that a test can SIGKILL it
there. :data:`STALL_AT_ENV` names the point, ``before`` (the remedy's transaction) or ``after``
(it, before the replacement's job is queued); the horse creates the file :data:`MARK_ENV`
names when it gets there, then sleeps. A horse finding the file made already (the job's retry)
goes on at once."""

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

STALL_AT_ENV = "GONGZHU_TEST_STALL_AT"
MARK_ENV = "GONGZHU_TEST_STALL_MARK"
STALL_S = 120.0
"""Far longer than a test waits to find the mark and kill the horse."""


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
    if point == "before":
        DisputeBook.void_and_replace = stalling(DisputeBook.void_and_replace)  # type: ignore[method-assign]
    elif point == "after":
        disputes.enqueue_match = stalling(disputes.enqueue_match)
    else:
        raise SystemExit(f"{STALL_AT_ENV} is before or after, not {point!r}")
    main()

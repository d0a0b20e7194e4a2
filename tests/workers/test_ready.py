"""``/ready`` counts the workers that are alive: a SIGKILLed worker drops out of the count
within ``worker_ttl_s`` of its last heartbeat, while rq itself still lists it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rq import Worker

from arena.config import Config
from arena.store import Store
from service import create_app
from tests.workers.crashes import sigkill, wait_for


def test_ready_counts_only_live_workers(
    config: Config, store: Store, start_worker: Callable[[], Any]
) -> None:
    client = create_app(config).test_client()

    def counted() -> int:
        answer = client.get("/ready")
        assert answer.status_code == 200
        return int(answer.get_json()["workers"])

    victim = start_worker()
    start_worker()
    wait_for(lambda: counted() == 2, 30, "both workers to be counted")
    sigkill(victim.pid)
    victim.wait(5)
    killed_at = time.monotonic()
    wait_for(lambda: counted() == 1, config.worker_ttl_s + 5, "the killed worker to drop out")
    dropped_s = time.monotonic() - killed_at
    assert len(Worker.all(connection=store.redis)) == 2  # rq still has its key
    print(f"/ready stopped counting the killed worker {dropped_s:.1f} s after the kill")

"""The arena's rq worker, with the crash-recovery settings (see :mod:`arena.queue` for how a
crashed match job comes back)."""

from __future__ import annotations

from types import FrameType
from typing import Any

import redis
from rq import Queue, Worker
from rq.job import Job

from arena.config import Config
from arena.failures import settle_failed_matches
from arena.queue import release_parked_match_jobs
from arena.store import Store


class ArenaWorker(Worker):
    """rq's worker with the abandoned-job grace configurable (rq fixes it at 60 s), whose
    registry sweep also marks failed the matches whose jobs failed for good."""

    def __init__(
        self, *args: Any, store: Store, abandoned_after_s: int = 60, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        self.abandoned_after_s = abandoned_after_s
        self.stop_signalled = False
        """SIGTERM or SIGINT arrived: the work loop ended on request, not because Redis went
        away (``python -m workers worker`` starts a new loop only in that second case)."""

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_signalled = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]  # rq: unannotated

    def clean_registries(self) -> None:
        # abandoned jobs are retried, or failed when out of retries (rq leaves this unannotated)
        super().clean_registries()  # type: ignore[no-untyped-call]
        for queue in self.queues:
            for job_id in release_parked_match_jobs(queue):
                self.log.warning("job %s was parked in the scheduled registry: queued", job_id)
            for match_id in settle_failed_matches(queue, self.store):
                self.log.warning("match %s failed for good: marked failed", match_id)

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        beat = self.job_monitoring_interval
        if job.timeout and job.timeout > 0:
            beat = min(job.timeout - working_time, beat)
        return int(beat) + self.abandoned_after_s


def make_worker(config: Config, connection: redis.Redis) -> ArenaWorker:
    return ArenaWorker(
        [Queue(config.queue_name, connection=connection)],
        connection=connection,
        worker_ttl=config.worker_ttl_s,
        job_monitoring_interval=config.job_heartbeat_s,
        maintenance_interval=config.maintenance_interval_s,
        abandoned_after_s=config.abandoned_after_s,
        store=Store.from_config(config, client=connection),
    )

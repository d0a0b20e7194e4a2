"""The arena's RQ setup: the worker, and how match jobs are queued so that a crash is recovered.

A match job is queued with retries and **no retry interval**: rq puts a retried job straight
back on the queue, in the same transaction that notes the failure. (A retry with an interval
goes to rq's scheduled registry instead, where only rq's scheduler, a process the arena does
not run, would ever move it back.) So:

- a work horse killed outright (SIGKILL, the out-of-memory killer) is noticed at once by its
  worker, which queues the job again;
- a worker killed with its horse (or one whose Redis went away, :mod:`workers.cli`) leaves
  its job in rq's started registry with a heartbeat nobody renews. Once the heartbeat is
  ``abandoned_after_s`` overdue, the next registry sweep of any live worker (every
  ``maintenance_interval_s``; an idle worker wakes every ``worker_ttl_s - 15`` s to do it)
  finds the job abandoned and queues it again.

Either way the match is played again from its deals (the same cards) and
:meth:`~workers.store.Store.record_result` counts it once. With the defaults (heartbeat every
15 s, abandoned 60 s after it is due, sweeps every 30 s) a dead worker's match is queued again
within 15 + 60 + 30 = 105 s. A job that has used up its retries is left in rq's failed
registry; the sweep then marks its match failed (:mod:`workers.failures`). The sweep also
queues again any match job an older arena parked in rq's scheduled registry
(:func:`release_parked_match_jobs`). docs/OPERATIONS.md explains each setting.
"""

from __future__ import annotations

from types import FrameType
from typing import Any

import redis
from rq import Queue, Retry, Worker
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry

from workers.config import Config
from workers.failures import MATCH_JOB_PREFIX, settle_failed_matches
from workers.store import Store

RUN_MATCH = "workers.jobs.run_match"
MATCH_JOB_TIMEOUT_S = 3 * 3600
"""A match job is stopped after 3 hours: far beyond any match under the time rules."""
MATCH_RETRIES = 3
"""How often a crashed or failed match job is run again before it is left failed."""
_LIVE = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.DEFERRED, JobStatus.SCHEDULED}


def match_job_id(match_id: str) -> str:
    return f"{MATCH_JOB_PREFIX}{match_id}"


def enqueue_match(queue: Queue, match_id: str) -> None:
    """Queue the match's job unless it is queued, running or done: its id is the match's, so
    expanding a tournament again queues nothing twice."""
    job_id = match_job_id(match_id)
    job = queue.fetch_job(job_id)
    if job is not None and (job.get_status() in _LIVE or job.get_status() == JobStatus.FINISHED):
        return
    queue.enqueue(
        RUN_MATCH,
        match_id,
        job_id=job_id,
        job_timeout=MATCH_JOB_TIMEOUT_S,
        retry=Retry(max=MATCH_RETRIES),  # no interval: see the module's docstring
    )


def release_parked_match_jobs(queue: Queue) -> list[str]:
    """Queue again the match jobs found in rq's scheduled registry, and return their ids. The
    arena schedules no match job; those are an older version's retries (queued with an
    interval, for a scheduler nobody ran), which would otherwise leave their tournaments
    ``running`` for good after an upgrade."""
    registry = ScheduledJobRegistry(queue=queue)
    job_ids = [j for j in registry.get_job_ids() if j.startswith(MATCH_JOB_PREFIX)]
    jobs = Job.fetch_many(job_ids, connection=queue.connection)
    with queue.connection.pipeline() as pipe:
        for job_id, job in zip(job_ids, jobs, strict=True):
            if job is not None:
                queue.enqueue_job(job, pipeline=pipe)
            registry.remove(job_id, pipeline=pipe)
        pipe.execute()
    return job_ids


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
        super().request_stop(signum, frame)

    def clean_registries(self) -> None:
        super().clean_registries()  # abandoned jobs are retried, or failed when out of retries
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
        store=Store(connection, config.secret_key),
    )

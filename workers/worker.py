"""The arena's rq worker, with the crash-recovery settings (see :mod:`arena.queue` for how a
crashed match job comes back), and many jobs in flight in its work horse
(:mod:`workers.stable`)."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import signal
from types import FrameType
from typing import Any

import redis
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.timeouts import HorseMonitorTimeoutException, TimerDeathPenalty
from rq.utils import now

from arena.config import Config
from arena.failures import settle_failed_matches
from arena.queue import give_back, give_back_orphans, release_parked_match_jobs
from arena.store import Store
from workers.stable import Stable

STOP_TAKING = signal.SIGUSR1
"""Sent by a worker asked to stop to its horse: take no new job, finish those in flight."""


class ArenaWorker(Worker):
    """rq's worker with the abandoned-job grace configurable (rq fixes it at 60 s), whose
    registry sweep also marks failed the matches whose jobs failed for good."""

    def __init__(
        self,
        *args: Any,
        store: Store,
        abandoned_after_s: int = 60,
        jobs_at_once: int = 1,
        lateness_limit_ms: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        self.abandoned_after_s = abandoned_after_s
        self.jobs_at_once = jobs_at_once
        """How many jobs the work horse runs at once (1: rq's own horse, one job each)."""
        self.lateness_limit_ms = lateness_limit_ms
        """With a job in flight, the horse takes no other while its threads wake up later than
        this (:mod:`workers.admission`; 0: no such limit)."""
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
            for job_id in give_back_orphans(queue):
                self.log.warning("job %s was taken by a worker now gone: queued again", job_id)
            for match_id in settle_failed_matches(queue, self.store):
                self.log.warning("match %s failed for good: marked failed", match_id)

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        beat = self.job_monitoring_interval
        if job.timeout and job.timeout > 0:
            beat = min(job.timeout - working_time, beat)
        return int(beat) + self.abandoned_after_s

    # -- many jobs in flight (workers.stable): the horse's side --

    def main_work_horse(self, job: Job, queue: Queue) -> None:
        if self.jobs_at_once == 1:
            super().main_work_horse(job, queue)
            return
        random.seed()
        self.setup_work_horse_signals()  # type: ignore[no-untyped-call]
        self._is_horse = True
        # rq's job timeout raises in the job's own thread (its SIGALRM reaches the main one only)
        self.death_penalty_class = TimerDeathPenalty
        stable = Stable(self, self.jobs_at_once, self.lateness_limit_ms)
        signal.signal(STOP_TAKING, lambda signum, frame: stable.stop())
        try:
            assert self.execution is not None
            stable.run(job, queue, self.execution)
        except BaseException:  # as rq's horse: the worker puts back what was in flight
            os._exit(1)
        os._exit(0)

    # -- the worker's side: heartbeats for every job in flight, and recovery of them all --

    def handle_warm_shutdown_request(self) -> None:
        super().handle_warm_shutdown_request()  # type: ignore[no-untyped-call]
        if self.jobs_at_once > 1 and self.horse_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.horse_pid, STOP_TAKING)

    def monitor_work_horse(self, job: Job, queue: Queue, execution: Execution) -> None:
        if self.jobs_at_once == 1:
            super().monitor_work_horse(job, queue, execution)
            return
        ret_val = None
        while True:
            try:
                with self.death_penalty_class(
                    self.job_monitoring_interval, HorseMonitorTimeoutException
                ):
                    _, ret_val, _ = self.wait_for_horse()
                break
            except HorseMonitorTimeoutException:
                self._beat_in_flight()
                if self.should_run_maintenance_tasks:  # the horse may be busy for hours
                    self.run_maintenance_tasks()  # type: ignore[no-untyped-call]
            except OSError as error:  # a signal interrupted the wait (rq's own monitor too)
                if error.errno != errno.EINTR:
                    raise
                self.heartbeat()
        self._horse_pid = 0
        self.executions.clear()
        self._put_back_in_flight(ret_val)

    def _in_flight(self) -> list[tuple[Execution, Job]]:
        """The executions this worker's horse has open, with their jobs (from rq's index of
        the worker's executions, which the horse fills as it takes jobs)."""
        found = []
        for execution in self.get_current_executions(refresh=True):
            try:
                found.append((execution, execution.job))
            except NoSuchJobError:  # deleted meanwhile: nothing to beat or put back
                continue
        return found

    def _beat_in_flight(self) -> None:
        """rq's heartbeats (the worker's, each execution's and each job's) for every job in
        flight in the horse."""
        with self.connection.pipeline() as pipeline:
            self.heartbeat(self.job_monitoring_interval + 60, pipeline=pipeline)
            for execution, job in self._in_flight():
                working_s = (now() - job.started_at).total_seconds() if job.started_at else 0.0
                ttl = self.get_heartbeat_ttl(job, working_s)
                execution.heartbeat(job.started_job_registry, ttl, pipeline=pipeline)
                job.heartbeat(now(), ttl, pipeline=pipeline, xx=True)
            pipeline.execute()

    def _put_back_in_flight(self, ret_val: int | None) -> None:
        """After the horse ended: every job it left unfinished goes back on the queue at once.
        One it was playing (started, in rq's terms) fails this run, which spends one of its
        retries (rq queues it again while it has one); one it had taken and not started yet (a
        killed horse's jobs in the instant between taking and starting them) is queued again
        at the front, spending none: each death costs a retry only to the matches it cut short."""
        killed = ret_val is not None and os.WIFSIGNALED(ret_val)
        signalled = f" (signal {os.WTERMSIG(ret_val)})" if killed and ret_val else ""
        reason = f"Work-horse terminated unexpectedly; waitpid returned {ret_val}{signalled}; "
        for execution, job in self._in_flight():
            status = job.get_status()
            if status not in {JobStatus.STARTED, JobStatus.QUEUED}:  # finished, failed, retried
                continue
            queue = Queue(job.origin, connection=self.connection)
            if status == JobStatus.QUEUED:
                self._put_back_unstarted(job, queue, execution)
                continue
            self.log.warning("Worker %s: job %s failed (%s)", self.name, job.id, reason)
            job.ended_at = now()
            self.handle_job_failure(job, queue=queue, exc_string=reason, execution=execution)
        for queue in self.queues:
            for job_id in give_back(queue, self.name):
                self.log.warning(
                    "Worker %s: job %s was taken, not started: queued again", self.name, job_id
                )

    def _put_back_unstarted(self, job: Job, queue: Queue, execution: Execution) -> None:
        """Queue again, at the front and with its retries, a job the dead horse had registered
        and not started: its execution deleted, and off rq's intermediate list (the horse's
        first job is there until it starts, and rq's sweep of that list would fail it once
        more a minute on)."""
        self.log.warning(
            "Worker %s: job %s was taken, not started: queued again", self.name, job.id
        )
        with self.connection.pipeline() as pipe:
            self.cleanup_execution(job, pipeline=pipe, execution=execution)
            pipe.lrem(queue.intermediate_queue_key, 1, job.id)
            queue.push_job_id(job.id, pipeline=pipe, at_front=True)
            pipe.execute()

    def handle_job_failure(
        self,
        job: Job,
        queue: Queue,
        started_job_registry: Any = None,
        exc_string: str = "",
        execution: Execution | None = None,
    ) -> None:
        """rq's, with the job taken off rq's intermediate list first: a job whose start failed
        (its horse killed before it began, Redis gone as it began) is still there, and that
        list's sweep would fail it a second time a minute on, one death charged twice."""
        with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):  # rq's fails too
            queue.intermediate_queue.remove(job.id)
        super().handle_job_failure(job, queue, started_job_registry, exc_string, execution)


def make_worker(config: Config, connection: redis.Redis) -> ArenaWorker:
    return ArenaWorker(
        [Queue(config.queue_name, connection=connection)],
        connection=connection,
        worker_ttl=config.worker_ttl_s,
        job_monitoring_interval=config.job_heartbeat_s,
        maintenance_interval=config.maintenance_interval_s,
        abandoned_after_s=config.abandoned_after_s,
        store=Store.from_config(config, client=connection),
        jobs_at_once=config.matches_per_worker,
        lateness_limit_ms=config.admission_lateness_ms,
    )

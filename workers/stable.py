"""The work horse that keeps many jobs in flight (``GONGZHU_MATCHES_PER_WORKER`` above 1).

rq's worker forks one work horse per job. Here the horse forked for a job keeps taking more
jobs from the worker's queue while it has room, and runs each with rq's own ``perform_job``
in a thread of its own, under the worker's name: every job keeps its own rq execution (its
entry in the started registry and its heartbeat, which the worker renews), its own retries and
its own result. A match's job id stays the unit of recovery: a SIGKILLed horse's worker puts
back at once every job the horse had taken (:class:`workers.worker.ArenaWorker`), the ones it
was playing with one retry spent, the ones it had not started yet with none. So a job taken
is on the worker's books from the instant it leaves the queue: on its horse's list of jobs
taken (:func:`arena.queue.take`), then among its executions.

A match mostly waits for its bots, so threads suffice: each waits on its own sockets with the
interpreter lock released (docs/BENCHMARKS.md, "Many matches in flight"). The horse ends when
it has nothing in flight and the queue stays empty for :data:`POLL_S`; the worker then waits
for the next job as usual. With a job in flight it takes another only while its threads get the
CPU promptly (:mod:`workers.admission`), so that the matches it plays are not charged for each
other's CPU. It takes no new job once asked to stop (SIGUSR1, the worker's warm
shutdown) or once its worker is gone (an orphan finishes what it has and ends).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import redis
from rq.exceptions import NoSuchJobError
from rq.executions import Execution
from rq.job import Job
from rq.queue import Queue

from arena.queue import take, untake
from workers.admission import PERIOD_S, Lateness

if TYPE_CHECKING:
    from workers.worker import ArenaWorker

POLL_S = 1
"""How long a horse with room waits on the queue for a job before looking around again."""


class Stable:
    """Up to ``size`` jobs at once in threads of one work horse (see the module's doc); with a
    job in flight, none taken while threads wake up later than ``lateness_limit_ms`` (median; 0:
    no such limit)."""

    def __init__(self, worker: ArenaWorker, size: int, lateness_limit_ms: float = 0.0) -> None:
        self.worker = worker
        self.size = size
        self.lateness_limit_ms = lateness_limit_ms
        self.lateness = Lateness()
        self._taken_at = 0
        """How many wake-ups :attr:`lateness` had measured when the last job was started."""
        self.parent_pid = os.getppid()
        self._changed = threading.Condition()
        self._running: set[threading.Thread] = set()
        self._stopping = threading.Event()

    def stop(self) -> None:
        """Take no new job; finish those in flight."""
        self._stopping.set()

    def run(self, job: Job, queue: Queue, execution: Execution) -> None:
        """Perform ``job`` (its execution made by the worker), and every job taken while there
        is room; return once none is left in flight."""
        if self.lateness_limit_ms:
            self.lateness.start()
        self._start(job, queue, execution)
        while not self._closing():
            with self._changed:
                if len(self._running) >= self.size:
                    self._changed.wait(POLL_S)
                    continue
                if self._running and self._late():
                    self._changed.wait(PERIOD_S)
                    continue
            taken = self._take()
            if taken is not None:
                self._start(*taken)
            elif not self._running:
                break
        self.lateness.stop()
        for thread in list(self._running):
            thread.join()

    def _late(self) -> bool:
        limit = self.lateness_limit_ms
        return bool(limit) and not self.lateness.admits(limit, since=self._taken_at)

    def _closing(self) -> bool:
        return self._stopping.is_set() or os.getppid() != self.parent_pid

    def _take(self) -> tuple[Job, Queue, Execution] | None:
        """The next job, registered as this horse's (its rq execution), or None if none came
        within :data:`POLL_S` or Redis did not answer (an outage longer than the worker rides
        out: the jobs in flight go on, and the worker decides what becomes of them)."""
        worker = self.worker
        [queue] = worker.queues  # the arena's workers take jobs from one queue
        try:
            job_id = take(queue, worker.name, POLL_S)
            return None if job_id is None else self._register(queue, job_id)
        except (redis.ConnectionError, redis.TimeoutError):
            return None

    def _register(self, queue: Queue, job_id: str) -> tuple[Job, Queue, Execution] | None:
        """The taken job's rq execution (what rq's ``prepare_execution`` makes), created in the
        transaction that takes the job off the horse's list of jobs taken: a horse killed at
        any instant leaves each job either on that list or among its worker's executions, and
        its worker puts it back at once (:meth:`workers.worker.ArenaWorker.monitor_work_horse`)."""
        worker = self.worker
        try:
            job = worker.job_class.fetch(
                job_id, connection=worker.connection, serializer=worker.serializer
            )
        except NoSuchJobError:  # deleted while queued: nothing to run
            with worker.connection.pipeline() as pipe:
                untake(pipe, queue, worker.name, job_id)
                pipe.execute()
            return None
        with worker.connection.pipeline() as pipe:
            ttl = worker.get_heartbeat_ttl(job)
            execution = Execution.create(job, ttl, pipeline=pipe, worker_name=worker.name)
            untake(pipe, queue, worker.name, job_id)
            pipe.execute()
        worker.executions[execution.id] = execution
        return job, queue, execution

    def _start(self, job: Job, queue: Queue, execution: Execution) -> None:
        thread = threading.Thread(
            target=self._perform, args=(job, queue, execution), name=job.id, daemon=True
        )
        with self._changed:
            self._running.add(thread)
            self._taken_at = self.lateness.measured
        thread.start()

    def _perform(self, job: Job, queue: Queue, execution: Execution) -> None:
        try:
            self.worker.perform_job(job, queue, execution)  # records its own success or failure
        finally:
            with self._changed:
                self._running.discard(threading.current_thread())
                self._changed.notify()

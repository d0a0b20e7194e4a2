"""The arena's RQ queue: what the use cases hand to the workers (jobs are named by import path
and take ids only), and how match jobs are queued so that a crash is recovered.

A match job is queued with retries and **no retry interval**: rq puts a retried job straight
back on the queue, in the same transaction that notes the failure. (A retry with an interval
goes to rq's scheduled registry instead, where only rq's scheduler, a process the arena does
not run, would ever move it back.) So:

- a work horse killed outright (SIGKILL, the out-of-memory killer) is noticed at once by its
  worker, which queues its jobs again: each one the horse was playing with one retry spent,
  each one it had taken off the queue and not started with none (a horse's jobs are on its
  worker's books from the instant they leave the queue: :func:`take`);
- a worker killed with its horse (or one whose Redis went away, :mod:`workers.cli`) leaves
  its job in rq's started registry with a heartbeat nobody renews. Once the heartbeat is
  ``abandoned_after_s`` overdue, the next registry sweep of any live worker (every
  ``maintenance_interval_s``; an idle worker wakes every ``worker_ttl_s - 15`` s to do it)
  finds the job abandoned and queues it again.

Either way the match is played again from its deals (the same cards) and
:meth:`~arena.store.Store.record_result` counts it once. With the defaults (heartbeat every
15 s, abandoned 60 s after it is due, sweeps every 30 s) a dead worker's match is queued again
within 15 + 60 + 30 = 105 s. A job that has used up its retries is left in rq's failed
registry; the sweep then marks its match failed (:mod:`arena.failures`). The sweep also
queues again any match job an older arena parked in rq's scheduled registry
(:func:`release_parked_match_jobs`). docs/OPERATIONS.md explains each setting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from redis.client import Pipeline
from rq import Queue, Retry, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry

from arena.failures import MATCH_JOB_PREFIX
from arena.store import keys, replies

RUN_TOURNAMENT = "workers.jobs.run_tournament"
RUN_MATCH = "workers.jobs.run_match"
BUILD_EVIDENCE = "workers.jobs.build_evidence"
APPLY_REMEDY = "workers.jobs.apply_remedy"
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


def release_match(queue: Queue, match_id: str) -> bool:
    """Queue the match's job unless it has one already, whatever its state (a ladder table's
    next rotation: a job that failed for good stays failed, for the sweep to mark its match
    failed). Returns whether it was queued."""
    if queue.fetch_job(match_job_id(match_id)) is not None:
        return False
    enqueue_match(queue, match_id)
    return True


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


def tournament_job_id(tournament_id: str) -> str:
    return f"tournament-{tournament_id}"


def enqueue_tournament(queue: Queue, tournament_id: str) -> str:
    """Queue the job that plays the tournament; returns the job's id. It is retried like a
    match job (its horse may die with the matches it runs alongside, :mod:`workers.stable`):
    planning again plans and queues nothing twice."""
    job = queue.enqueue(
        RUN_TOURNAMENT,
        tournament_id,
        job_id=tournament_job_id(tournament_id),
        retry=Retry(max=MATCH_RETRIES),
    )
    return str(job.id)


def cancel_tournament_job(queue: Queue, tournament_id: str) -> None:
    """Take the tournament's job off the queue if it has not started (a running job sees the
    tournament's cancelled status and stops)."""
    try:
        job = Job.fetch(tournament_job_id(tournament_id), connection=queue.connection)
    except NoSuchJobError:
        return
    if job.get_status() in {"queued", "scheduled", "deferred"}:
        job.cancel()


def requeue_matches(queue: Queue, match_ids: Iterable[str]) -> None:
    """Queue the matches' jobs afresh, each with all its retries (the failed job is deleted,
    which takes it off rq's failed registry)."""
    for match_id in match_ids:
        with contextlib.suppress(NoSuchJobError):
            Job.fetch(match_job_id(match_id), connection=queue.connection).delete()
        enqueue_match(queue, match_id)


def workers_and_depth(queue: Queue, *, live_within_s: int) -> tuple[int, int]:
    """The RQ workers of ``queue`` that are alive, and the jobs waiting on it.

    A worker is alive if its last heartbeat is at most ``live_within_s`` old (the workers'
    ``worker_ttl_s``: an idle worker beats every ``worker_ttl_s - 15`` s, a busy one every
    ``job_heartbeat_s``). rq keeps a killed worker's key for ``worker_ttl_s + 60`` s after its
    last beat, so its mere presence says nothing."""
    cutoff = datetime.now(UTC) - timedelta(seconds=live_within_s)
    beats = [w.last_heartbeat for w in Worker.all(queue=queue)]
    return sum(1 for beat in beats if beat is not None and beat >= cutoff), queue.count


# -- the jobs a work horse takes (workers.stable) -----------------------------------------------


def take(queue: Queue, taker: str, timeout_s: int) -> str | None:
    """The id of the job at the front of ``queue``, moved to the list of jobs the worker
    ``taker``'s horse took (waiting up to ``timeout_s`` for one; None if none came). The horse
    registers it as its own (rq's execution) in the transaction that takes it off that list
    (:func:`untake`): a horse that dies in between leaves it there for :func:`give_back`."""
    with queue.connection.pipeline(transaction=False) as pipe:  # one round trip
        pipe.sadd(keys.takers(queue.name), taker)
        pipe.blmove(queue.key, keys.taken(queue.name, taker), timeout_s)
        _, found = pipe.execute()
    return replies.text(found)


def untake(pipe: Pipeline, queue: Queue, taker: str, job_id: str) -> None:
    """Take ``job_id`` off ``taker``'s list of jobs taken, in ``pipe``'s transaction."""
    pipe.lrem(keys.taken(queue.name, taker), 1, job_id)


def give_back(queue: Queue, taker: str) -> list[str]:
    """Put every job the worker ``taker``'s horse took and did not register back at the front
    of ``queue``, in the order they were taken, and return their ids. None of them started, so
    none spends a retry."""
    redis, taken = queue.connection, keys.taken(queue.name, taker)
    given = []
    while (job_id := replies.text(redis.lmove(taken, queue.key, "RIGHT", "LEFT"))) is not None:
        given.append(job_id)
    return given[::-1]


def give_back_orphans(queue: Queue) -> list[str]:
    """:func:`give_back` the jobs taken by workers that are gone (a worker killed with its
    horse between the two steps), and return their ids."""
    redis, given = queue.connection, []
    for taker in replies.texts(redis.smembers(keys.takers(queue.name))):
        if redis.exists(Worker.redis_worker_namespace_prefix + taker):
            continue
        given += give_back(queue, taker)
        redis.srem(keys.takers(queue.name), taker)
    return given


# -- disputes -----------------------------------------------------------------------------------


def enqueue_evidence(queue: Queue, dispute_id: str) -> None:
    """Queue the job building a dispute's evidence (retried; building it twice keeps one)."""
    queue.enqueue(
        BUILD_EVIDENCE, dispute_id, job_id=f"evidence-{dispute_id}", retry=Retry(max=MATCH_RETRIES)
    )


def enqueue_remedy(queue: Queue, dispute_id: str) -> None:
    """Queue the job applying an upheld ruling's remedy (retried; applied once however often it
    runs, :meth:`arena.store.disputes.DisputeBook.void_and_replace`)."""
    queue.enqueue(
        APPLY_REMEDY, dispute_id, job_id=f"remedy-{dispute_id}", retry=Retry(max=MATCH_RETRIES)
    )

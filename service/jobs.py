"""Handing work to the RQ workers: jobs are named by import path and take ids only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import redis
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job

from workers.queueing import enqueue_match, match_job_id

RUN_TOURNAMENT = "workers.jobs.run_tournament"


def tournament_job_id(tournament_id: str) -> str:
    return f"tournament-{tournament_id}"


def enqueue_tournament(client: redis.Redis, queue: str, tournament_id: str) -> str:
    """Queue the job that plays the tournament; returns the job's id."""
    job = Queue(queue, connection=client).enqueue(
        RUN_TOURNAMENT, tournament_id, job_id=tournament_job_id(tournament_id)
    )
    return str(job.id)


def cancel_tournament_job(client: redis.Redis, tournament_id: str) -> None:
    """Take the tournament's job off the queue if it has not started (a running job sees the
    tournament's cancelled status and stops)."""
    try:
        job = Job.fetch(tournament_job_id(tournament_id), connection=client)
    except NoSuchJobError:
        return
    if job.get_status() in {"queued", "scheduled", "deferred"}:
        job.cancel()


def requeue_matches(client: redis.Redis, queue: str, match_ids: Iterable[str]) -> None:
    """Queue the matches' jobs afresh, each with all its retries (the failed job is deleted,
    which takes it off rq's failed registry)."""
    arena_queue = Queue(queue, connection=client)
    for match_id in match_ids:
        with contextlib.suppress(NoSuchJobError):
            Job.fetch(match_job_id(match_id), connection=client).delete()
        enqueue_match(arena_queue, match_id)


def workers_and_depth(client: redis.Redis, queue: str, *, live_within_s: int) -> tuple[int, int]:
    """The RQ workers of ``queue`` that are alive, and the jobs waiting on it.

    A worker is alive if its last heartbeat is at most ``live_within_s`` old (the workers'
    ``worker_ttl_s``: an idle worker beats every ``worker_ttl_s - 15`` s, a busy one every
    ``job_heartbeat_s``). rq keeps a killed worker's key for ``worker_ttl_s + 60`` s after its
    last beat, so its mere presence says nothing."""
    arena_queue = Queue(queue, connection=client)
    cutoff = datetime.now(UTC) - timedelta(seconds=live_within_s)
    beats = [w.last_heartbeat for w in Worker.all(queue=arena_queue)]
    return sum(1 for beat in beats if beat is not None and beat >= cutoff), arena_queue.count

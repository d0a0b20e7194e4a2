"""Handing work to the RQ workers: jobs are named by import path and take ids only."""

from __future__ import annotations

import redis
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job

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


def workers_and_depth(client: redis.Redis, queue: str) -> tuple[int, int]:
    """Live RQ workers and the jobs waiting on ``queue``."""
    return len(Worker.all(connection=client)), Queue(queue, connection=client).count

"""Match jobs that failed for good: their matches are marked failed, with the reason.

A match job that raises, or whose work horse dies, is run again up to
:data:`~arena.queue.MATCH_RETRIES` times; after that rq leaves it in its failed registry,
whichever way it failed (an exception in the horse, a horse killed, a job abandoned by a dead
worker). The workers' registry sweep (:class:`~workers.worker.ArenaWorker`) then calls
:func:`settle_failed_matches`, which marks each such match failed with the last line of rq's
error, so that its tournament can end as ``done_with_failures`` instead of staying ``running``.
"""

from __future__ import annotations

from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry

from arena.records import MatchStatus
from arena.store import Store

MATCH_JOB_PREFIX = "match-"
REASON_CHARS = 500
"""A failure's reason is cut to this length (a traceback's last line can be long)."""


def failed_match_jobs(queue: Queue) -> list[str]:
    """The ids of the match jobs in ``queue``'s failed registry."""
    return [
        j for j in FailedJobRegistry(queue=queue).get_job_ids() if j.startswith(MATCH_JOB_PREFIX)
    ]


def settle_failed_matches(queue: Queue, store: Store) -> list[str]:
    """Mark failed every match whose job is in ``queue``'s failed registry and that is neither
    recorded nor already marked; returns their ids."""
    job_ids = failed_match_jobs(queue)
    match_ids = [j.removeprefix(MATCH_JOB_PREFIX) for j in job_ids]
    statuses = store.match_statuses(match_ids)
    settled = []
    for job_id, match_id in zip(job_ids, match_ids, strict=True):
        if statuses.get(match_id) not in {MatchStatus.QUEUED, MatchStatus.RUNNING}:
            continue
        if store.mark_match_failed(match_id, failure_reason(queue, job_id)):
            settled.append(match_id)
    return settled


def failure_reason(queue: Queue, job_id: str) -> str:
    """Why the job failed, as rq recorded its last run: the last line of the traceback, or
    rq's note of a killed horse or an abandoned job."""
    try:
        job = Job.fetch(job_id, connection=queue.connection)
    except NoSuchJobError:
        return "its job failed (rq no longer has the details)"
    result = job.latest_result()
    text = (result.exc_string if result is not None else None) or ""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "its job failed with no error recorded")[:REASON_CHARS]

"""Scheduled tournaments, the ladder's rounds and the gauntlets' sweep: rq's cron scheduler,
kept in step with the stored schedules.

``python -m workers cron`` runs an :class:`ArenaCron`: one rq cron job per stored schedule,
queueing :func:`workers.jobs.run_schedule` when its cron expression fires, and one queueing
the ladder's matchmaking round (:func:`workers.jobs.run_ladder`) every ``ladder_interval_s``
seconds, one the gauntlets' sweep (:func:`workers.jobs.run_gauntlets`) every
``gauntlet_sweep_s``, one the archive's sweep (:func:`workers.jobs.run_archive_sweep`) every
``archive_sweep_s`` and one the recovery from outages (:func:`workers.jobs.run_recovery`) every
``recovery_s`` (none of these when its interval is 0). Before each round of enqueueing it reads the
schedules again, so a schedule created or deleted through the API takes effect within
:data:`SYNC_S` seconds, without restarting the process.
"""

from __future__ import annotations

from typing import Any

from rq.cron import CronJob, CronScheduler

from arena.store import Store
from workers.jobs import run_archive_sweep, run_gauntlets, run_ladder, run_recovery, run_schedule

SYNC_S = 10.0
"""The longest the scheduler sleeps before it reads the stored schedules again."""


LADDER_JOB = "ladder"
GAUNTLETS_JOB = "gauntlets"
ARCHIVE_SWEEP_JOB = "archive-sweep"
RECOVERY_JOB = "recovery"


def cron_job_name(schedule_id: str) -> str:
    return f"schedule-{schedule_id}"


class ArenaCron(CronScheduler):
    """rq's :class:`~rq.cron.CronScheduler` whose jobs are the store's schedules."""

    def __init__(
        self,
        store: Store,
        queue_name: str,
        *,
        ladder_interval_s: int = 0,
        gauntlet_sweep_s: int = 0,
        archive_sweep_s: int = 0,
        recovery_s: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(connection=store.redis, **kwargs)
        self.store = store
        self.queue_name = queue_name
        if gauntlet_sweep_s:
            self.register(
                run_gauntlets,
                queue_name=queue_name,
                interval=gauntlet_sweep_s,
                ttl=gauntlet_sweep_s,
                name=GAUNTLETS_JOB,
            )
        if archive_sweep_s:
            self.register(
                run_archive_sweep,
                queue_name=queue_name,
                interval=archive_sweep_s,
                ttl=archive_sweep_s,
                name=ARCHIVE_SWEEP_JOB,
            )
        if recovery_s:
            self.register(
                run_recovery,
                queue_name=queue_name,
                interval=recovery_s,
                ttl=recovery_s,
                name=RECOVERY_JOB,
            )
        if ladder_interval_s:
            # a round queued but not started within its interval is dropped: the next one
            # does its work, so a busy queue does not pile rounds up
            self.register(
                run_ladder,
                queue_name=queue_name,
                interval=ladder_interval_s,
                ttl=ladder_interval_s,
                name=LADDER_JOB,
            )

    def sync(self) -> None:
        """Register the schedules that are new and drop the deleted ones. A kept job keeps its
        next fire time (schedules are never edited, only created and deleted)."""
        schedules = {cron_job_name(s.id): s for s in self.store.list_schedules()}
        kept = {*schedules, LADDER_JOB, GAUNTLETS_JOB, ARCHIVE_SWEEP_JOB, RECOVERY_JOB}
        self._cron_jobs = [job for job in self._cron_jobs if job.name in kept]
        known = {job.name for job in self._cron_jobs}
        for name, schedule in schedules.items():
            if name not in known:
                self.register(
                    run_schedule,
                    queue_name=self.queue_name,
                    args=(schedule.id,),
                    cron=schedule.cron,
                    name=name,
                )

    def enqueue_jobs(self) -> list[CronJob]:
        self.sync()
        return super().enqueue_jobs()

    def calculate_sleep_interval(self) -> float:
        return min(super().calculate_sleep_interval(), SYNC_S)

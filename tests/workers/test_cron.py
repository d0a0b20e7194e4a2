"""Scheduled tournaments: ``python -m workers cron`` registers one rq cron job per stored
schedule, rq queues ``run_schedule`` when the cron expression fires, and ``run_schedule``
creates and starts a ladder round among the bots active at that time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rq import Queue
from rq.cron import CronScheduler

from referee import Rules
from replays.log import TimeControl
from tests.workers.conftest import environment
from workers.cli import register_schedules
from workers.config import Config
from workers.jobs import run_schedule
from workers.queueing import match_job_id
from workers.records import BotStatus, Format, TournamentSpec, TournamentStatus
from workers.store import Store

TEMPLATE = TournamentSpec(
    name="ladder round",
    participants=(),
    format=Format(duplicate=True, matches_per_table=1, hands=1),
    rules=Rules(),
    time_control=TimeControl(1000, 5000, 5),
)


def test_a_stored_schedule_is_queued_at_its_cron_time(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    minutely = store.create_schedule("* * * * *", TEMPLATE)
    nightly = store.create_schedule("0 3 * * *", TEMPLATE)
    scheduler = CronScheduler(connection=store.redis)
    register_schedules(scheduler, store, config.queue_name)
    jobs = {job.name: job for job in scheduler.get_jobs()}
    assert set(jobs) == {f"schedule-{minutely.id}", f"schedule-{nightly.id}"}
    cron_job = jobs[f"schedule-{minutely.id}"]
    assert (cron_job.func, cron_job.args) == (run_schedule, (minutely.id,))
    assert (cron_job.cron, cron_job.queue_name) == ("* * * * *", config.queue_name)
    fires_at = cron_job.next_enqueue_time
    assert scheduler.enqueue_jobs() == []  # nothing is due before its time
    # the clock reaches the next minute (rq's scheduler loop reads rq.cron.now)
    monkeypatch.setattr("rq.cron.now", lambda: fires_at + timedelta(seconds=1))
    assert [job.name for job in scheduler.enqueue_jobs()] == [f"schedule-{minutely.id}"]
    queue = Queue(config.queue_name, connection=store.redis)
    queued = [job for job in queue.get_jobs() if job.func_name == "workers.jobs.run_schedule"]
    assert [job.args for job in queued] == [(minutely.id,)]


def test_run_schedule_starts_a_round_among_all_active_bots(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)
    bots = {}
    for name in ("a", "b", "c", "d", "e", "paused"):
        bot, _ = store.create_bot(
            name=name, endpoint="http://127.0.0.1:9/bot", description="",
            contact="t@example.com", version="1", secret="s3cret",
        )  # fmt: skip
        bots[name] = bot.id
    store.set_bot_status(bots["paused"], BotStatus.PAUSED)
    schedule = store.create_schedule("* * * * *", TEMPLATE)
    run_schedule(schedule.id)
    [tournament] = store.list_tournaments(page=1, per_page=10).items
    active = sorted(bot_id for name, bot_id in bots.items() if name != "paused")
    assert tournament.schedule_id == schedule.id
    assert sorted(tournament.spec.participants) == active
    assert tournament.status is TournamentStatus.RUNNING
    assert tournament.total == 5 * 4  # 5 tables of 4, each deal in 4 rotations
    matches = store.list_matches(page=1, per_page=100, tournament_id=tournament.id).items
    assert len(matches) == tournament.total
    queue = Queue(config.queue_name, connection=store.redis)
    assert set(queue.get_job_ids()) == {match_job_id(m.id) for m in matches}
    run_schedule("s_unknown")  # a deleted schedule queues nothing
    assert store.list_tournaments(page=1, per_page=10).total == 1

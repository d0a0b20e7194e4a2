"""The workers' command line: ``python -m workers worker`` runs an RQ worker on the arena's
queue, ``python -m workers cron`` runs rq's cron scheduler with the stored tournament
schedules. Both read the configuration from the environment (docs/OPERATIONS.md)."""

from __future__ import annotations

import click
import redis
from rq.cron import CronScheduler

from workers.config import Config
from workers.jobs import run_schedule
from workers.queueing import make_worker
from workers.store import Store


@click.group()
def main() -> None:
    """The arena's RQ workers."""


@main.command()
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
def worker(burst: bool) -> None:
    """Play tournaments and matches from the arena's queue."""
    config = Config.from_environment()
    connection = redis.Redis.from_url(config.redis_url)
    make_worker(config, connection).work(burst=burst)


@main.command()
def cron() -> None:
    """Queue a round of each stored schedule when its cron expression fires (``rq cron``).

    Schedules are read at start: restart the process after adding or deleting one."""
    config = Config.from_environment()
    connection = redis.Redis.from_url(config.redis_url)
    scheduler = CronScheduler(connection=connection)
    for schedule in Store(connection, config.secret_key).list_schedules():
        scheduler.register(
            run_schedule,
            queue_name=config.queue_name,
            args=(schedule.id,),
            cron=schedule.cron,
            name=f"schedule-{schedule.id}",
        )
    scheduler.start()


if __name__ == "__main__":
    main()

"""The workers' command line: ``python -m workers worker`` runs an RQ worker on the arena's
queue, ``python -m workers cron`` runs rq's cron scheduler with the stored tournament
schedules. Both read the configuration from the environment (docs/OPERATIONS.md)."""

from __future__ import annotations

import time

import click
import redis
from rq.cron import CronScheduler

from workers.config import Config
from workers.jobs import run_schedule
from workers.queueing import make_worker
from workers.store import Store

REDIS_WAIT_S = 30.0


@click.group()
def main() -> None:
    """The arena's RQ workers."""


def _connect(config: Config) -> redis.Redis:
    """Redis, waited for: the processes of the Procfile start in any order."""
    connection = redis.Redis.from_url(config.redis_url)
    deadline = time.monotonic() + REDIS_WAIT_S
    while True:
        try:
            connection.ping()
            return connection
        except (redis.ConnectionError, redis.BusyLoadingError) as error:
            if time.monotonic() > deadline:
                raise click.ClickException(
                    f"Redis at {config.redis_url} is not answering after {REDIS_WAIT_S:.0f} s: "
                    f"{error}"
                ) from None
            time.sleep(0.2)


@main.command()
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
def worker(burst: bool) -> None:
    """Play tournaments and matches from the arena's queue."""
    config = Config.from_environment()
    connection = _connect(config)
    make_worker(config, connection).work(burst=burst)


@main.command()
def cron() -> None:
    """Queue a round of each stored schedule when its cron expression fires (``rq cron``).

    Schedules are read at start: restart the process after adding or deleting one."""
    config = Config.from_environment()
    connection = _connect(config)
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

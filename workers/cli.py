"""The workers' command line: ``python -m workers worker`` runs an RQ worker on the arena's
queue, ``python -m workers cron`` runs rq's cron scheduler with the stored tournament
schedules (:mod:`workers.cron`). Both read the configuration from the environment, or the data
directory's settings file (:mod:`arena.settings`), and ride out a Redis restart
(docs/OPERATIONS.md)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from types import FrameType

import click
import redis
from rq.exceptions import StopRequested

from arena.config import Config, ConfigError
from arena.redis_client import connect, redacted
from arena.store import Store
from referee.build import describe
from workers.cron import ArenaCron
from workers.outage import connect_riding_out, ride_out_s
from workers.worker import ArenaWorker, make_worker

REDIS_WAIT_S = 30.0
"""How long a starting process waits for Redis before giving up."""
RESTART_BACKOFF_S = (1.0, 30.0)
"""A worker whose loop ended because Redis went away starts a new loop after the first delay,
doubled after each loop that ends within a minute, up to the second."""
_STEADY_S = 60.0


@click.group()
def main() -> None:
    """The arena's RQ workers."""


def _config() -> Config:
    """The arena's configuration, or a clear message when there is none."""
    try:
        return Config.from_environment()
    except ConfigError as error:
        raise click.ClickException(str(error)) from None


def _connect(
    config: Config, *, wait_s: float | None = REDIS_WAIT_S, riding_out: bool = False
) -> redis.Redis:
    """Redis, waited for (``wait_s`` None: as long as it takes): the processes of the Procfile
    start in any order, and a restarted Redis answers again after loading its data. A worker's
    client rides out an outage (``riding_out``, :mod:`workers.outage`)."""
    connection = connect_riding_out(config) if riding_out else connect(config.redis_url)
    deadline = None if wait_s is None else time.monotonic() + wait_s
    while True:
        try:
            connection.ping()
            return connection
        except (redis.ConnectionError, redis.BusyLoadingError) as error:
            if deadline is not None and time.monotonic() > deadline:
                raise click.ClickException(
                    f"Redis at {redacted(config.redis_url)} is not answering after "
                    f"{REDIS_WAIT_S:.0f} s: {error}"
                ) from None
            time.sleep(0.2)


@main.command()
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
def worker(burst: bool) -> None:
    """Play tournaments and matches from the arena's queue.

    A Redis outage (a restart, a failover) of up to half GONGZHU_ABANDONED_AFTER_S is ridden
    out: every command waits for Redis, and the matches in flight go on. A longer one ends rq's
    work loop; this command then stops the work horse, waits for Redis and starts a new loop,
    so that a Redis restart needs no worker restart, and the interrupted matches are played
    again (docs/OPERATIONS.md)."""
    config = _config()
    connection = _connect(config, riding_out=True)
    click.echo(f"worker: referee {describe()}", err=True)
    click.echo(f"worker: rides out a Redis outage of up to {ride_out_s(config):g} s", err=True)
    delay = RESTART_BACKOFF_S[0]
    while True:
        arena_worker = make_worker(config, connection)
        started = time.monotonic()
        # rq's teardown raises when it cannot reach Redis either: the loop ended because of it
        with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
            arena_worker.work(burst=burst)
        if burst or arena_worker.stop_signalled:
            return
        _abandon_horse(arena_worker)
        if time.monotonic() - started > _STEADY_S:
            delay = RESTART_BACKOFF_S[0]
        click.echo(
            f"worker: Redis did not answer for {ride_out_s(config):g} s: the work loop ended; "
            f"a new one in {delay:g} s",
            err=True,
        )
        reconnected = _reconnect(config, delay, riding_out=True)
        if reconnected is None:
            return
        connection = reconnected
        delay = min(2 * delay, RESTART_BACKOFF_S[1])


def _reconnect(config: Config, delay: float, *, riding_out: bool = False) -> redis.Redis | None:
    """After ``delay``, Redis as soon as it answers again; None if SIGINT or SIGTERM came first.
    (rq's loops install their own signal handlers; these hold while we wait between loops.)"""
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, _stop_waiting)
    try:
        time.sleep(delay)
        return _connect(config, wait_s=None, riding_out=riding_out)
    except StopRequested:
        return None


def _stop_waiting(signum: int, frame: FrameType | None) -> None:
    raise StopRequested


def _abandon_horse(arena_worker: ArenaWorker) -> None:
    """Stop the work horse of a loop that ended mid-job. Its job is still in rq's started
    registry; with no heartbeat it is found abandoned and retried, and its match is played
    again from its deals (nothing of the half-played match was recorded)."""
    if not arena_worker.horse_pid:
        return
    arena_worker.kill_horse()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(arena_worker.horse_pid, 0)


@main.command()
def cron() -> None:
    """Queue a round of each stored schedule when its cron expression fires, the ladder's
    matchmaking round every GONGZHU_LADDER_INTERVAL_S, the gauntlets' sweep every
    GONGZHU_GAUNTLET_SWEEP_S, the archive's every GONGZHU_ARCHIVE_SWEEP_S and the recovery from
    outages every GONGZHU_RECOVERY_S (rq's cron).

    A schedule created or deleted through the API takes effect within 10 s. When Redis goes away
    the scheduler waits for it and starts again, re-reading the schedules; a fire time that
    passes while Redis is down is skipped (docs/OPERATIONS.md)."""
    config = _config()
    connection = _connect(config)
    while True:
        scheduler = ArenaCron(
            Store.from_config(config, client=connection),
            config.queue_name,
            ladder_interval_s=config.ladder_interval_s,
            gauntlet_sweep_s=config.gauntlet_sweep_s,
            archive_sweep_s=config.archive_sweep_s,
            recovery_s=config.recovery_s,
        )
        # start() returns on SIGINT or SIGTERM, and raises when it cannot reach Redis
        with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
            scheduler.start()  # type: ignore[no-untyped-call]  # rq: unannotated
            return
        click.echo("cron: Redis lost; the scheduler starts again when it answers", err=True)
        reconnected = _reconnect(config, RESTART_BACKOFF_S[0])
        if reconnected is None:
            return
        connection = reconnected

"""``gongzhu migrate-replays``: the logs recorded before the archive, moved out of Redis into
it (docs/OPERATIONS.md, "Moving logs out of Redis")."""

from __future__ import annotations

import click

from arena import archiving
from arena.config import Config, ConfigError
from arena.context import Arena
from arena.errors import UNAVAILABLE


@click.command("migrate-replays")
@click.option(
    "--repack",
    is_flag=True,
    help="Store each log in the current, smaller form (about 4.5x smaller; slower: the referee "
    "rebuilds each log's requests).",
)
def migrate_replays(repack: bool) -> None:
    """Move every match log still kept in Redis into the archive (GONGZHU_ARCHIVE), each
    checked against its seal, written, read back, then deleted from Redis.

    Safe to interrupt and to run again, also while the arena runs: a log is deleted from Redis
    only once the archive returns it, and a second run moves what the first left. A log that
    fails its check stays in Redis and is listed; the command then exits with status 1."""
    try:
        arena = Arena.from_config(Config.from_environment())
        match_ids = archiving.to_migrate(arena)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    except UNAVAILABLE as error:
        raise click.ClickException(f"cannot reach the arena's Redis: {error}") from None
    click.echo(f"{len(match_ids)} log(s) in Redis to move to {arena.config.archive}")
    try:
        with click.progressbar(length=len(match_ids), label="moving logs") as bar:
            done = archiving.migrate(arena, match_ids, each=lambda _: bar.update(1), repack=repack)
    except UNAVAILABLE as error:
        raise click.ClickException(
            f"stopped: {error}. What was moved stays moved: run the command again to go on"
        ) from None
    click.echo(f"moved {done.moved} log(s) to the archive")
    if done.left:
        for match_id, reason in sorted(done.left.items()):
            click.echo(f"left in Redis: {match_id}: {reason}", err=True)
        raise SystemExit(1)

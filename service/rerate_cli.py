"""``gongzhu rerate``: every rated match rated again under the arena's current rating model
(docs/OPERATIONS.md, "Re-rating the ladder")."""

from __future__ import annotations

import click

from arena.config import Config, ConfigError
from arena.context import Arena
from arena.errors import UNAVAILABLE
from arena.ratings import SCALE
from arena.store.rerating import rerate


@click.command("rerate")
def rerate_command() -> None:
    """Rate every rated match again from its sealed log, in the order the matches were
    recorded, and replace the stored ratings by the result in one transaction.

    Needed once after an upgrade that changes the rating model (the ladder is shown empty
    until then; the matchmaker's next round also does it). Safe to run while the arena runs:
    matches recorded meanwhile are rated too, and a run that stops changes nothing."""
    try:
        arena = Arena.from_config(Config.from_environment())
        before = arena.store.ratings_scale()
        rated = rerate(arena.store)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    except UNAVAILABLE as error:
        raise click.ClickException(
            f"stopped: {error}. Nothing was changed: run the command again"
        ) from None
    click.echo(f"re-rated {rated} match(es): the ratings were on {before!r}, now on {SCALE!r}")

"""Helpers of the ladder tests: a ladder configuration quick to play, and bots served on
loopback and entered in the ladder."""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack

from arena.config import Config
from arena.records import BotStatus
from arena.store import Store
from bot_sdk import Bot
from bot_sdk.server import make_app
from referee import Card, Observation
from tests.bot_sdk.bot_sdk_support import running

HOUSE = ("house:easy", "house:normal")
"""The house members of these ladders (Hard thinks for 150 ms a card: left out, for speed)."""


class Quick(Bot):
    name = "quick"
    version = "2.5"

    def play(self, obs: Observation) -> Card:
        return obs.legal.lowest()


def ladder_config(config: Config) -> Config:
    """``config`` with a matchmaking round every 2 s, one-hand matches and no house Hard."""
    return dataclasses.replace(
        config, ladder_interval_s=2, ladder_tables=4, ladder_hands=1, ladder_house=HOUSE
    )


def enter(
    store: Store,
    stack: ExitStack,
    name: str,
    bot: type[Bot] = Quick,
    *,
    max_concurrent: int = 1,
    status: BotStatus = BotStatus.ACTIVE,
) -> str:
    """A bot served on loopback, registered and entered in the ladder."""
    secret = f"secret-of-{name}"
    served = type(name, (bot,), {"name": name})
    url = stack.enter_context(running(make_app(served, secret)))
    created, _ = store.create_bot(
        name=name,
        endpoint=url,
        description="",
        contact="t@example.com",
        version="2.5",
        secret=secret,
        status=status,
        ladder=True,
        max_concurrent=max_concurrent,
    )
    return created.id

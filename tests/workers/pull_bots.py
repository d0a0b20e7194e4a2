"""Bots the pull-bot end-to-end tests connect with ``python -m bot_sdk connect``."""

from __future__ import annotations

import time

from bot_sdk import Bot
from referee import Card, Observation


class Deliberate(Bot):
    """Plays the lowest card after thinking 150 ms: a match lasts long enough to kill the bot in
    the middle of it."""

    name = "deliberate"
    version = "3.1"

    def play(self, obs: Observation) -> Card:
        time.sleep(0.15)
        return obs.legal.lowest()

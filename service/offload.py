"""CPU-bound work off the event loop. Under gunicorn's gevent workers (the Procfile's web line)
a request that computes for a while (the house bots' turns in a human game) would hold up every
other request of its worker until it is done; run in one of gevent's native threads instead, it
shares the CPU with them the way threads do. Elsewhere (the tests' servers, the workers) the
function simply runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from gevent import get_hub, monkey

from bot_sdk.bot import Bot
from referee import AnyMove, HandResult, Observation, Outcome

T = TypeVar("T")


def run_cpu_bound(function: Callable[..., T], *args: object) -> T:
    """``function(*args)``, in a native thread when serving under gevent."""
    if not monkey.is_module_patched("threading"):
        return function(*args)
    result: T = get_hub().threadpool.apply(function, args)
    return result


class ThreadedBot(Bot):
    """A bot whose decisions are computed by :func:`run_cpu_bound` (it must do no I/O)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name

    def decide(self, obs: Observation) -> AnyMove:
        return run_cpu_bound(self.bot.decide, obs)

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.bot.hand_end(result, observation)

    def match_end(self, outcome: Outcome) -> None:
        self.bot.match_end(outcome)

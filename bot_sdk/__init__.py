"""The bot SDK: write a Gong Zhu bot in a few lines and serve it to the arena.

Its request bodies may run compiled by mypyc, as the referee does (referee/build.py).
"""

# ruff: noqa: E402  (the choice of build must come before the modules it chooses between)
from referee import build

build.use_compiled(__name__, __path__)

from bot_sdk.bot import Bot, FunctionBot, to_card, to_cards

__all__ = ["Bot", "FunctionBot", "to_card", "to_cards"]

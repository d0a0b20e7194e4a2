"""The house bots the arena offers as opponents: Easy, Normal and Hard.

>>> bot = house_bot("normal")
>>> bot.name
'house-normal'
"""

from __future__ import annotations

from bot_sdk.bot import Bot
from bot_sdk.house.easy import EasyBot
from bot_sdk.house.hard import HardBot
from bot_sdk.house.normal import NormalBot

HOUSE_BOTS: dict[str, type[EasyBot] | type[NormalBot] | type[HardBot]] = {
    "easy": EasyBot,
    "normal": NormalBot,
    "hard": HardBot,
}


def house_bot(name: str, seed: int | str | None = None) -> Bot:
    """A new house bot by level name (``easy``, ``normal``, ``hard``; any case)."""
    try:
        cls = HOUSE_BOTS[name.lower()]
    except KeyError:
        raise ValueError(f"no house bot {name!r}; choose one of {', '.join(HOUSE_BOTS)}") from None
    return cls(seed)


__all__ = ["HOUSE_BOTS", "EasyBot", "HardBot", "NormalBot", "house_bot"]

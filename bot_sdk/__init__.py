"""The bot SDK: write a Gong Zhu bot in a few lines and serve it to the arena."""

from bot_sdk.bot import Bot, FunctionBot, to_card, to_cards

__all__ = ["Bot", "FunctionBot", "to_card", "to_cards"]

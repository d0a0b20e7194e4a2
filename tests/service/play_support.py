"""Helpers of the human-game tests (API and page): deals with a wanted property, and the
referee's own replay of a stored game to compare with what the arena shows."""

from __future__ import annotations

from arena.records import HumanGame
from referee import EXPOSABLE_CARDS, Game, Rules, deal_from_seed

ALL_EASY = ["house:easy"] * 3


def seed_where(*, seat: int, exposable: bool) -> str:
    """A deal seed whose first hand gives ``seat`` an exposable card (or none)."""
    for n in range(1000):
        held = deal_from_seed(str(n), 1)[seat] & EXPOSABLE_CARDS.mask
        if bool(held) == exposable:
            return str(n)
    raise AssertionError("no such seed in 1000")


def referee_game(stored: HumanGame) -> Game:
    """The referee's game after every stored decision, replayed here independently."""
    game = Game(stored.rules, seed=stored.seed)
    for record in stored.moves:
        game.push(record.applied)
    return game


def one_hand() -> dict[str, object]:
    return Rules(fixed_hands=1).to_json()

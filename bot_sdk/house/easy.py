"""Easy: plays low and ducks points, with just enough sense to unload the pig and big hearts."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from bot_sdk.bot import Bot
from bot_sdk.house.table import (
    GOAT_BIT,
    HIGH_HEARTS,
    PIG_BIT,
    POINT_CARDS,
    below,
    cards_in,
    highest,
    lowest,
    suit_mask,
    trick_winner,
)
from referee import CardSet, Observation
from referee.cards import PIG


class EasyBot(Bot):
    """A beginner: never exposes, passes its highest cards, picks among equal cards at random."""

    name = "house-easy"

    def __init__(self, seed: int | str | None = None) -> None:
        self._rng = random.Random(seed)

    def play(self, obs: Observation) -> int:
        legal = obs.legal.mask
        if not obs.trick:
            return self._by_rank(legal, min)
        follow = legal & suit_mask(obs.trick[0][1])
        if not follow:
            if legal & PIG_BIT:
                return PIG
            if legal & HIGH_HEARTS:
                return highest(legal & HIGH_HEARTS)
            return self._by_rank(legal & ~GOAT_BIT or legal, max)
        _, win = trick_winner(obs.trick)
        ducks = follow & below(win)
        points = any(1 << card & POINT_CARDS for _, card in obs.trick)
        return highest(ducks) if points and ducks else lowest(follow)

    def expose(self, obs: Observation) -> CardSet:
        return CardSet()

    def pass_cards(self, obs: Observation) -> list[int]:
        count = obs.decision.count if obs.decision and obs.decision.count else 3
        return sorted(obs.legal, key=lambda c: (c % 13, c), reverse=True)[:count]

    def _by_rank(self, mask: int, pick: Callable[[Iterable[int]], int]) -> int:
        """A random card among those of ``mask`` whose rank ``pick`` (min or max) chooses."""
        cards = list(cards_in(mask))
        rank = pick(c % 13 for c in cards)
        return self._rng.choice([c for c in cards if c % 13 == rank])

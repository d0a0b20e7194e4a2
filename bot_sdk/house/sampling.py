"""Dealing the unseen cards to the other seats, consistently with what the table shows.

A sample respects every seat's hand size, the suits it has shown void in, and the cards it
must hold (its unplayed exposed cards, the cards we passed to it). Cards are placed most
constrained first, each to a seat drawn in proportion to the room it has left; a rare dead
end is retried, and as a last resort voids are dropped (sizes and known cards never are).
"""

from __future__ import annotations

import random

from bot_sdk.house.table import Table, cards_in
from referee.cards import SUIT_MASKS

_TRIES = 20


def sample_holdings(t: Table, rng: random.Random) -> list[int]:
    """Every seat's cards now: ours, and a random consistent guess for the others."""
    others = [s for s in range(4) if s != t.seat]
    free = t.unseen
    for s in others:
        free &= ~t.known[s]
    for respect_voids in (True, False):
        allowed = {
            suit: [s for s in others if not (respect_voids and t.voids[s] & SUIT_MASKS[suit])]
            for suit in range(4)
        }
        cards = list(cards_in(free))
        for _ in range(_TRIES):
            rng.shuffle(cards)
            cards.sort(key=lambda c: len(allowed[c // 13]))
            deal = _deal(t, others, cards, allowed, rng)
            if deal is not None:
                return deal
    raise ValueError("the observation admits no deal of the unseen cards")


def _deal(
    t: Table,
    others: list[int],
    cards: list[int],
    allowed: dict[int, list[int]],
    rng: random.Random,
) -> list[int] | None:
    holdings = list(t.known)
    holdings[t.seat] = t.hand
    room = [t.counts[s] - t.known[s].bit_count() for s in range(4)]
    for card in cards:
        seats = [s for s in allowed[card // 13] if room[s] > 0]
        if not seats:
            return None
        pick = rng.randrange(sum(room[s] for s in seats))
        for s in seats:
            pick -= room[s]
            if pick < 0:
                break
        holdings[s] |= 1 << card
        room[s] -= 1
    return holdings if all(room[s] == 0 for s in others) else None

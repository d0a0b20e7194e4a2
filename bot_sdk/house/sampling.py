"""Dealing the unseen cards to the other seats, consistently with what the table shows.

A sample respects every seat's hand size, the suits it has shown void in, and the cards it
must hold (its unplayed exposed cards, the cards we passed to it). Cards are placed most
constrained first, each to a seat drawn in proportion to the room it has left, weighed by
what the seat's play and exposures say (:func:`leanings`); a rare dead end is retried, and as
a last resort voids are dropped (sizes and known cards never are).
"""

from __future__ import annotations

import random

from bot_sdk.house.table import (
    DIAMONDS,
    GOAT_BIT,
    HIGH_HEARTS,
    PIG_BIT,
    POINT_CARDS,
    SPADES,
    Table,
    cards_in,
    suit_mask,
)
from referee.cards import PIG, SUIT_MASKS

_TRIES = 20
UNLIKELY = 1
"""A seat's weight for a card its play says it lacks, against :data:`EVEN`."""
EVEN = 10
LIKELY = 30
"""A seat's weight for a card its exposure says it holds."""
_LOW_SPADES = SPADES & (PIG_BIT - 1)


def leanings(t: Table) -> tuple[list[int], list[int]]:
    """Per seat, the unseen cards it most likely lacks, and those it most likely holds.

    Lacks: a seat that threw another card on a rival's trick while void kept neither the pig
    nor a high heart (everyone sheds those first), nor did one that followed spades under a
    rival's king or ace without dropping the pig. Holds: exposing the pig says long low spades,
    exposing the goat says the high diamonds to win it.
    """
    lacks = [0, 0, 0, 0]
    holds = [0, 0, 0, 0]
    tricks = [tuple(x.plays()) for x in t.obs.tricks]
    if t.trick:
        tricks.append(t.trick)
    for plays in tricks:
        led = suit_mask(plays[0][1])
        win_seat, win = plays[0]
        for seat, card in plays[1:]:
            rival = win_seat not in (seat, _partner(t, seat))
            bit = 1 << card
            if rival and not bit & led and not bit & PIG_BIT:
                # A discard on a rival's trick: the pig first, then the high hearts.
                lacks[seat] |= PIG_BIT if bit & POINT_CARDS else PIG_BIT | HIGH_HEARTS
            elif rival and led == SPADES and win > PIG and not bit & PIG_BIT:
                lacks[seat] |= PIG_BIT
            if bit & led and card > win:
                win_seat, win = seat, card
    for s in range(4):
        if s != t.seat and t.obs.exposed[s].mask & PIG_BIT:
            holds[s] |= _LOW_SPADES
        if s != t.seat and t.obs.exposed[s].mask & GOAT_BIT:
            holds[s] |= DIAMONDS
    return [m & t.unseen for m in lacks], [m & t.unseen for m in holds]


def _partner(t: Table, seat: int) -> int | None:
    return (seat + 2) % 4 if t.partner is not None else None


def sample_holdings(t: Table, rng: random.Random, *, infer: bool = True) -> list[int]:
    """Every seat's cards now: ours, and a random consistent guess for the others (weighed by
    :func:`leanings` with ``infer``)."""
    others = [s for s in range(4) if s != t.seat]
    free = t.unseen
    for s in others:
        free &= ~t.known[s]
    lacks, holds = leanings(t) if infer else ([0] * 4, [0] * 4)
    for respect_voids in (True, False):
        allowed = {
            suit: [s for s in others if not (respect_voids and t.voids[s] & SUIT_MASKS[suit])]
            for suit in range(4)
        }
        cards = list(cards_in(free))
        for _ in range(_TRIES):
            rng.shuffle(cards)
            cards.sort(key=lambda c: len(allowed[c // 13]))
            deal = _deal(t, others, cards, allowed, leaning=(lacks, holds), rng=rng)
            if deal is not None:
                return deal
    raise ValueError("the observation admits no deal of the unseen cards")


def _deal(
    t: Table,
    others: list[int],
    cards: list[int],
    allowed: dict[int, list[int]],
    *,
    leaning: tuple[list[int], list[int]],
    rng: random.Random,
) -> list[int] | None:
    lacks, holds = leaning
    holdings = list(t.known)
    holdings[t.seat] = t.hand
    room = [t.counts[s] - t.known[s].bit_count() for s in range(4)]
    for card in cards:
        bit = 1 << card
        seats = [s for s in allowed[card // 13] if room[s] > 0]
        if not seats:
            return None
        weight = {
            s: room[s] * (UNLIKELY if lacks[s] & bit else LIKELY if holds[s] & bit else EVEN)
            for s in seats
        }
        pick = rng.randrange(sum(weight.values()))
        for s in seats:
            pick -= weight[s]
            if pick < 0:
                break
        holdings[s] |= bit
        room[s] -= 1
    return holdings if all(room[s] == 0 for s in others) else None

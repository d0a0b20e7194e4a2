"""The decisions before the first lead, shared by Normal and Hard: what to expose and to pass.

Exposure doubles a card for whoever ends up with it, so it is a contract: expose the goat
only with the high diamonds to win it, the pig only with the low spades to shed it safely.
"""

from __future__ import annotations

from bot_sdk.house.table import (
    ABOVE_PIG,
    DIAMONDS,
    GOAT_BIT,
    HIGH_HEARTS,
    PIG_BIT,
    SPADES,
    cards_in,
)
from referee import CardSet, Observation, parse_card
from referee.cards import ACE_OF_HEARTS, HEARTS_MASK, SUIT_MASKS, TRANSFORMER

_AD, _KD = 1 << parse_card("AD"), 1 << parse_card("KD")
_AH_BIT = 1 << ACE_OF_HEARTS
_TC_BIT = 1 << TRANSFORMER
_CLUBS_OVER_TC = SUIT_MASKS[0] & ~((2 << TRANSFORMER) - 1)
_LOW_SPADES = SPADES & (PIG_BIT - 1)


def confident_exposures(obs: Observation) -> CardSet:
    """The exposable cards this hand backs strongly enough to double."""
    hand, choices = obs.hand.mask, obs.legal.mask
    chosen = 0
    diamonds = (hand & DIAMONDS).bit_count()
    if choices & GOAT_BIT and hand & _AD and (diamonds >= 4 or (hand & _KD and diamonds >= 3)):
        chosen |= GOAT_BIT
    if choices & PIG_BIT and (hand & _LOW_SPADES).bit_count() >= 5 and not hand & ABOVE_PIG:
        chosen |= PIG_BIT
    # TC is ours for sure only when we hold every club above it; with the goat it is x4.
    if choices & _TC_BIT and chosen & GOAT_BIT and hand & _CLUBS_OVER_TC == _CLUBS_OVER_TC:
        chosen |= _TC_BIT
    # AH doubles every heart; worth it only when we can discard it on a suit we lack.
    void_suit = any(not hand & SUIT_MASKS[s] for s in (0, 1, 3))
    if choices & _AH_BIT and void_suit and (hand & HEARTS_MASK).bit_count() <= 2:
        chosen |= _AH_BIT
    return CardSet(chosen)


def cards_to_pass(obs: Observation) -> list[int]:
    """The cards we most want rid of: an unguarded pig, the spades above it, high hearts, then
    the highest cards of short suits (to make voids); never the goat or its guards."""
    hand = obs.hand.mask
    count = obs.decision.count if obs.decision and obs.decision.count else 3
    guarded_pig = (hand & _LOW_SPADES).bit_count() >= 4

    def urgency(card: int) -> int:
        bit = 1 << card
        if bit & PIG_BIT:
            return -20 if guarded_pig else 100
        if bit & ABOVE_PIG:
            return 90 if not hand & PIG_BIT or not guarded_pig else 10
        if bit & HIGH_HEARTS:
            return 60 + card % 13
        if bit & GOAT_BIT or (bit & (_AD | _KD) and hand & GOAT_BIT):
            return -50
        short = (hand & SUIT_MASKS[card // 13]).bit_count() <= 3
        return card % 13 + (15 if short else 0)

    return sorted(cards_in(obs.legal.mask), key=lambda c: (urgency(c), c), reverse=True)[:count]

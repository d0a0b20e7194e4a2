"""A fast, deterministic playout policy over a full (determinized) referee game.

Hard's search plays every sampled deal to the end of the hand with this policy for all four
seats, so it must be cheap: pure mask arithmetic on the game's own state, no observation.
It follows Normal's main habits (duck points, shed the pig and big hearts, take a clean or
profitable last trick with a high card, keep the spades above the pig off the lead), and
under ``teams`` its partnership rules: feed the partner the goat, never drop the pig or hearts
on the partner's trick.
"""

from __future__ import annotations

from bot_sdk.house.table import ABOVE_PIG, GOAT_BIT, HIGH_HEARTS, PIG_BIT, POINT_CARDS
from referee import PLAYS, Game
from referee.cards import HEARTS_MASK, PIG, SUIT_MASKS
from referee.scoring import hearts_value

_SUITS = tuple(SUIT_MASKS)
_LEAD_AVOID = PIG_BIT | GOAT_BIT | HIGH_HEARTS
_LOW_SPADES = SUIT_MASKS[3] & (PIG_BIT - 1)


def _high_rank(mask: int) -> int:
    """The card of the highest rank in ``mask`` (spades win ties)."""
    best, best_rank = -1, -1
    for suit in _SUITS:
        cards = mask & suit
        if cards:
            card = cards.bit_length() - 1
            if card % 13 >= best_rank:
                best, best_rank = card, card % 13
    return best


def _low_rank(mask: int) -> int:
    """The card of the lowest rank in ``mask`` (clubs win ties)."""
    best, best_rank = -1, 13
    for suit in _SUITS:
        cards = mask & suit
        if cards:
            card = (cards & -cards).bit_length() - 1
            if card % 13 < best_rank:
                best, best_rank = card, card % 13
    return best


def policy(game: Game) -> int:
    """The card the seat on turn plays."""
    legal = game.legal_mask()
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    trick = game.trick
    hands = game.hands
    seat = game.to_move
    if not trick:
        avoid = _LEAD_AVOID
        if (hands[0] | hands[1] | hands[2] | hands[3]) & ~hands[seat] & PIG_BIT:
            # Hunt the pig with low spades while we hold none of the spades it could fall on.
            low = legal & _LOW_SPADES
            if low and not hands[seat] & ABOVE_PIG:
                return (low & -low).bit_length() - 1
            avoid |= ABOVE_PIG
        return _low_rank(legal & ~avoid or legal)
    led = _SUITS[trick[0] // 13]
    played = 0
    for card in trick:
        played |= 1 << card
    win = (played & led).bit_length() - 1
    partner_wins = game.rules.teams and trick.index(win) == len(trick) - 2
    follow = legal & led
    if follow:
        if partner_wins:
            follow = follow & ~PIG_BIT or follow
        if legal & PIG_BIT and win > PIG and not partner_wins:
            return PIG
        ducks = follow & ((1 << win) - 1)
        overs = follow & ~ducks & ~PIG_BIT
        if len(trick) == 3:
            value = hearts_value(played) + (100 if played & GOAT_BIT else 0)
            if played & PIG_BIT:
                value -= 100
            if overs and value >= 0:
                return overs.bit_length() - 1
            if ducks:
                return ducks.bit_length() - 1
            return (overs or follow).bit_length() - 1
        if played & GOAT_BIT and overs:
            later = 0
            for i in range(1, 4 - len(trick)):
                later |= hands[(seat + i) % 4]
            top = overs.bit_length() - 1
            if not later & led & ~((2 << top) - 1):
                return top
        if ducks:
            return ducks.bit_length() - 1
        overs = overs or follow
        if played & POINT_CARDS or led & (HEARTS_MASK | PIG_BIT):
            return (overs & -overs).bit_length() - 1
        return overs.bit_length() - 1
    if partner_wins:
        if legal & GOAT_BIT:
            return GOAT_BIT.bit_length() - 1
        return _high_rank(legal & ~(POINT_CARDS | GOAT_BIT) or legal)
    if legal & PIG_BIT:
        return PIG
    if legal & HIGH_HEARTS:
        return (legal & HIGH_HEARTS).bit_length() - 1
    if legal & ABOVE_PIG and (hands[0] | hands[1] | hands[2] | hands[3]) & PIG_BIT:
        return (legal & ABOVE_PIG).bit_length() - 1
    if legal & HEARTS_MASK:
        return (legal & HEARTS_MASK).bit_length() - 1
    return _high_rank(legal & ~GOAT_BIT or legal)


def play_out(game: Game) -> None:
    """Play the hand in progress to its end with :func:`policy` for every seat."""
    results = game.results
    hands_done = len(results)
    push = game.push
    while len(results) == hands_done:
        push(PLAYS[game.to_move][policy(game)])

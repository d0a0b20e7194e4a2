"""Normal: a rule-based player built from the seeds' advice.

It guards the pig with low spades and sheds it on the first safe occasion, never leads the
spades above the pig while the pig is out, wins the goat only with a card sure to hold the
trick, weighs the transformer against what the winner already took, sheds high hearts
early, stops an all-hearts run with a cheap heart, and exposes only with confidence.

Under ``teams`` it plays for the partnership: it feeds the partner the goat (on a trick the
partner is sure to win, or as a discard), never drops the pig or hearts on the partner's
trick, and protects the partner's all-hearts run (hearts go to the partner, not to a rival).
"""

from __future__ import annotations

from bot_sdk.bot import Bot
from bot_sdk.house.openings import cards_to_pass, confident_exposures
from bot_sdk.house.table import (
    ABOVE_PIG,
    DIAMONDS,
    GOAT_BIT,
    HIGH_HEARTS,
    PIG_BIT,
    POINT_CARDS,
    SPADES,
    Table,
    above,
    below,
    cards_in,
    highest,
    lowest,
    read_table,
    suit_mask,
    trick_winner,
)
from referee import CardSet, Observation
from referee.cards import GOAT, HEARTS_MASK, PIG, SUIT_MASKS, TRANSFORMER
from referee.scoring import HEART_VALUES

_TC_BIT = 1 << TRANSFORMER
STOP_ALL_HEARTS = 150
"""What stopping an all-hearts run is worth to us: the runner would swing 400 points."""
CHEAP = -60
"""The most a trick may cost us when we take it only to stop an all-hearts run."""
RIVALRY = 0.3
"""How much a rival's gain counts against us, next to our own."""


class NormalBot(Bot):
    """Deterministic; ``seed`` is accepted so every house bot is built the same way."""

    name = "house-normal"

    def __init__(self, seed: int | str | None = None) -> None:
        self.seed = seed

    def play(self, obs: Observation) -> int:
        return choose_play(read_table(obs), obs.legal.mask)

    def expose(self, obs: Observation) -> CardSet:
        return confident_exposures(obs)

    def pass_cards(self, obs: Observation) -> list[int]:
        return cards_to_pass(obs)


def choose_play(t: Table, legal: int) -> int:
    """Normal's card among ``legal`` (a mask)."""
    if not legal & (legal - 1):
        return lowest(legal)
    if not t.trick:
        return min(cards_in(legal), key=lambda c: (_lead_risk(t, c), c % 13))
    if legal & suit_mask(t.trick[0][1]):
        return _follow(t, legal)
    return _discard(t, legal)


def _stop_bonus(t: Table, taker: int, cards: int) -> int:
    """The all-hearts bonus for taking ``cards`` from ``taker``, when it is cheap enough."""
    threat = t.all_hearts_threat()
    if threat is None or threat != taker or t.friendly(threat) or not cards & HEARTS_MASK:
        return 0
    return STOP_ALL_HEARTS if t.gain(t.seat, cards) >= CHEAP else 0


def _follow(t: Table, legal: int) -> int:
    win_seat, win = trick_winner(t.trick)
    trick = t.trick_mask
    later = t.to_play_after()
    if t.friendly(win_seat):
        # The partner's trick: never the pig on it, and the goat when the trick is sure to hold.
        top = max(win, GOAT)
        if legal & GOAT_BIT and not any(t.may_hold(s, above(top)) for s in later):
            return GOAT
        legal = legal & ~PIG_BIT or legal
    elif legal & PIG_BIT and win > PIG:
        return PIG
    ducks = legal & below(win)
    overs = legal & ~ducks
    if len(t.trick) == 3:
        return max(cards_in(legal), key=lambda c: (_last_value(t, trick, win_seat, win, c), c))
    sure = 0
    for card in cards_in(overs):
        if not any(t.may_hold(s, above(card)) for s in later):
            sure |= 1 << card
    if sure:
        card = lowest(sure)
        taken = trick | 1 << card | _pig_risk(t, card, later)
        if t.gain(t.seat, taken) > 0 or _stop_bonus(t, win_seat, taken):
            return card
    if overs and _stop_bonus(t, win_seat, trick | 1 << highest(overs)):
        return highest(overs)
    if ducks:
        # Ducking the goat hands it to someone else: keep it while another card will do.
        return highest(ducks & ~GOAT_BIT or ducks)
    return _least_bad_over(t, overs, trick)


def _pig_risk(t: Table, card: int, later: list[int]) -> int:
    """The pig, if a seat still to play could drop it on ``card``, else nothing."""
    led = suit_mask(card)
    for s in later:
        if t.may_hold(s, PIG_BIT) and (t.voids[s] & led or (led == SPADES and card > PIG)):
            return PIG_BIT
    return 0


def _last_value(t: Table, trick: int, win_seat: int, win: int, card: int) -> float:
    """What playing ``card`` last to the trick is worth to us: our gain if we win, else a
    share of what the winner gains (a rival's gain is our loss on the table)."""
    taken = trick | 1 << card
    if card > win:
        return t.gain(t.seat, taken) + _stop_bonus(t, win_seat, taken)
    gain = t.gain(win_seat, taken)
    return gain if t.friendly(win_seat) else -RIVALRY * gain


def _least_bad_over(t: Table, overs: int, trick: int) -> int:
    """Every card we hold would win the trick so far: win as cheaply as the suit allows."""
    options = overs & ~(PIG_BIT | GOAT_BIT)  # the goat is played only when sure to win
    if options & _TC_BIT and t.gain(t.seat, _TC_BIT) < 0:
        options &= ~_TC_BIT
    options = options or overs
    led = suit_mask(t.trick[0][1])
    dangerous = (
        trick & POINT_CARDS
        or led == HEARTS_MASK
        or (led == SPADES and t.pig_out)
        or (led == DIAMONDS and t.unseen & GOAT_BIT)  # keep the high diamonds for the goat
    )
    # A clean trick is a chance to shed our highest card; a dangerous one is ducked late.
    return lowest(options) if dangerous else highest(options)


def _discard(t: Table, legal: int) -> int:
    """Void in the suit led: the current winner will most likely take what we throw."""
    taker, _ = trick_winner(t.trick)
    threat = t.all_hearts_threat()
    partner_runs = threat is not None and threat == t.partner
    if t.friendly(taker):
        if legal & GOAT_BIT:
            return GOAT
        if partner_runs and legal & HEARTS_MASK:
            return highest(legal & HEARTS_MASK)
        return _void_maker(t, legal & ~(POINT_CARDS | _TC_BIT) or legal)
    if legal & PIG_BIT:
        return PIG
    if legal & _TC_BIT and t.gain(t.seat, _TC_BIT) < 0:
        return TRANSFORMER
    hearts = legal & HEARTS_MASK if threat != taker and not partner_runs else 0
    if hearts & HIGH_HEARTS:
        return highest(hearts & HIGH_HEARTS)
    if legal & ABOVE_PIG and t.pig_out:
        return highest(legal & ABOVE_PIG)
    if hearts and (threat is not None or highest(hearts) % 13 >= 3):
        return highest(hearts)
    rest = legal & ~(HEARTS_MASK | GOAT_BIT)
    if rest:
        return _void_maker(t, rest)
    return highest(legal & HEARTS_MASK) if legal & HEARTS_MASK else lowest(legal)


def _void_maker(t: Table, cards: int) -> int:
    """The high card of a short suit: shedding it brings a void, and a void brings discards."""
    return max(
        cards_in(cards), key=lambda c: (c % 13 - 2 * (t.hand & SUIT_MASKS[c // 13]).bit_count(), c)
    )


def _lead_risk(t: Table, card: int) -> int:
    """How much leading ``card`` is likely to cost us (lower is better)."""
    bit = 1 << card
    suit = suit_mask(card)
    higher = t.unseen & above(card)
    if bit & PIG_BIT:
        return 500
    if bit & GOAT_BIT:
        return -100 if not higher else 300
    risk = 3 * (t.hand & suit).bit_count()
    if not higher:
        risk += 40
        if any(t.voids[s] & suit for s in range(4) if s != t.seat):
            risk += 40
    if suit == HEARTS_MASK:
        risk += -HEART_VALUES[card % 13] * (2 if not higher else 1)
    elif suit == SPADES:
        if t.pig_out and bit & ABOVE_PIG:
            risk += 200
        elif t.hand & PIG_BIT:
            risk += 25
        elif t.pig_out:
            risk -= 10
    if bit & _TC_BIT and t.gain(t.seat, _TC_BIT) < 0:
        risk += 30
    return risk

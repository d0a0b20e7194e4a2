"""What a seat can work out from its observation: who is void, who must hold what, what is out.

The house bots reason with card masks (bit ``c`` for card ``c``), like the referee's hot path;
:func:`read_table` gathers everything they need once per decision.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from referee import Observation, score_seat
from referee.cards import GOAT, HEARTS_MASK, PIG, SUIT_MASKS, TWO_OF_SPADES

PIG_BIT = 1 << PIG
GOAT_BIT = 1 << GOAT
SPADES = SUIT_MASKS[3]
DIAMONDS = SUIT_MASKS[1]
HIGH_HEARTS = HEARTS_MASK & ~((1 << (2 * 13 + 9)) - 1)
"""JH QH KH AH: the hearts worth 20 to 50 each."""
ABOVE_PIG = SPADES & ~((PIG_BIT << 1) - 1)
"""KS and AS: the spades that can be made to take the pig."""
POINT_CARDS = HEARTS_MASK | PIG_BIT


def cards_in(mask: int) -> Iterator[int]:
    """The cards of a mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> int:
    return mask.bit_length() - 1


def suit_mask(card: int) -> int:
    return SUIT_MASKS[card // 13]


def below(card: int) -> int:
    """The cards of ``card``'s suit ranked under it."""
    return suit_mask(card) & ((1 << card) - 1)


def above(card: int) -> int:
    """The cards of ``card``'s suit ranked over it."""
    return suit_mask(card) & ~((2 << card) - 1)


def trick_winner(trick: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """``(seat, card)`` winning a non-empty trick so far: the highest card of the suit led."""
    led = suit_mask(trick[0][1])
    return max((p for p in trick if led >> p[1] & 1), key=lambda p: p[1])


@dataclass(frozen=True, slots=True)
class Table:
    """One seat's reading of the hand in play (all sets are card masks)."""

    obs: Observation
    seat: int
    hand: int
    played: int
    """Every card played this hand, the trick in progress included."""
    unseen: int
    """The cards the other three seats hold between them."""
    voids: tuple[int, int, int, int]
    """Per seat, the suits (as card masks) it has shown it no longer holds."""
    known: tuple[int, int, int, int]
    """Per other seat, unplayed cards it must hold (exposed, passed to it, the first ``2S``)."""
    counts: tuple[int, int, int, int]
    """How many cards each seat holds now."""
    exposed: int
    partner: int | None
    """The seat across the table with ``teams``."""

    @property
    def trick(self) -> tuple[tuple[int, int], ...]:
        return self.obs.trick

    @property
    def trick_mask(self) -> int:
        mask = 0
        for _, card in self.obs.trick:
            mask |= 1 << card
        return mask

    @property
    def pig_out(self) -> bool:
        """The pig is still in another seat's hand."""
        return bool(self.unseen & PIG_BIT)

    def friendly(self, seat: int) -> bool:
        return seat in (self.seat, self.partner)

    def to_play_after(self) -> list[int]:
        """The seats that play to the current trick after this one."""
        return [(self.seat + i) % 4 for i in range(1, 4 - len(self.obs.trick))]

    def may_hold(self, seat: int, cards: int) -> int:
        """Which of ``cards`` (all unseen) ``seat`` could hold, given its voids."""
        suits = 0
        for s in range(4):
            if not self.voids[seat] & SUIT_MASKS[s]:
                suits |= SUIT_MASKS[s]
        others_known = 0
        for s in range(4):
            if s != seat:
                others_known |= self.known[s]
        return cards & self.unseen & (suits | self.known[seat]) & ~others_known

    def gain(self, seat: int, cards: int) -> int:
        """How much taking ``cards`` now changes ``seat``'s hand score (as things stand)."""
        taken = self.obs.taken[seat].mask
        return score_seat(taken | cards, self.exposed).score - score_seat(taken, self.exposed).score

    def all_hearts_threat(self) -> int | None:
        """A seat that has taken every heart so far (at least three), if any."""
        holders = [s for s in range(4) if self.obs.taken[s].mask & HEARTS_MASK]
        if len(holders) == 1 and (self.obs.taken[holders[0]].mask & HEARTS_MASK).bit_count() >= 3:
            return holders[0]
        return None


def read_table(obs: Observation) -> Table:
    """Gather what ``obs`` shows about the hand in play."""
    me = obs.seat
    played = obs.played.mask
    voids = [0, 0, 0, 0]
    plays_by = [0, 0, 0, 0]
    tricks = [tuple(t.plays()) for t in obs.tricks]
    if obs.trick:
        tricks.append(obs.trick)
    for trick in tricks:
        led = suit_mask(trick[0][1])
        for seat, card in trick:
            plays_by[seat] += 1
            if not led >> card & 1:
                voids[seat] |= led
    known = [0, 0, 0, 0]
    for s in range(4):
        if s != me:
            known[s] |= obs.exposed[s].mask & ~played
    if obs.passed is not None and obs.pass_to is not None:
        known[obs.pass_to] |= obs.passed.mask & ~played
    unseen = ((1 << 52) - 1) & ~played & ~obs.hand.mask
    rules = obs.rules
    # In the first hand the holder of 2S leads, so it holds 2S until it plays it.
    standard_lead = not (rules.lead_2c or rules.dealer_left_leads) and obs.hand_number == 1
    two = 1 << TWO_OF_SPADES
    if standard_lead and obs.first_leader not in (None, me) and unseen & two:
        known[obs.first_leader] |= two
    exposed = 0
    for e in obs.exposed:
        exposed |= e.mask
    return Table(
        obs=obs,
        seat=me,
        hand=obs.hand.mask,
        played=played,
        unseen=unseen,
        voids=(voids[0], voids[1], voids[2], voids[3]),
        known=(known[0], known[1], known[2], known[3]),
        counts=(13 - plays_by[0], 13 - plays_by[1], 13 - plays_by[2], 13 - plays_by[3]),
        exposed=exposed,
        partner=(me + 2) % 4 if rules.teams else None,
    )

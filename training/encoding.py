"""The numeric form of a seat's observation, and its decisions as integer actions.

:func:`encode` turns a seat's :class:`~referee.Observation` (and the cards it has already chosen
of a pass or an exposure) into a fixed-size ``float32`` vector and the mask of its legal
actions. The environments call it for every observation they return, and a reader of match logs
calls it for every decision a bot was asked, so a model trained on one reads the other.

Actions are integers from 0 to 52: a card (the referee's number, ``suit * 13 + rank``: ``2C``
is 0, ``AS`` is 51) or :data:`DONE`. A play is one action, its card. A pass is three actions,
one card each, in any order. An exposure is a card at a time, each one of the seat's exposable
cards, then :data:`DONE` (:data:`DONE` at once exposes nothing). :func:`actions_of` gives a move
as these actions, and :func:`decision_steps` the observation and mask before each of them.

Every seat is written relative to the observer: 0 is the observer, 1 the next seat (who plays
after it), 2 the seat across, 3 the previous seat. docs/TRAINING.md has the table of
:data:`LAYOUT`.

>>> from referee import Game, Rules
>>> game = Game(Rules.with_variants("no_exposure"), seed=7)
>>> vector, mask = encode(game.observation(game.to_move))
>>> vector.shape, mask.shape, int(mask.sum()) == len(game.legal_moves)
((1105,), (53,), True)
>>> str(CardSet.of(int(c) for c in vector[LAYOUT["hand"]].nonzero()[0])) == str(
...     game.hand(game.to_move))
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import numpy as np
import numpy.typing as npt

from referee import (
    AnyMove,
    CardSet,
    DecisionKind,
    Expose,
    Observation,
    Phase,
    Play,
    Trick,
    Variant,
)

Vector = npt.NDArray[np.float32]
Mask = npt.NDArray[np.int8]

DONE: Final = 52
"""The action that ends an exposure."""
ACTIONS: Final = 53
"""How many actions there are: the 52 cards and :data:`DONE`."""
DONE_BIT: Final = 1 << DONE

_VARIANTS: Final = tuple(Variant)
_PHASES: Final = (Phase.PASSING, Phase.EXPOSING, Phase.PLAYING, Phase.OVER)
_KINDS: Final = (DecisionKind.PASS, DecisionKind.EXPOSE, DecisionKind.PLAY)
SCORE_SCALE: Final = 1000.0
"""Totals are given in thousands of points…"""
SCORE_CLIP: Final = 10.0
"""…cut to ±10 (±10,000 points: only a long ``fixed_hands`` match gets there)."""

_FEATURES: Final[tuple[tuple[str, int], ...]] = (
    # card planes: 52 each, indexed by card
    ("hand", 52),
    ("chosen", 52),
    ("played", 4 * 52),
    ("trick", 4 * 52),
    ("won", 4 * 52),
    ("exposed", 4 * 52),
    ("passed", 52),
    ("received", 52),
    # flags: 0 or 1
    ("phase", len(_PHASES)),
    ("decision", len(_KINDS)),
    ("trick_leader", 4),
    ("first_leader", 4),
    ("pass_to", 4),
    ("void", 4 * 4),
    ("hearts_broken", 1),
    ("variants", len(_VARIANTS)),
    # numbers
    ("tricks", 1),
    ("tricks_won", 4),
    ("totals", 4),
    ("standing", 4),
    ("hand_number", 1),
    ("losing_threshold", 1),
)


def _layout() -> dict[str, slice]:
    layout, offset = {}, 0
    for name, size in _FEATURES:
        layout[name] = slice(offset, offset + size)
        offset += size
    return layout


LAYOUT: Final[dict[str, slice]] = _layout()
"""Where each feature lies in the vector: ``vector[LAYOUT["hand"]]`` is the hand's plane. A
plane of four seats (``played``, ``trick``, ``won``, ``exposed``) is the observer's 52 first,
then the next seat's, the seat across's and the previous seat's; ``void`` is 4 suits (clubs,
diamonds, hearts, spades) for each of the four seats in that order."""
SIZE: Final = LAYOUT["losing_threshold"].stop
"""The vector's length."""
FLAGS: Final = LAYOUT["variants"].stop
"""The vector's first ``FLAGS`` entries are 0 or 1 (planes and flags); the rest are numbers."""

# Bit offsets of the features in the integer that holds the planes and flags.
_CHOSEN: Final = LAYOUT["chosen"].start
_PLAYED: Final = LAYOUT["played"].start
_TRICK: Final = LAYOUT["trick"].start
_WON: Final = LAYOUT["won"].start
_EXPOSED: Final = LAYOUT["exposed"].start
_PASSED: Final = LAYOUT["passed"].start
_RECEIVED: Final = LAYOUT["received"].start
_PHASE: Final = LAYOUT["phase"].start
_DECISION: Final = LAYOUT["decision"].start
_TRICK_LEADER: Final = LAYOUT["trick_leader"].start
_FIRST_LEADER: Final = LAYOUT["first_leader"].start
_PASS_TO: Final = LAYOUT["pass_to"].start
_VOID: Final = LAYOUT["void"].start
_HEARTS_BROKEN: Final = LAYOUT["hearts_broken"].start
_VARIANT_BITS: Final = LAYOUT["variants"].start
_PHASE_BIT: Final = {phase: 1 << (_PHASE + i) for i, phase in enumerate(_PHASES)}
_PLAYING_BIT: Final = _PHASE_BIT[Phase.PLAYING]
_PLAY_BIT: Final = 1 << (_DECISION + _KINDS.index(DecisionKind.PLAY))
_PASS_BIT: Final = 1 << (_DECISION + _KINDS.index(DecisionKind.PASS))
_EXPOSE_BIT: Final = 1 << (_DECISION + _KINDS.index(DecisionKind.EXPOSE))
_PLAYING: Final = Phase.PLAYING
_PLAY: Final = DecisionKind.PLAY
_PASS: Final = DecisionKind.PASS
_BYTES: Final = (FLAGS + ACTIONS + 7) // 8
_UINT8: Final = np.dtype(np.uint8)
_LOWEST: Final = -SCORE_CLIP * SCORE_SCALE
_HIGHEST: Final = SCORE_CLIP * SCORE_SCALE


def observation_space_bounds() -> tuple[Vector, Vector]:
    """The lowest and highest value of each entry of the vector."""
    low = np.zeros(SIZE, np.float32)
    high = np.ones(SIZE, np.float32)
    for name in ("totals", "standing", "losing_threshold"):
        low[LAYOUT[name]] = -SCORE_CLIP
    for name in ("totals", "standing"):
        high[LAYOUT[name]] = SCORE_CLIP
    high[LAYOUT["losing_threshold"]] = 0.0
    return low, high


_LOW, _HIGH = observation_space_bounds()


class History:
    """What the completed tricks of a hand show each seat: the cards each seat played and won,
    and the suits each showed it has none of (it did not follow), as the bits of those planes
    seen from each seat in turn; and each seat's tricks won.

    :func:`encode` folds the tricks of each observation into one; given the same ``History``
    for the observations of a match in order, it folds each trick once (an observation whose
    completed tricks do not start with those already folded is folded afresh)."""

    __slots__ = ("seen", "tricks", "won_count")

    tricks: tuple[Trick, ...]
    """The tricks folded."""
    seen: list[int]
    """For each observing seat, the bits of the ``played``, ``won`` and ``void`` features that
    the tricks folded set, at their places in the vector."""
    won_count: list[int]
    """Tricks won by each seat."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.tricks = ()
        self.seen = [0, 0, 0, 0]
        self.won_count = [0, 0, 0, 0]

    def update(self, tricks: tuple[Trick, ...]) -> None:
        done = len(self.tricks)
        if len(tricks) == done and tricks == self.tricks:
            return
        # A tuple's equality compares items by identity first: the tricks of one match's
        # observations are the same objects, so this costs a pointer comparison per trick.
        if len(tricks) < done or tricks[:done] != self.tricks:
            self._clear()
            done = 0
        seen, won_count = self.seen, self.won_count
        for trick in tricks[done:]:
            leader, cards, winner = trick
            led = cards[0] // 13
            won = 1 << cards[0] | 1 << cards[1] | 1 << cards[2] | 1 << cards[3]
            for me in range(4):
                bits = won << (_WON + 52 * ((winner - me) % 4))
                for i in range(4):
                    card, seat = cards[i], (leader + i - me) % 4
                    bits |= 1 << (_PLAYED + 52 * seat + card)
                    if card // 13 != led:
                        bits |= 1 << (_VOID + 4 * seat + led)
                seen[me] |= bits
            won_count[winner] += 1
        self.tricks = tricks


def encode(
    obs: Observation, chosen: int = 0, history: History | None = None
) -> tuple[Vector, Mask]:
    """The observation vector and the legal-action mask of ``obs``'s seat, which has already
    chosen ``chosen`` (a mask of cards) of its pending pass or exposure.

    ``history`` carries the folded tricks from one call to the next (see :class:`History`);
    without it, the completed tricks are folded for this call alone. The result is the same."""
    if history is None:
        history = History()
    history.update(obs.tricks)
    me = obs.seat
    a, b, c, d = me, (me + 1) % 4, (me + 2) % 4, (me + 3) % 4
    exposed = obs.exposed
    bits = (
        history.seen[me]
        | obs.hand.mask
        | chosen << _CHOSEN
        | (
            exposed[a].mask
            | exposed[b].mask << 52
            | exposed[c].mask << 104
            | exposed[d].mask << 156
        )
        << _EXPOSED
        | _rules_bits(obs)
    )
    trick = obs.trick
    if trick:
        led = trick[0][1] // 13
        for seat, card in trick:
            plane = 52 * ((seat - me) % 4) + card
            bits |= 1 << (_PLAYED + plane) | 1 << (_TRICK + plane)
            if card // 13 != led:
                bits |= 1 << (_VOID + 4 * ((seat - me) % 4) + led)
    phase = obs.phase
    if phase is _PLAYING:
        bits |= _PLAYING_BIT
        if obs.trick_leader is not None:
            bits |= 1 << (_TRICK_LEADER + (obs.trick_leader - me) % 4)
    else:
        bits |= _PHASE_BIT[phase]
    if obs.passed is not None:
        bits |= obs.passed.mask << _PASSED
    if obs.received is not None:
        bits |= obs.received.mask << _RECEIVED
    if obs.first_leader is not None:
        bits |= 1 << (_FIRST_LEADER + (obs.first_leader - me) % 4)
    if obs.pass_to is not None:
        bits |= 1 << (_PASS_TO + (obs.pass_to - me) % 4)
    if obs.hearts_broken:
        bits |= 1 << _HEARTS_BROKEN
    decision = obs.decision
    if decision is not None:
        kind = decision.kind
        choices = decision.choices.mask
        if kind is _PLAY:
            bits |= _PLAY_BIT | choices << FLAGS
        elif kind is _PASS:
            bits |= _PASS_BIT | (choices & ~chosen) << FLAGS
        else:
            bits |= _EXPOSE_BIT | (choices & ~chosen | DONE_BIT) << FLAGS
    rules = obs.rules
    totals, standing, won_count = obs.totals, obs.standing, history.won_count
    # planes, flags and mask in one conversion (to bytes, then to an array of 0 and 1)
    raw = np.frombuffer(bits.to_bytes(_BYTES, "little"), _UINT8)
    unpacked = np.unpackbits(raw, None, FLAGS + ACTIONS, "little")  # positional: cheaper
    vector = np.empty(SIZE, np.float32)
    vector[:FLAGS] = unpacked[:FLAGS]
    vector[FLAGS:] = (
        len(obs.tricks) / 13,
        won_count[a] / 13,
        won_count[b] / 13,
        won_count[c] / 13,
        won_count[d] / 13,
        totals[a] / SCORE_SCALE,
        totals[b] / SCORE_SCALE,
        totals[c] / SCORE_SCALE,
        totals[d] / SCORE_SCALE,
        standing[a] / SCORE_SCALE,
        standing[b] / SCORE_SCALE,
        standing[c] / SCORE_SCALE,
        standing[d] / SCORE_SCALE,
        obs.hand_number / (rules.fixed_hands or rules.max_hands),
        rules.losing_threshold / SCORE_SCALE,
    )
    if not (
        min(totals) >= _LOWEST
        and max(totals) <= _HIGHEST
        and min(standing) >= _LOWEST
        and max(standing) <= _HIGHEST
        and rules.losing_threshold >= _LOWEST
    ):
        numbers = vector[FLAGS:]
        np.clip(numbers, _LOW[FLAGS:], _HIGH[FLAGS:], out=numbers)
    return vector, unpacked[FLAGS:].view(np.int8)


_RULES_BITS: dict[frozenset[Variant], int] = {}


def _rules_bits(obs: Observation) -> int:
    variants = obs.rules.variants
    bits = _RULES_BITS.get(variants)
    if bits is None:
        bits = 0
        for i, variant in enumerate(_VARIANTS):
            if variant in variants:
                bits |= 1 << (_VARIANT_BITS + i)
        _RULES_BITS[variants] = bits
    return bits


def legal_actions(kind: DecisionKind, choices: int, chosen: int = 0) -> int:
    """The legal actions of a decision of ``kind`` among the cards ``choices`` (a mask) once
    ``chosen`` (a mask) are chosen, as a mask of actions (bit :data:`DONE` for :data:`DONE`)."""
    if kind is DecisionKind.PLAY:
        return choices
    if kind is DecisionKind.PASS:
        return choices & ~chosen
    return choices & ~chosen | DONE_BIT


def actions_of(move: AnyMove) -> list[int]:
    """A move as the actions that make it: its card; a pass's three cards; an exposure's cards
    then :data:`DONE`. Cards lowest first (the environments take them in any order)."""
    if isinstance(move, Play):
        return [move.card]
    cards = list(move.cards)
    return [*cards, DONE] if isinstance(move, Expose) else cards


def decision_steps(
    obs: Observation, move: AnyMove, history: History | None = None
) -> Iterator[tuple[Vector, Mask, int]]:
    """The decision ``move`` answering ``obs``'s pending one as the environments take it: for
    each of its :func:`actions_of`, the vector and mask before it and the action."""
    if obs.decision is None:
        raise ValueError(f"seat {obs.seat} has no decision pending")
    if history is None:
        history = History()
    chosen = 0
    for action in actions_of(move):
        vector, mask = encode(obs, chosen, history)
        yield vector, mask, action
        if action != DONE:
            chosen |= 1 << action


def cards_of_plane(vector: Vector, name: str, seat: int = 0) -> CardSet:
    """The cards of a plane of ``vector``: ``cards_of_plane(v, "won", 2)`` are the cards won
    by the seat across from the observer."""
    plane = vector[LAYOUT[name]]
    if len(plane) > 52:
        plane = plane[52 * seat : 52 * (seat + 1)]
    elif seat:
        raise ValueError(f"{name} is one plane, not one per seat")
    return CardSet.of(int(card) for card in plane.nonzero()[0])


def one_hot_seat(vector: Vector, name: str) -> int | None:
    """The seat (relative to the observer) a one-hot seat feature names, or None."""
    hot = vector[LAYOUT[name]].nonzero()[0]
    return None if not len(hot) else int(hot[0])

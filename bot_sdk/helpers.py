"""What bot authors reach for: card utilities (re-exported from the referee) and a
:class:`Tracker` that reads the public history of the hand out of an observation.

>>> from referee import Expose, Game
>>> game = Game(seed=1)
>>> game.push(Expose(3, CardSet.parse("AH")))
>>> game.push(Expose(0, CardSet()))
>>> for card in ("2S", "KS", "QS"):
...     game.play(card)
>>> tracker = Tracker(game.observation(1))
>>> tracker.led_suit, tracker.winning
(<Suit.SPADES: 3>, (3, 50))
>>> str(tracker.known[3])  # seat 3 exposed AH, so it still holds it
'AH'
>>> len(tracker.out)  # 52 cards, less 13 in my hand, less 3 played
36
"""

from __future__ import annotations

from referee import (
    DECK,
    EXPOSABLE_CARDS,
    SCORING_CARDS,
    SUITS,
    Card,
    CardSet,
    Observation,
    Suit,
    card_name,
    parse_card,
    rank_of,
    score_seat,
    suit_of,
)

__all__ = [
    "DECK", "EXPOSABLE_CARDS", "HEARTS", "SCORING_CARDS", "SUITS", "Card", "CardSet", "Suit",
    "Tracker", "card_name", "parse_card", "rank_of", "suit_of",
]  # fmt: skip

HEARTS = SUITS[Suit.HEARTS]


class Tracker:
    """The hand so far, seen from ``obs.seat``: built fresh from one observation, so it is never
    out of date and needs no memory between decisions.

    - :attr:`out`: cards neither in my hand nor played yet (held by the other seats).
    - :attr:`known`: per seat, cards it is known to hold: my own hand, cards I passed to it
      (``pass_3``) and cards it exposed, until they are played.
    - :attr:`voids`: per seat, suits it is known to have none of: it did not follow when the suit
      was led (and for me, my hand).
    - :attr:`points`: per seat, the hand score its taken cards would give if the hand ended now.
    - :attr:`hearts_runner`: the one seat that took every heart taken so far, if any (an
      all-hearts run is threatened).
    """

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        self.played: CardSet = obs.played
        self.out: CardSet = DECK - obs.hand - self.played
        self.known: tuple[CardSet, ...] = self._known(obs)
        self.voids: tuple[frozenset[Suit], ...] = self._voids(obs)
        exposed = CardSet()
        for cards in obs.exposed:
            exposed |= cards
        self.points: tuple[int, ...] = tuple(score_seat(t, exposed).score for t in obs.taken)
        takers = [seat for seat, taken in enumerate(obs.taken) if taken & HEARTS]
        self.hearts_runner: int | None = takers[0] if len(takers) == 1 else None

    @property
    def led_suit(self) -> Suit | None:
        """The suit of the trick being played, ``None`` when I lead."""
        return suit_of(self.obs.trick[0][1]) if self.obs.trick else None

    @property
    def winning(self) -> tuple[int, Card] | None:
        """``(seat, card)`` that wins the trick being played so far, ``None`` when I lead."""
        led = self.led_suit
        if led is None:
            return None
        return max(
            ((seat, card) for seat, card in self.obs.trick if suit_of(card) is led),
            key=lambda play: play[1],
        )

    def may_hold(self, seat: int) -> CardSet:
        """The cards ``seat`` could hold: what it is known to hold, plus cards out in suits it is
        not known to be void in (minus cards known to be elsewhere)."""
        if seat == self.obs.seat:
            return self.obs.hand
        elsewhere = CardSet()
        for other, cards in enumerate(self.known):
            if other != seat:
                elsewhere |= cards
        possible = CardSet()
        for suit in Suit:
            if suit not in self.voids[seat]:
                possible |= self.out.of_suit(suit)
        return (possible - elsewhere) | self.known[seat]

    def _known(self, obs: Observation) -> tuple[CardSet, ...]:
        known = [cards - self.played for cards in obs.exposed]
        known[obs.seat] = obs.hand
        if obs.passed is not None and obs.pass_to is not None and obs.received is not None:
            # Once everyone has passed, what I passed sits in the receiver's hand until played.
            known[obs.pass_to] |= obs.passed - self.played
        return tuple(known)

    @staticmethod
    def _voids(obs: Observation) -> tuple[frozenset[Suit], ...]:
        voids: list[set[Suit]] = [set(), set(), set(), set()]
        plays = [list(trick.plays()) for trick in obs.tricks]
        if obs.trick:
            plays.append(list(obs.trick))
        for trick in plays:
            led = suit_of(trick[0][1])
            for seat, card in trick[1:]:
                if suit_of(card) is not led:
                    voids[seat].add(led)
        voids[obs.seat] = {suit for suit in Suit if not obs.hand.of_suit(suit)}
        return tuple(frozenset(v) for v in voids)

"""The game state: a whole match, advanced one decision at a time.

A driver asks :attr:`Game.pending` who must decide what, offers the seat its
:meth:`Game.observation`, and pushes the answer. Illegal answers raise
:class:`~referee.moves.IllegalMoveError` with the rule that forbids them; nothing changes.

>>> game = Game(seed=1)
>>> game.phase, [(d.seat, str(d.choices)) for d in game.pending]
(<Phase.EXPOSING: 'exposing'>, [(3, 'JD AH'), (0, 'TC QS')])
>>> game.push(Expose(3, CardSet.parse("AH")))
>>> game.push(Expose(0, CardSet()))
>>> game.phase, game.to_move, str(game.legal_moves)
(<Phase.PLAYING: 'playing'>, 2, '3C 9C AC TD AD 3H 5H 9H 2S 5S 6S 9S AS')
>>> game.play("2S")
>>> game.play("4H")
Traceback (most recent call last):
...
referee.moves.IllegalMoveError: seat 3 must follow spades
>>> game.pop()
Play(seat=2, card=39)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, NoReturn, cast

from referee.cards import (
    CARD_NAMES,
    EXPOSABLE_MASK,
    FULL_DECK,
    HEARTS_MASK,
    PIG,
    SUIT_MASKS,
    TWO_OF_CLUBS,
    TWO_OF_SPADES,
    Card,
    CardSet,
    Suit,
    cards_of,
    parse_card,
)
from referee.deal import Deal, DealError, Seed, deal_from_seed, parse_deal
from referee.moves import (
    PLAYS,
    AnyMove,
    Decision,
    DecisionKind,
    Expose,
    IllegalMoveError,
    MatchOverError,
    NotYourTurnError,
    Pass,
    Play,
)
from referee.observation import Observation, observe
from referee.records import (
    HandResult,
    Outcome,
    Phase,
    Termination,
    Trick,
    places_of,
    qd_later_tricks,
)
from referee.refusals import Reason, Refusal
from referee.rules import PLUS_1000, Rules, Variant
from referee.scoring import score_seat

PASS_COUNT: Final = 3
# Module-level Final names compile to C globals under mypyc: cheaper than attribute lookups.
# (Likewise ``xs[i] = xs[i] ^ y`` rather than ``xs[i] ^= y`` on the hot path: mypyc compiles the
# first to native int operations, the second to a generic in-place call.)
_PLAYING: Final = Phase.PLAYING
_PLAYS: Final = PLAYS
_PLAY_TYPE: Final = Play
_EXPOSE_TYPE: Final = Expose
_PASS_TYPE: Final = Pass
_TRICK_TYPE: Final = Trick
_HAND_RESULT_TYPE: Final = HandResult
_OUTCOME_TYPE: Final = Outcome
_SUIT_BITS: Final = 0x1FFF
_HEARTS: Final = 0x1FFF << 26
_SPADES: Final = 0x1FFF << 39
_PIG_BIT: Final = 1 << PIG
_new_tuple: Final = tuple.__new__
"""Builds a NamedTuple from its fields in order, skipping the class's Python-level ``__new__``;
bound once, since looking ``tuple.__new__`` up costs as much again (13 tricks a hand)."""


_TrickUndo = tuple[bool, int, bool]
"""Undo record of a play that completes a trick: whether the trick opened its suit, the pig's
taker and whether hearts were broken before it. (Its leader and suit are the trick's own: kept
out, the record holds no mask, which would be a new int object.)"""
_ExposeUndo = tuple[list[int], int]
"""Undo record of an exposure: the seats waiting before it, and the exposed mask."""


class _Snapshot:
    """Undo record of a move that may start a hand (the last play of one) or a pass: the game's
    scalars, copies of its lists, the lengths of its histories and its list of tricks. A class,
    not a NamedTuple: compiled, it is built natively."""

    __slots__ = ("lengths", "lists", "scalars", "tricks")

    def __init__(
        self,
        scalars: tuple[Any, ...],
        lists: tuple[list[int], ...],
        lengths: tuple[int, int, int, int],
        tricks: list[Trick],
    ) -> None:
        self.scalars = scalars
        self.lists = lists
        self.lengths = lengths
        self.tricks = tricks


def _mask_of_sets(sets: Iterable[CardSet]) -> int:
    mask = 0
    for cards in sets:
        mask |= cards.mask
    return mask


def _mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


_MATCH_OVER: Final = Reason(Refusal.MATCH_OVER)


def _lead_candidates(hand: int, rules: Rules, first: bool, hearts_broken: bool) -> int:
    """The leader's cards once the lead restrictions of the variants are applied (``first``:
    to the hand's first trick)."""
    if first and rules.lead_2c:
        return 1 << TWO_OF_CLUBS
    cands = hand
    if first and rules.no_spade_lead_first_trick:
        cands &= ~_SPADES
    if rules.hearts_must_break and not hearts_broken:
        cands &= ~HEARTS_MASK
    # Each restriction yields when the leader holds nothing else; together they yield
    # whenever they would leave no card.
    return cands or hand


def observed_play_refusal(obs: Observation, card: Card) -> Reason | None:
    """:meth:`Game.play_refusal` for the seat of ``obs`` and ``card``, told from what the seat
    sees: the same reason."""
    if obs.phase is not Phase.PLAYING:
        return Reason(Refusal.NO_PLAY_NOW, phase=obs.phase)
    if obs.decision is None:
        assert obs.trick_leader is not None, "trick play has a leader"
        return _not_your_turn((obs.trick_leader + len(obs.trick)) % 4, obs.seat)
    led = SUIT_MASKS[obs.trick[0][1] // 13] if obs.trick else 0
    return _refusal_on_turn(
        obs.seat, card, hand=obs.hand.mask, legal=obs.decision.choices.mask, led=led,
        first=not obs.tricks, hearts_broken=obs.hearts_broken, rules=obs.rules,
    )  # fmt: skip


def _refusal_on_turn(
    seat: int, card: int, *, hand: int, legal: int, led: int, first: bool, hearts_broken: bool,
    rules: Rules,
) -> Reason | None:  # fmt: skip
    """Why the seat on turn, holding ``hand`` with ``legal`` plays, may not play ``card``
    (``led``: the mask of the suit led, 0 for a lead)."""
    bit = 1 << card
    if not hand & bit:
        return _not_held(seat, bit)
    if legal & bit:
        return None
    suit = Suit(card // 13)
    if led and not led & bit:
        return Reason(Refusal.MUST_FOLLOW_SUIT, seat=seat, suit=Suit(led.bit_length() // 13 - 1))
    if not led:
        if first and rules.lead_2c:
            return Reason(Refusal.MUST_LEAD_2C, seat=seat)
        if not _lead_candidates(hand, rules, first, hearts_broken) & bit:
            if suit is Suit.HEARTS and rules.hearts_must_break and not hearts_broken:
                return Reason(Refusal.NO_HEART_LEAD, seat=seat)
            return Reason(Refusal.NO_SPADE_LEAD, seat=seat)
    return Reason(Refusal.EXPOSED_FIRST_TRICK, seat=seat, cards=CardSet(bit), suit=suit)


def _not_your_turn(turn: int, seat: object, kind: DecisionKind = DecisionKind.PLAY) -> Reason:
    return Reason(Refusal.NOT_YOUR_TURN, seat=seat, turn=turn, kind=kind)


def _not_held(seat: int, mask: int) -> Reason:
    return Reason(Refusal.NOT_HELD, seat=seat, cards=CardSet(mask))


class Game:
    """A match of Gong Zhu under one :class:`~referee.rules.Rules` profile.

    Deals come from ``seed`` (see :mod:`referee.deal`) or, for replays and tests, from
    ``deals``: one entry per hand, each four hands of 13 cards (card sets, masks or names).
    """

    rules: Rules
    seed: Seed
    hand_number: int
    phase: Phase
    totals: list[int]
    """Each seat's running total (see :meth:`standing` for team totals)."""
    results: list[HandResult]
    deals: list[Deal]
    """The deal of every hand so far, as dealt (before any passing)."""
    hand_tricks: list[tuple[Trick, ...]]
    """The 13 tricks of every finished hand, in order (the current hand's are :attr:`tricks`)."""
    move_stack: list[AnyMove]
    outcome: Outcome | None
    hands: list[int]
    """The cards each seat holds now, as masks."""
    dealer: int | None
    passed: list[int]
    pass_offset: int
    exposed_by: list[int]
    exposed: int
    """Cards exposed this hand and revealed to everyone (a mask)."""
    tricks: list[Trick]
    taken: list[int]
    """Every card each seat has won this hand, as masks."""
    trick: list[int]
    """The cards of the trick in progress, in play order from :attr:`leader`."""
    opened: int
    """The suits already led in a completed trick of this hand, as a mask of their cards."""
    hearts_broken: bool
    first_leader: int
    leader: int
    to_move: int
    _explicit: list[Deal] | None
    _undo: list[bool | _TrickUndo | _ExposeUndo | _Snapshot]
    _legal: int
    _lead_rules: bool
    """Whether a variant restricts what a trick's leader may lead (read once: rules are fixed)."""
    _sequential: bool
    _teams: bool
    """``rules.sequential_exposure`` and ``rules.teams``, read once (an attribute of the
    pure-Python Rules costs a dictionary lookup; these are read at every exposure, every hand)."""
    _led_mask: int
    _pig_taker: int
    _waiting: list[int]

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        seed: Seed = 0,
        deals: Iterable[Sequence[CardSet | int | str | Iterable[str]]] | None = None,
        _deal: bool = True,
    ) -> None:
        # _deal=False leaves the hand's fields unset, for copy() and from_observation() to fill
        # in: they would throw the first hand's deal away, and dealing (SHA-256 keys and a sort)
        # costs more than the rest of the copy.
        self.rules = rules if rules is not None else Rules()
        r = self.rules
        self._lead_rules = r.lead_2c or r.no_spade_lead_first_trick or r.hearts_must_break
        self._sequential = r.sequential_exposure
        self._teams = r.teams
        self.seed = seed
        self._explicit = None if deals is None else [parse_deal(d) for d in deals]
        self.totals = [0, 0, 0, 0]
        self.results = []
        self.deals = []
        self.hand_tricks = []
        self.move_stack = []
        self.outcome = None
        self._undo = []
        self._legal = -1
        self._pig_taker = -1
        self.hand_number = 0
        if _deal:
            self._start_hand()

    # -- the hand's lifecycle -------------------------------------------------------------

    def _start_hand(self) -> None:
        n = self.hand_number + 1
        deal = self._deal_for(n)
        self.hand_number = n
        self.deals.append(deal)
        self._clear_hand(deal)
        self.pass_offset = self.rules.pass_direction.offset(n) if self.rules.passing else 0
        if self.pass_offset:
            self.phase = Phase.PASSING
            self._waiting = [0, 1, 2, 3]
        else:
            self._start_exposure()

    def _clear_hand(self, holdings: Sequence[int]) -> None:
        self.hands = list(holdings)
        self.dealer = (self.hand_number + 2) % 4 if self.rules.dealer_left_leads else None
        self.passed = [0, 0, 0, 0]
        self.pass_offset = 0
        self.exposed_by = [0, 0, 0, 0]
        self.exposed = 0
        self.tricks = []
        self.taken = [0, 0, 0, 0]
        self.trick = []
        self.opened = 0
        self.hearts_broken = False
        self.first_leader = -1
        self.leader = -1
        self.to_move = -1
        self._led_mask = 0
        self._waiting = []

    @classmethod
    def from_observation(
        cls, obs: Observation, holdings: Sequence[CardSet | int], *, seed: Seed = 0
    ) -> Game:
        """The game at ``obs``'s moment of trick play, had the seats held ``holdings``.

        ``holdings[s]`` are the cards seat ``s`` holds now: the observer's own hand and a guess
        at the others' (a determinization, for search). After this hand the game goes on with
        hands dealt from ``seed``; nothing before the observed hand can be taken back.
        """
        if obs.phase is not Phase.PLAYING:
            raise ValueError(f"a position can be built only in trick play, not {obs.phase.value}")
        masks = [h.mask if isinstance(h, CardSet) else h for h in holdings]
        played = obs.played.mask
        if len(masks) != 4 or masks[obs.seat] != obs.hand.mask:
            raise DealError(f"holdings must be 4 hands with seat {obs.seat}'s own hand")
        union = 0
        for mask in masks:
            if union & mask:
                raise DealError(f"{CardSet(union & mask)} held by two seats")
            union |= mask
        if union | played != FULL_DECK or union & played:
            raise DealError("holdings and the cards played must make up the deck exactly once")
        in_trick = {seat for seat, _ in obs.trick}
        for seat, mask in enumerate(masks):
            size = 13 - len(obs.tricks) - (seat in in_trick)
            if mask.bit_count() != size:
                raise DealError(f"seat {seat} must hold {size} cards now, not {mask.bit_count()}")
        game = cls(obs.rules, seed=seed, _deal=False)
        game.hand_number = obs.hand_number
        game.totals = list(obs.totals)
        game.results = list(obs.results)
        game._clear_hand(masks)
        game.phase = Phase.PLAYING
        game.exposed_by = [e.mask for e in obs.exposed]
        game.exposed = _mask_of_sets(obs.exposed)
        game.tricks = list(obs.tricks)
        for trick in game.tricks:
            won = _mask_of(trick.cards)
            game.taken[trick.winner] |= won
            game.opened |= SUIT_MASKS[trick.cards[0] // 13]
            if won & _PIG_BIT:
                game._pig_taker = trick.winner
        game.trick = [card for _, card in obs.trick]
        game.first_leader = obs.first_leader if obs.first_leader is not None else -1
        game.leader = obs.trick_leader if obs.trick_leader is not None else -1
        game.to_move = (game.leader + len(game.trick)) % 4
        game._led_mask = SUIT_MASKS[game.trick[0] // 13] if game.trick else 0
        game.hearts_broken = obs.hearts_broken
        return game

    def _deal_for(self, hand_number: int) -> Deal:
        if self._explicit is None:
            return deal_from_seed(self.seed, hand_number)
        if hand_number > len(self._explicit):
            raise DealError(f"no deal was given for hand {hand_number}")
        return self._explicit[hand_number - 1]

    def _holder(self, card: int) -> int:
        bit = 1 << card
        for seat in range(4):
            if self.hands[seat] & bit:
                return seat
        raise AssertionError(f"nobody holds {CARD_NAMES[card]}")

    def _start_exposure(self) -> None:
        rules = self.rules
        if rules.lead_2c:
            self.first_leader = self._holder(TWO_OF_CLUBS)
        elif self.dealer is not None:
            self.first_leader = (self.dealer + 1) % 4
        elif self.hand_number == 1:
            self.first_leader = self._holder(TWO_OF_SPADES)
        else:
            self.first_leader = self._pig_taker
        if rules.exposure:
            first = self.first_leader
            in_order = [(first + i) % 4 for i in range(4)]
            self._waiting = [s for s in in_order if self.hands[s] & EXPOSABLE_MASK]
            if self._waiting:
                self.phase = Phase.EXPOSING
                return
        self._start_play()

    def _start_play(self) -> None:
        self.phase = Phase.PLAYING
        self._waiting = []
        self.leader = self.to_move = self.first_leader

    def _finish_trick(self) -> None:
        """Score the completed trick (and the hand after the 13th); may raise DealError."""
        trick = self.trick
        leader = self.leader
        led = self._led_mask
        c0, c1, c2, c3 = trick
        mask = 1 << c0 | 1 << c1 | 1 << c2 | 1 << c3
        best = (mask & led).bit_length() - 1
        winner = (leader + trick.index(best)) % 4
        # tuple(trick) reuses the list's card objects; (c0, c1, c2, c3) would box them again.
        self.tricks.append(_new_tuple(_TRICK_TYPE, (leader, tuple(trick), winner)))
        self.taken[winner] = self.taken[winner] | mask
        self.opened |= led
        trick.clear()
        self._led_mask = 0
        self.leader = self.to_move = winner
        if mask & _PIG_BIT:
            self._pig_taker = winner
        if len(self.tricks) == 13:
            self._finish_hand()

    def _finish_hand(self) -> None:
        rules = self.rules
        taken, exposed, cap = self.taken, self.exposed, rules.hand_cap
        q0, q1, q2, q3 = qd_later_tricks(self.tricks) if rules.qd_bonus else (0, 0, 0, 0)
        seats = (
            score_seat(taken[0], exposed, qd_later_tricks=q0, hand_cap=cap),
            score_seat(taken[1], exposed, qd_later_tricks=q1, hand_cap=cap),
            score_seat(taken[2], exposed, qd_later_tricks=q2, hand_cap=cap),
            score_seat(taken[3], exposed, qd_later_tricks=q3, hand_cap=cap),
        )
        totals = self.totals
        for s in range(4):
            totals[s] = totals[s] + seats[s].score
        standing = self.standing()
        fields = (self.hand_number, CardSet(self.exposed), seats, standing)
        self.results.append(_new_tuple(_HAND_RESULT_TYPE, fields))
        self.hand_tricks.append(tuple(self.tricks))
        termination = self._termination(standing)
        if termination is None:
            self._start_hand()
            return
        self.phase = Phase.OVER
        self._waiting = []
        self.to_move = -1
        threshold = rules.losing_threshold
        out = tuple([s for s in range(4) if standing[s] <= threshold])
        ending = (termination, standing, self._places(standing), out, self.hand_number)
        self.outcome = _new_tuple(_OUTCOME_TYPE, ending)

    def standing(self) -> tuple[int, int, int, int]:
        """The totals that decide the match: each seat's, or with ``teams`` its team's."""
        t = self.totals
        if self._teams:
            a, b = t[0] + t[2], t[1] + t[3]
            return a, b, a, b
        return t[0], t[1], t[2], t[3]

    def _places(self, standing: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        if self._teams:
            a, b = standing[0], standing[1]
            pa, pb = (1 if a >= b else 2), (1 if b >= a else 2)
            return pa, pb, pa, pb
        return places_of(standing)

    def _termination(self, standing: tuple[int, int, int, int]) -> Termination | None:
        rules = self.rules
        n = self.hand_number
        fixed_hands = rules.fixed_hands
        if fixed_hands is not None:
            return Termination.FIXED_HANDS if n >= fixed_hands else None
        # With teams the two entries of a team are equal; compare teams, not seats.
        entries = standing[:2] if self._teams else standing
        reason: Termination | None = None
        if min(entries) <= rules.losing_threshold:
            reason = Termination.THRESHOLD
        elif Variant.END_AT_PLUS_1000 in rules.variants and max(entries) > PLUS_1000:
            reason = Termination.PLUS_1000
        if reason is not None:
            if Variant.TIE_SHARE in rules.variants:
                return reason
            bottom = Variant.TIE_CONTINUE_BOTTOM in rules.variants
            key = min(entries) if bottom else max(entries)
            if entries.count(key) == 1:
                return reason
        return Termination.HAND_CAP if n >= rules.max_hands else None

    # -- what is pending, and what is legal ------------------------------------------------

    @property
    def pending(self) -> list[Decision]:
        """The decisions the game waits for: one in trick play, up to four in a simultaneous
        phase (in the order the seats would act)."""
        phase = self.phase
        if phase is Phase.PLAYING:
            return [Decision(self.to_move, DecisionKind.PLAY, CardSet(self.legal_mask()), 1)]
        if phase is Phase.EXPOSING:
            seats = self._waiting[:1] if self._sequential else self._waiting
            return [
                Decision(s, DecisionKind.EXPOSE, CardSet(self.exposable_mask(s)), None)
                for s in seats
            ]
        if phase is Phase.PASSING:
            return [
                Decision(s, DecisionKind.PASS, CardSet(self.hands[s]), PASS_COUNT)
                for s in self._waiting
            ]
        return []

    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def legal_moves(self) -> CardSet:
        """The cards the seat on turn may play (empty outside trick play).

        >>> game = Game(Rules.with_variants("no_exposure"), seed=3)
        >>> game.legal_moves == CardSet(game.hands[game.to_move])
        True
        """
        return CardSet(self.legal_mask())

    def exposable_mask(self, seat: int) -> int:
        """The cards ``seat`` may expose now (those of its hand that can be exposed), as a mask:
        its :attr:`pending` decision's choices, for drivers that loop fast."""
        return self.hands[seat] & EXPOSABLE_MASK

    def legal_mask(self) -> int:
        """:attr:`legal_moves` as a mask, for drivers that loop fast."""
        if self._legal < 0:
            self._legal = self._legal_play(self.to_move) if self.phase is _PLAYING else 0
        return self._legal

    def legal_cards(self) -> list[Card]:
        """:attr:`legal_moves` as a list of cards, lowest first."""
        mask = self.legal_mask()
        cards = []
        while mask:
            low = mask & -mask
            cards.append(low.bit_length() - 1)
            mask ^= low
        return cards

    def _legal_play(self, seat: int) -> int:
        hand = self.hands[seat]
        led = self._led_mask
        if led:
            follow = hand & led
            if not follow:
                return hand
            if led & self.opened:
                return follow
            restricted = follow & self.exposed
            if restricted and restricted != follow:
                return follow & ~restricted
            return follow
        cands = (
            _lead_candidates(hand, self.rules, not self.tricks, self.hearts_broken)
            if self._lead_rules
            else hand
        )
        restricted = cands & self.exposed & ~self.opened
        while restricted:
            bit = restricted & -restricted
            restricted ^= bit
            suit = SUIT_MASKS[(bit.bit_length() - 1) // 13]
            if hand & suit & ~bit:
                cands &= ~bit
        return cands

    def why_illegal(self, seat: int, card: int) -> str | None:
        """Why ``seat`` may not play ``card`` now, or ``None`` if it may."""
        reason = self.play_refusal(seat, card)
        return None if reason is None else reason.message

    def play_refusal(self, seat: int, card: int) -> Reason | None:
        """The :class:`~referee.refusals.Reason` ``seat`` may not play ``card`` now, or
        ``None`` if it may."""
        if self.phase is not Phase.PLAYING:
            return Reason(Refusal.NO_PLAY_NOW, phase=self.phase)
        if seat != self.to_move:
            return _not_your_turn(self.to_move, seat)
        return _refusal_on_turn(
            seat, card, hand=self.hands[seat], legal=self._legal_play(seat), led=self._led_mask,
            first=not self.tricks, hearts_broken=self.hearts_broken, rules=self.rules,
        )  # fmt: skip

    # -- moves -------------------------------------------------------------------------------

    def push(self, move: AnyMove) -> None:
        """Apply a move, or raise :class:`IllegalMoveError` (changing nothing)."""
        if type(move) is _PLAY_TYPE:
            # Read as objects and checked, so that the compiled build refuses a seat or card of
            # another type (True included) as the pure-Python one does, not with a TypeError.
            fields: tuple[object, object] = move
            raw_seat, raw_card = fields
            if type(raw_seat) is not int or type(raw_card) is not int:
                self._refuse_play(raw_seat, raw_card)
            seat: int = raw_seat
            card: int = raw_card
            legal = self._legal
            if legal < 0:
                legal = self.legal_mask()
            if not (seat == self.to_move and 0 <= card < 52 and legal >> card & 1):
                self._refuse_play(seat, card)
            bit = 1 << card
            trick = self.trick
            n = len(trick)
            # The undo record is as small as the play allows: most plays stay inside a trick.
            if n < 3:
                self._undo.append(self.hearts_broken)
                self.hands[seat] = self.hands[seat] ^ bit
                if not n:
                    self._led_mask = _SUIT_BITS << card // 13 * 13
                elif bit & _HEARTS and not self._led_mask & _HEARTS:
                    self.hearts_broken = True
                trick.append(card)
                self.to_move = (seat + 1) % 4
            elif len(self.tricks) < 12:
                opens_suit = not self._led_mask & self.opened
                self._undo.append((opens_suit, self._pig_taker, self.hearts_broken))
                self.hands[seat] = self.hands[seat] ^ bit
                if bit & _HEARTS and not self._led_mask & _HEARTS:
                    self.hearts_broken = True
                trick.append(card)
                self._finish_trick()
            else:
                snapshot = self._snapshot()
                self._undo.append(snapshot)
                self.hands[seat] = self.hands[seat] ^ bit
                if bit & _HEARTS and not self._led_mask & _HEARTS:
                    self.hearts_broken = True
                trick.append(card)
                try:
                    self._finish_trick()
                except DealError:  # explicit deals ran out: refuse the move, change nothing
                    self._undo.pop()
                    self._restore(snapshot)
                    raise
        elif type(move) is _EXPOSE_TYPE:
            self._check_exposure(move)
            self._undo.append((self._waiting[:], self.exposed))
            self._expose(move.seat, move.cards.mask)
        elif type(move) is _PASS_TYPE:
            self._check_pass(move)
            self._undo.append(self._snapshot())
            self._pass(move.seat, move.cards.mask)
        else:
            raise TypeError(f"not a move: {move!r}")
        self._legal = -1
        self.move_stack.append(move)

    def play(self, card: int | str) -> None:
        """Play a card for the seat on turn: ``game.play("QS")`` or ``game.play(card)``."""
        if isinstance(card, str):
            card = parse_card(card)
        seat = self.to_move
        self.push(_PLAYS[seat][card] if seat >= 0 and 0 <= card < 52 else Play(seat, card))

    def expose(self, seat: int, cards: CardSet | int | str | Iterable[str] = 0) -> None:
        """Expose cards for ``seat`` (none by default): ``game.expose(0, "QS AH")``, or a
        :class:`CardSet` or a mask, as a fast driver has them."""
        if isinstance(cards, CardSet):
            exposed = cards
        else:  # a mask, as play_random gives it, is checked by CardSet itself
            exposed = CardSet(cards) if isinstance(cards, int) else CardSet(cards_of(cards))
        self.push(_new_tuple(_EXPOSE_TYPE, (seat, exposed)))

    def pop(self) -> AnyMove:
        """Take back the last move and return it."""
        if not self._undo:
            raise IndexError("no move to take back")
        undo = self._undo.pop()
        move = self.move_stack.pop()
        self._legal = -1
        if type(undo) is bool:
            seat, card = cast(Play, move)
            self.hands[seat] |= 1 << card
            self.trick.pop()
            self.to_move = seat
            self.hearts_broken = undo
            if not self.trick:
                self._led_mask = 0
        elif isinstance(undo, _Snapshot):
            self._restore(undo)
        elif type(move) is _EXPOSE_TYPE:
            self._waiting, self.exposed = cast(_ExposeUndo, undo)
            self.exposed_by[move.seat] = 0
            # An exposure that closed the phase had started trick play.
            self.phase = Phase.EXPOSING
            self.leader = self.to_move = -1
        else:
            seat, card = cast(Play, move)
            last = self.tricks.pop()
            self.taken[last.winner] ^= _mask_of(last.cards)
            self.trick = list(last.cards[:3])
            self.hands[seat] |= 1 << card
            self.to_move = seat
            opened_suit, self._pig_taker, self.hearts_broken = cast(_TrickUndo, undo)
            self.leader = last.leader
            self._led_mask = SUIT_MASKS[last.cards[0] // 13]
            if opened_suit:
                self.opened ^= self._led_mask
        return move

    def _refuse_play(self, seat: object, card: object) -> NoReturn:
        if self.phase is not Phase.PLAYING:
            if self.phase is Phase.OVER:
                raise MatchOverError(_MATCH_OVER)
            raise NotYourTurnError(Reason(Refusal.CANNOT_PLAY_NOW, seat=seat, phase=self.phase))
        if type(seat) is not int or seat != self.to_move:
            raise NotYourTurnError(_not_your_turn(self.to_move, seat))
        if type(card) is not int or not 0 <= card < 52:
            raise IllegalMoveError(Reason(Refusal.NOT_A_CARD, offered=card))
        reason = self.play_refusal(seat, card)
        assert reason is not None, "a card outside the legal plays has a reason"
        raise IllegalMoveError(reason)

    def _check_waiting(self, seat: int, kind: DecisionKind) -> None:
        phase = Phase.PASSING if kind is DecisionKind.PASS else Phase.EXPOSING
        if self.phase is Phase.OVER:
            raise MatchOverError(_MATCH_OVER)
        if self.phase is not phase:
            raise NotYourTurnError(
                Reason(Refusal.CANNOT_DECIDE_NOW, seat=seat, kind=kind, phase=self.phase)
            )
        if seat not in self._waiting:
            raise NotYourTurnError(Reason(Refusal.NO_DECISION, seat=seat, kind=kind))
        if kind is DecisionKind.EXPOSE and self._sequential and seat != self._waiting[0]:
            raise NotYourTurnError(_not_your_turn(self._waiting[0], seat, DecisionKind.EXPOSE))

    def _check_exposure(self, move: Expose) -> None:
        seat, cards = move
        self._check_waiting(seat, DecisionKind.EXPOSE)
        mask = cards.mask
        self._check_held(seat, mask)
        if mask & ~EXPOSABLE_MASK:
            raise IllegalMoveError(
                Reason(Refusal.NOT_EXPOSABLE, cards=CardSet(mask & ~EXPOSABLE_MASK))
            )

    def _check_held(self, seat: int, mask: int) -> None:
        if mask & ~self.hands[seat]:
            raise IllegalMoveError(_not_held(seat, mask & ~self.hands[seat]))

    def _expose(self, seat: int, mask: int) -> None:
        self.exposed_by[seat] = mask
        self._waiting.remove(seat)
        if self._sequential:
            self.exposed |= mask
        if not self._waiting:
            self.exposed = (
                self.exposed_by[0] | self.exposed_by[1] | self.exposed_by[2] | self.exposed_by[3]
            )
            self._start_play()

    def _check_pass(self, move: Pass) -> None:
        seat, cards = move
        self._check_waiting(seat, DecisionKind.PASS)
        mask = cards.mask
        self._check_held(seat, mask)
        if mask.bit_count() != PASS_COUNT:
            raise IllegalMoveError(
                Reason(Refusal.PASS_COUNT, seat=seat, needed=PASS_COUNT, count=mask.bit_count())
            )

    def _pass(self, seat: int, mask: int) -> None:
        self.passed[seat] = mask
        self._waiting.remove(seat)
        if self._waiting:
            return
        offset = self.pass_offset
        for s in range(4):
            self.hands[s] &= ~self.passed[s]
        for s in range(4):
            self.hands[(s + offset) % 4] |= self.passed[s]
        self._start_exposure()

    # -- undo ----------------------------------------------------------------------------------

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(
            (
                self.hand_number, self.phase, self.dealer, self.first_leader, self.leader,
                self.to_move, self.exposed, self.opened, self.hearts_broken, self._led_mask,
                self._pig_taker, self.pass_offset, self.outcome,
            ),
            (
                self.hands[:], self.passed[:], self.exposed_by[:], self.taken[:], self.trick[:],
                self.totals[:], self._waiting[:],
            ),
            (len(self.tricks), len(self.results), len(self.deals), len(self.hand_tricks)),
            self.tricks,
        )  # fmt: skip

    def _restore(self, snap: _Snapshot) -> None:
        (
            self.hand_number, self.phase, self.dealer, self.first_leader, self.leader,
            self.to_move, self.exposed, self.opened, self.hearts_broken, self._led_mask,
            self._pig_taker, self.pass_offset, self.outcome,
        ) = snap.scalars  # fmt: skip
        self.hands, self.passed, self.exposed_by, self.taken, self.trick, self.totals = snap.lists[
            :6
        ]
        self._waiting = snap.lists[6]
        # A hand boundary replaces the list of tricks; within a hand it only grows.
        self.tricks = snap.tricks
        n_tricks, n_results, n_deals, n_hand_tricks = snap.lengths
        del self.tricks[n_tricks:]
        del self.results[n_results:]
        del self.deals[n_deals:]
        del self.hand_tricks[n_hand_tricks:]

    def copy(self) -> Game:
        """An independent copy; the copy cannot :meth:`pop` moves made before it was taken."""
        clone = Game(self.rules, seed=self.seed, _deal=False)
        clone._explicit = self._explicit
        clone._restore(self._snapshot())
        clone.tricks = self.tricks[:]
        clone.results = self.results[:]
        clone.deals = self.deals[:]
        clone.hand_tricks = self.hand_tricks[:]
        clone.move_stack = self.move_stack[:]
        return clone

    # -- views -----------------------------------------------------------------------------------

    def hand(self, seat: int) -> CardSet:
        return CardSet(self.hands[seat])

    def current_trick(self) -> list[tuple[int, int]]:
        """``(seat, card)`` of the trick being played, in play order."""
        return [((self.leader + i) % 4, c) for i, c in enumerate(self.trick)]

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know now; see :mod:`referee.observation`."""
        return observe(self, seat)

    def pending_exposers(self) -> list[int]:
        return list(self._waiting) if self.phase is Phase.EXPOSING else []

    def __repr__(self) -> str:
        return f"<Game hand {self.hand_number} {self.phase.value} totals={self.totals}>"

"""Properties of whole matches under random rules profiles and random legal play.

The central test runs the referee side by side with :class:`Model`, a second reading of
RULES.md written from the text with plain Python sets, and compares them after every move:
phase, hands, pending decisions and legal cards, tricks and their winners, scores, totals,
the end of the match and its ranking, and (at sampled moments) every seat's observation.
"""

import json
import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from referee import (
    EXPOSABLE_CARDS,
    SCORING_CARDS,
    CardSet,
    DealError,
    DecisionKind,
    Expose,
    Game,
    IllegalMoveError,
    NotYourTurnError,
    Observation,
    Pass,
    PassDirection,
    Phase,
    Play,
    Rules,
    Termination,
    Variant,
    deal_from_seed,
    parse_card,
    score_seat,
)
from referee.players import card_count, nth_card, play_random
from tests.referee.referee_support import deal_with, finish_hand, full_state, to_play

EXCLUSIVE = [
    (Variant.NO_EXPOSURE, Variant.SEQUENTIAL_EXPOSURE),
    (Variant.LEAD_2C, Variant.DEALER_LEFT_LEADS),
    (Variant.TIE_CONTINUE_BOTTOM, Variant.TIE_SHARE),
]
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
EXPOSABLE = set(EXPOSABLE_CARDS)
SCORING = set(SCORING_CARDS)
QS, QD, TWO_C, TWO_S = (parse_card(c) for c in ("QS", "QD", "2C", "2S"))
CARD_NAMES = set(CardSet((1 << 52) - 1).names())


def suit(card):
    return card // 13


@st.composite
def profiles(draw, max_hands=4):
    """Any valid combination of variants, with small caps so that matches stay short."""
    variants = set(draw(st.sets(st.sampled_from(list(Variant)))))
    for a, b in EXCLUSIVE:
        if a in variants and b in variants:
            variants.discard(draw(st.sampled_from([a, b])))
    params = {"max_hands": draw(st.integers(min_value=1, max_value=max_hands))}
    if Variant.PASS_3 in variants:
        params["pass_direction"] = draw(st.sampled_from(list(PassDirection)))
    if Variant.TARGET_500 not in variants and draw(st.booleans()):
        params["losing_threshold"] = draw(st.integers(min_value=-1200, max_value=-50))
    if draw(st.integers(min_value=0, max_value=3)) == 0:
        params["fixed_hands"] = draw(st.integers(min_value=1, max_value=params["max_hands"]))
    return Rules(variants=frozenset(variants), **params)


seeds = st.integers(min_value=0, max_value=2**32) | st.text(max_size=8)
randoms = st.randoms(use_true_random=False)


def random_move(game, rnd):
    """A uniformly random legal answer to one of the pending decisions."""
    decision = rnd.choice(game.pending)
    choices = list(decision.choices)
    if decision.kind is DecisionKind.PLAY:
        return Play(decision.seat, rnd.choice(choices))
    if decision.kind is DecisionKind.EXPOSE:
        return Expose(decision.seat, CardSet.of(c for c in choices if rnd.random() < 0.5))
    return Pass(decision.seat, CardSet.of(rnd.sample(choices, 3)))


class Model:
    """RULES.md again, from the text: one match, tracked with sets of card numbers."""

    def __init__(self, rules, seed, first_dealer):
        self.rules = rules
        self.seed = seed
        self.dealer = first_dealer if rules.dealer_left_leads else None
        self.totals = [0, 0, 0, 0]
        self.results = []
        self.outcome = None
        self.pig_taker = None
        self.n = 0
        self.start_hand()

    # the hand's lifecycle

    def start_hand(self):
        self.n += 1
        self.hands = [set(CardSet(mask)) for mask in deal_from_seed(self.seed, self.n)]
        self.exposed_by = {}
        self.exposed = set()
        self.opened = set()
        self.trick = []
        self.tricks = []
        self.taken = [set(), set(), set(), set()]
        self.broken = False
        self.passed = {}
        self.waiting = []
        self.to_move = None
        rules = self.rules
        self.offset = rules.pass_direction.offset(self.n) if rules.passing else 0
        if self.offset:
            self.phase = "passing"
        else:
            self.start_exposure()

    def holder(self, card):
        return next(s for s in range(4) if card in self.hands[s])

    def start_exposure(self):
        rules = self.rules
        if rules.lead_2c:
            leader = self.holder(TWO_C)
        elif rules.dealer_left_leads:
            leader = (self.dealer + 1) % 4
        elif self.n == 1:
            leader = self.holder(TWO_S)
        else:
            leader = self.pig_taker
        self.first_leader = leader
        order = [(leader + i) % 4 for i in range(4)]
        if Variant.NO_EXPOSURE not in rules.variants:
            self.waiting = [s for s in order if self.hands[s] & EXPOSABLE]
        if self.waiting:
            self.phase = "exposing"
        else:
            self.start_play()

    def start_play(self):
        self.phase = "playing"
        self.to_move = self.first_leader

    # what may be done

    def pending(self):
        if self.phase == "passing":
            return [(s, "pass", set(self.hands[s]), 3) for s in range(4) if s not in self.passed]
        if self.phase == "exposing":
            seats = self.waiting[:1] if self.rules.sequential_exposure else self.waiting
            return [(s, "expose", self.hands[s] & EXPOSABLE, None) for s in seats]
        if self.phase == "playing":
            return [(self.to_move, "play", self.legal(self.to_move), 1)]
        return []

    def legal(self, seat):
        hand = self.hands[seat]
        if self.trick:
            led = suit(self.trick[0][1])
            follow = {c for c in hand if suit(c) == led}
            if not follow:
                return set(hand)
            if led not in self.opened and len(follow) > 1:
                follow -= self.exposed
            return follow
        rules = self.rules
        first = not self.tricks
        if first and rules.lead_2c:
            return {TWO_C}
        banned = set()
        if first and rules.no_spade_lead_first_trick and any(suit(c) != SPADES for c in hand):
            banned.add(SPADES)
        if rules.hearts_must_break and not self.broken and any(suit(c) != HEARTS for c in hand):
            banned.add(HEARTS)
        cands = {c for c in hand if suit(c) not in banned} or set(hand)
        for card in list(cands):
            others = {c for c in hand if suit(c) == suit(card)} - {card}
            if card in self.exposed and suit(card) not in self.opened and others:
                cands.discard(card)
        return cands

    def visible_exposures(self, seat):
        """Each seat's exposed cards as ``seat`` may know them now."""
        if self.phase == "passing":
            return [set(), set(), set(), set()]
        if self.phase == "exposing" and not self.rules.sequential_exposure:
            return [self.exposed_by.get(s, set()) if s == seat else set() for s in range(4)]
        return [self.exposed_by.get(s, set()) for s in range(4)]

    # moves

    def pass_cards(self, seat, cards):
        self.passed[seat] = set(cards)
        if len(self.passed) < 4:
            return
        for s in range(4):
            self.hands[s] -= self.passed[s]
        for s in range(4):
            self.hands[(s + self.offset) % 4] |= self.passed[s]
        self.start_exposure()

    def expose(self, seat, cards):
        self.exposed_by[seat] = set(cards)
        self.waiting.remove(seat)
        if not self.waiting:
            self.exposed = set().union(*self.exposed_by.values())
            self.start_play()

    def play(self, seat, card):
        assert seat == self.to_move
        assert card in self.legal(seat)
        if self.exposed and card in self.exposed and suit(card) not in self.opened:
            # the exposure restriction, checked on every play that could break it
            same_suit = {c for c in self.hands[seat] if suit(c) == suit(card)}
            led = suit(self.trick[0][1]) if self.trick else suit(card)
            assert led != suit(card) or same_suit == {card}
        self.hands[seat].remove(card)
        if self.trick and suit(card) == HEARTS and suit(self.trick[0][1]) != HEARTS:
            self.broken = True
        self.trick.append((seat, card))
        if len(self.trick) < 4:
            self.to_move = (seat + 1) % 4
            return
        led = suit(self.trick[0][1])
        winner = max((c, s) for s, c in self.trick if suit(c) == led)[1]
        cards = [c for _, c in self.trick]
        self.tricks.append((self.trick[0][0], cards, winner))
        self.taken[winner] |= set(cards)
        self.opened.add(led)
        if QS in cards:
            self.pig_taker = winner
        self.trick = []
        self.to_move = winner
        if len(self.tricks) == 13:
            self.finish_hand()

    def finish_hand(self):
        rules = self.rules
        played = sorted(c for _, cards, _ in self.tricks for c in cards)
        assert played == list(range(52))
        assert not any(self.hands)
        qd_later = [0, 0, 0, 0]
        if rules.qd_bonus:
            i = next(i for i, (_, cards, _) in enumerate(self.tricks) if QD in cards)
            taker = self.tricks[i][2]
            qd_later[taker] = sum(1 for _, _, w in self.tricks[i + 1 :] if w == taker)
        seats = []
        for s in range(4):
            score = score_seat(
                CardSet.of(self.taken[s]),
                CardSet.of(self.exposed),
                qd_later_tricks=qd_later[s],
                hand_cap=rules.hand_cap,
            )
            parts = (score.hearts + score.pig + score.goat) * score.multiplier
            parts += score.transformer_bonus + score.qd_bonus
            assert score.score == (min(parts, 800) if rules.hand_cap else parts)
            seats.append(score)
        for s in range(4):
            self.totals[s] += seats[s].score
        standing = self.standing()
        self.results.append((self.n, CardSet.of(self.exposed), tuple(seats), standing))
        reason = self.termination(standing)
        if reason is None:
            if self.dealer is not None:
                self.dealer = (self.dealer + 1) % 4
            self.start_hand()
            return
        self.phase = "over"
        self.to_move = None
        if rules.teams:
            a, b = standing[0], standing[1]
            places = (1 if a >= b else 2, 1 if b >= a else 2) * 2
        else:
            places = tuple(1 + sum(o > t for o in standing) for t in standing)
        out = tuple(s for s in range(4) if standing[s] <= rules.losing_threshold)
        self.outcome = (reason, standing, places, out, self.n)

    def standing(self):
        t = self.totals
        if self.rules.teams:
            return (t[0] + t[2], t[1] + t[3], t[0] + t[2], t[1] + t[3])
        return tuple(t)

    def termination(self, standing):
        rules = self.rules
        if rules.fixed_hands is not None:
            return Termination.FIXED_HANDS if self.n == rules.fixed_hands else None
        entries = list(standing[:2] if rules.teams else standing)
        reason = None
        if min(entries) <= rules.losing_threshold:
            reason = Termination.THRESHOLD
        elif Variant.END_AT_PLUS_1000 in rules.variants and max(entries) > 1000:
            reason = Termination.PLUS_1000
        if reason is not None:
            if Variant.TIE_SHARE in rules.variants:
                return reason
            key = min(entries) if Variant.TIE_CONTINUE_BOTTOM in rules.variants else max(entries)
            if entries.count(key) == 1:
                return reason
        return Termination.HAND_CAP if self.n == rules.max_hands else None

    def push(self, move):
        if isinstance(move, Play):
            self.play(move.seat, move.card)
        elif isinstance(move, Expose):
            self.expose(move.seat, set(move.cards))
        else:
            self.pass_cards(move.seat, set(move.cards))


def assert_same(game, model):
    """The referee and the model agree on everything public."""
    assert game.phase.value == model.phase
    assert game.hand_number == model.n
    for s in range(4):
        assert game.hand(s) == CardSet.of(model.hands[s])
    pending = [(d.seat, d.kind.value, set(d.choices), d.count) for d in game.pending]
    assert pending == model.pending()
    for _, kind, choices, _ in pending:
        assert choices or kind == "expose"  # the seat on turn always has a legal card
    if model.phase == "playing":
        assert game.to_move == model.to_move
        assert game.legal_moves == CardSet.of(model.legal(model.to_move))
        assert game.legal_cards() == sorted(model.legal(model.to_move))
        assert [c for _, c in game.current_trick()] == [c for _, c in model.trick]
        assert [s for s, _ in game.current_trick()] == [s for s, _ in model.trick]
    if model.phase in ("playing", "over") and model.tricks:
        assert len(game.tricks) == len(model.tricks)
        leader, cards, winner = model.tricks[-1]
        assert game.tricks[-1] == (leader, tuple(cards), winner)
    assert game.totals == model.totals
    assert len(game.results) == len(model.results)
    if model.results:
        number, exposed, seats, standing = model.results[-1]
        result = game.results[-1]
        assert (result.hand_number, result.exposed) == (number, exposed)
        assert result.seats == seats
        assert result.totals == standing
    assert sum(sum(r.scores[s] for r in game.results) for s in range(4)) == sum(game.totals)
    for s in range(4):
        assert sum(r.scores[s] for r in game.results) == game.totals[s]
    if model.outcome is None:
        assert game.outcome is None
    else:
        reason, standing, places, out, hands = model.outcome
        outcome = game.outcome
        assert outcome.termination is reason
        assert outcome.totals == standing
        assert outcome.places == places
        assert outcome.out == out
        assert outcome.hands_played == hands
        assert outcome.winners == tuple(s for s in range(4) if places[s] == 1)


def card_names_in(value):
    """Every card name mentioned anywhere in a JSON value."""
    if isinstance(value, str):
        return {value} & CARD_NAMES
    if isinstance(value, dict):
        return set().union(*(card_names_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(card_names_in(v) for v in value))
    return set()


def assert_observation(game, model, seat):
    obs = game.observation(seat)
    assert Observation.from_json(obs.to_json()) == obs
    assert Observation.from_json(json.loads(json.dumps(obs.to_json()))) == obs
    assert obs.seat == seat
    assert obs.rules == game.rules
    assert obs.hand == CardSet.of(model.hands[seat])
    mine = [d for d in game.pending if d.seat == seat]
    assert obs.decision == (mine[0] if mine else None)
    visible = model.visible_exposures(seat)
    assert list(obs.exposed) == [CardSet.of(e) for e in visible]
    assert list(obs.taken) == [CardSet.of(t & SCORING) for t in model.taken]
    passed = model.passed.get(seat) if model.offset else None
    assert obs.passed == (None if passed is None else CardSet.of(passed))
    if model.offset and model.phase != "passing":
        assert obs.received == CardSet.of(model.passed[(seat - model.offset) % 4])
        assert obs.pass_to == (seat + model.offset) % 4
    else:
        assert obs.received is None
    assert obs.standing == model.standing()
    assert obs.totals == tuple(model.totals)
    # Privacy: another seat's cards appear only where this seat may know them.
    data = obs.to_json()
    data.pop("results")
    others = set().union(*(model.hands[s] for s in range(4) if s != seat))
    allowed = set().union(*visible) | (passed or set())
    leaked = {parse_card(n) for n in card_names_in(data)} & others
    assert leaked <= allowed, CardSet.of(leaked - allowed)


@given(profiles(), seeds, randoms)
def test_random_matches_follow_the_rule_book(rules, seed, rnd):
    game = Game(rules, seed=seed)
    model = Model(rules, seed, game.observation(0).dealer)
    assert_same(game, model)
    moves = 0
    while not game.is_over():
        move = random_move(game, rnd)
        game.push(move)
        model.push(move)
        moves += 1
        assert_same(game, model)
        if not isinstance(move, Play) or moves % 7 == 0 or game.is_over():
            for seat in range(4):
                assert_observation(game, model, seat)
    assert game.outcome.hands_played <= rules.max_hands
    if rules.fixed_hands is not None:
        assert game.outcome.hands_played == rules.fixed_hands
    assert game.pending == []


def fingerprint(game):
    return (
        tuple(game.hands), tuple(game.trick), len(game.tricks), game.to_move, game.phase,
        len(game.move_stack), tuple(game.totals), game.legal_mask(), game.hand_number,
    )  # fmt: skip


@settings(max_examples=40)
@given(profiles(max_hands=1), seeds, randoms)
def test_push_accepts_exactly_the_legal_moves_and_refusals_change_nothing(rules, seed, rnd):
    game = Game(rules, seed=seed)
    while not game.is_over():
        before, quick = full_state(game), fingerprint(game)
        for decision in game.pending:
            seat = decision.seat
            if decision.kind is DecisionKind.PLAY:
                legal = decision.choices
                for card in range(52):
                    if card in legal:
                        clone = game.copy()
                        clone.push(Play(seat, card))
                        assert clone.move_stack[-1] == Play(seat, card)
                    else:
                        with pytest.raises(IllegalMoveError):
                            game.push(Play(seat, card))
                        assert fingerprint(game) == quick
                for other in set(range(4)) - {seat}:
                    with pytest.raises(NotYourTurnError):
                        game.push(Play(other, rnd.randrange(52)))
            elif decision.kind is DecisionKind.EXPOSE:
                not_held = EXPOSABLE_CARDS - game.hand(seat)
                if not_held:
                    with pytest.raises(IllegalMoveError, match="does not hold"):
                        game.push(Expose(seat, CardSet.of([rnd.choice(list(not_held))])))
                plain = game.hand(seat) - EXPOSABLE_CARDS
                with pytest.raises(IllegalMoveError, match="only AH, QS, JD and TC"):
                    game.push(Expose(seat, CardSet.of([rnd.choice(list(plain))])))
            else:
                two = CardSet.of(list(decision.choices)[:2])
                with pytest.raises(IllegalMoveError, match="exactly 3"):
                    game.push(Pass(seat, two))
        waiting = {d.seat for d in game.pending}
        if game.phase is Phase.EXPOSING:
            for other in set(range(4)) - waiting:
                with pytest.raises(NotYourTurnError):
                    game.push(Expose(other, CardSet()))
        assert fingerprint(game) == quick
        assert full_state(game) == before
        game.push(random_move(game, rnd))


def play_out(game, rnd, limit=None):
    count = 0
    while not game.is_over() and (limit is None or count < limit):
        game.push(random_move(game, rnd))
        count += 1


@given(profiles(), seeds, randoms)
def test_same_seed_and_same_moves_give_the_same_match(rules, seed, rnd):
    game = Game(rules, seed=seed)
    play_out(game, rnd)
    again = Game(rules, seed=seed)
    for move in game.move_stack:
        again.push(move)
    assert full_state(again) == full_state(game)
    assert again.outcome == game.outcome
    assert again.results == game.results
    explicit = Game(rules, deals=game.deals)
    for move in game.move_stack:
        explicit.push(move)
    assert explicit.results == game.results
    assert explicit.outcome == game.outcome


@settings(max_examples=80)
@given(profiles(max_hands=2), seeds, randoms, st.integers(min_value=0, max_value=150))
def test_popping_every_move_restores_every_earlier_state(rules, seed, rnd, length):
    game = Game(rules, seed=seed)
    states = []
    while not game.is_over() and len(states) < length:
        states.append(full_state(game))
        game.push(random_move(game, rnd))
    while states:
        expected = states.pop()
        move = game.move_stack[-1]
        assert game.pop() == move
        assert full_state(game) == expected
    with pytest.raises(IndexError):
        game.pop()


@given(profiles(max_hands=3), seeds, randoms, st.integers(min_value=0, max_value=400))
def test_random_push_pop_interleavings_equal_a_replay(rules, seed, rnd, steps):
    game = Game(rules, seed=seed)
    pop_rate = rnd.choice([0.1, 0.25, 0.4])
    for _ in range(steps):
        if game.move_stack and (game.is_over() or rnd.random() < pop_rate):
            game.pop()
        else:
            game.push(random_move(game, rnd))
    replay = Game(rules, seed=seed)
    for move in list(game.move_stack):
        replay.push(move)
    assert full_state(game) == full_state(replay)
    # and both go on alike
    tail = []
    while not game.is_over() and len(tail) < 60:
        move = random_move(game, rnd)
        tail.append(move)
        game.push(move)
        replay.push(move)
    assert full_state(game) == full_state(replay)


@settings(max_examples=80)
@given(profiles(max_hands=3), seeds, randoms, st.integers(min_value=0, max_value=200))
def test_copy_is_independent_of_the_original(rules, seed, rnd, length):
    game = Game(rules, seed=seed)
    play_out(game, rnd, limit=length)
    clone = game.copy()
    assert full_state(clone) == full_state(game)
    with pytest.raises(IndexError):
        clone.pop()
    original = full_state(game)
    play_out(clone, rnd, limit=120)
    assert full_state(game) == original
    copied = full_state(clone)
    if game.move_stack:
        game.pop()
    play_out(game, rnd, limit=120)
    assert full_state(clone) == copied


GAME_FIELDS = getattr(Game, "__mypyc_attrs__", None) or tuple(Game.__annotations__)
"""Every field of a game (compiled, the class lists its attributes instead of annotating them)."""


def fields_of(game, skip):
    """Every field's value but the skipped ones; an unset field raises AttributeError."""
    return {name: getattr(game, name) for name in GAME_FIELDS if name not in skip}


def play_on_both(game, other, rnd):
    """Play the match out on ``game``, pushing the same moves to ``other``."""
    while not game.is_over():
        move = random_move(game, rnd)
        game.push(move)
        other.push(move)


def dealt_from_seed(game, seed, first_hand=1):
    """Whether the game's deals are those of ``seed``, hand by hand from ``first_hand``."""
    return game.deals == [
        deal_from_seed(seed, n) for n in range(first_hand, first_hand + len(game.deals))
    ]


@settings(max_examples=80)
@given(profiles(max_hands=3), seeds, randoms, st.integers(min_value=0, max_value=200))
def test_copy_has_every_field_of_the_original_and_deals_the_same_hands_after(
    rules, seed, rnd, length
):
    game = Game(rules, seed=seed)
    play_out(game, rnd, limit=length)
    clone = game.copy()
    # The copy cannot pop earlier moves; the cache of legal cards is compared by value.
    private = ("_undo", "_legal")
    assert fields_of(clone, private) == fields_of(game, private)
    assert clone._undo == []
    assert clone.legal_moves == game.legal_moves
    play_on_both(game, clone, rnd)
    assert fields_of(clone, private) == fields_of(game, private)
    assert dealt_from_seed(clone, seed)


def test_copy_keeps_following_the_explicit_deals():
    first, second = deal_with({0: "2S"}), deal_with({2: "2S QS"})
    game = Game(Rules(fixed_hands=2), deals=[first, second])
    clone = game.copy()
    finish_hand(clone)
    assert [clone.hand(s) for s in range(4)] == second
    assert [game.hand(s) for s in range(4)] == first


@given(seeds, randoms)
def test_simultaneous_exposures_stay_hidden_until_all_have_decided(seed, rnd):
    game = Game(seed=seed)
    while game.phase is Phase.EXPOSING:
        assert game.exposed == 0  # nothing is revealed before everyone has decided
        decided = set(range(4)) - {d.seat for d in game.pending}
        for seat in range(4):
            exposed = game.observation(seat).exposed
            for other in range(4):
                if other != seat or seat not in decided:
                    assert exposed[other] == CardSet()
        game.push(random_move(game, rnd))
    revealed = game.observation(0).exposed
    for seat in range(4):
        assert game.observation(seat).exposed == revealed
    assert CardSet.of(c for e in revealed for c in e) == CardSet(game.exposed)


@settings(max_examples=40)
@given(profiles(), seeds, st.integers(min_value=0, max_value=2**32))
def test_play_random_plays_legal_matches(rules, seed, rng_seed):
    game = Game(rules, seed=seed)
    play_random(game, random.Random(rng_seed), until_hand_ends=True)
    assert len(game.results) == 1
    play_random(game, random.Random(rng_seed))
    assert game.is_over()
    replay = Game(rules, seed=seed)
    model = Model(rules, seed, replay.observation(0).dealer)
    for move in game.move_stack:
        replay.push(move)
        model.push(move)
        assert_same(replay, model)
    assert full_state(replay) == full_state(game)


@settings(max_examples=40)
@given(profiles(max_hands=2), seeds, st.integers(min_value=0, max_value=2**32))
def test_play_random_chooses_what_the_pending_decisions_and_legal_cards_give(rules, seed, rng_seed):
    """play_random reads masks rather than game.legal_cards() and game.pending: the choices
    from the same random stream are the ones those lists give."""
    game = Game(rules, seed=seed)
    play_random(game, random.Random(rng_seed))
    rng, replay = random.Random(rng_seed), Game(rules, seed=seed)
    while not replay.is_over():
        decision = replay.pending[0]
        if decision.kind is DecisionKind.PLAY:
            cards = replay.legal_cards()
            replay.push(Play(decision.seat, cards[int(rng.random() * len(cards))]))
        elif decision.kind is DecisionKind.EXPOSE:
            replay.expose(decision.seat, decision.choices.mask & rng.getrandbits(52))
        else:
            chosen = rng.sample(replay.hand(decision.seat).names(), decision.count)
            replay.push(Pass(decision.seat, CardSet.parse(chosen)))
    assert replay.move_stack == game.move_stack


@given(st.integers(min_value=0, max_value=(1 << 52) - 1), st.integers(min_value=0, max_value=51))
def test_card_count_and_nth_card_agree_with_the_card_set(mask, k):
    cards = list(CardSet(mask))
    assert card_count(mask) == len(cards)
    if k < len(cards):
        assert nth_card(mask, k) == cards[k]


# -- Game.from_observation (positions for search) ------------------------------------------------

PASS_KEYS = ("passed", "received", "pass_to")


def comparable(game, hand_number):
    """Observations without the pass fields, which a rebuilt position does not know."""
    out = []
    for seat in range(4):
        data = game.observation(seat).to_json()
        if game.hand_number == hand_number:
            for key in PASS_KEYS:
                data.pop(key)
        out.append(data)
    return out


def to_trick_play(game, rnd, length):
    play_out(game, rnd, limit=length)
    while game.phase in (Phase.PASSING, Phase.EXPOSING):
        game.push(random_move(game, rnd))
    assume(not game.is_over())


@settings(max_examples=80)
@given(profiles(max_hands=3), seeds, randoms, st.integers(min_value=0, max_value=120))
def test_from_observation_with_the_true_hands_goes_on_like_the_game(rules, seed, rnd, length):
    game = Game(rules, seed=seed)
    to_trick_play(game, rnd, length)
    seat = rnd.randrange(4)
    rebuilt = Game.from_observation(
        game.observation(seat), [game.hand(s) for s in range(4)], seed=seed
    )
    number = game.hand_number
    assert comparable(rebuilt, number) == comparable(game, number)
    moves = 0
    while not game.is_over():
        move = random_move(game, rnd)
        game.push(move)
        rebuilt.push(move)
        moves += 1
        assert rebuilt.legal_moves == game.legal_moves
        assert rebuilt.to_move == game.to_move
        assert rebuilt.totals == game.totals
        if moves % 9 == 0 or game.is_over():
            assert comparable(rebuilt, number) == comparable(game, number)
    assert rebuilt.outcome == game.outcome
    assert rebuilt.results == game.results


NOT_OBSERVED = {
    "deals": [], "hand_tricks": [], "move_stack": [], "passed": [0, 0, 0, 0], "pass_offset": 0,
    "_undo": [],
}  # fmt: skip
"""What a rebuilt position does not know of the game, and holds instead: nothing before the
observed hand, and not the hand's passes."""


@settings(max_examples=80)
@given(profiles(max_hands=3), seeds, randoms, st.integers(min_value=0, max_value=120))
def test_from_observation_has_every_observed_field_and_deals_the_same_hands_after(
    rules, seed, rnd, length
):
    game = Game(rules, seed=seed)
    to_trick_play(game, rnd, length)
    number = game.hand_number
    rebuilt = Game.from_observation(
        game.observation(rnd.randrange(4)), [game.hand(s) for s in range(4)], seed=seed
    )
    # The pig's taker before this hand is not observed, nor needed: this hand sets it again.
    skip = (*NOT_OBSERVED, "_legal", "_pig_taker")
    assert fields_of(rebuilt, skip) == fields_of(game, skip)
    assert {name: getattr(rebuilt, name) for name in NOT_OBSERVED} == NOT_OBSERVED
    assert rebuilt.legal_moves == game.legal_moves
    play_on_both(game, rebuilt, rnd)
    skip = ("deals", "hand_tricks", "move_stack", "_undo", "_legal")
    if game.hand_number == number:  # the match ended in the observed hand
        skip = (*skip, "passed", "pass_offset")
    assert fields_of(rebuilt, skip) == fields_of(game, skip)
    assert rebuilt.deals == game.deals[number:]
    assert dealt_from_seed(rebuilt, seed, first_hand=number + 1)


@settings(max_examples=40)
@given(profiles(max_hands=2), seeds, randoms, st.integers(min_value=0, max_value=120))
def test_from_observation_with_guessed_hands_is_a_playable_position(rules, seed, rnd, length):
    game = Game(rules, seed=seed)
    to_trick_play(game, rnd, length)
    seat = rnd.randrange(4)
    others = [s for s in range(4) if s != seat]
    unknown = [c for s in others for c in game.hand(s)]
    rnd.shuffle(unknown)
    guess = [game.hand(seat)] * 4
    for s in others:
        count = len(game.hand(s))
        guess[s], unknown = CardSet.of(unknown[:count]), unknown[count:]
    obs = game.observation(seat)
    rebuilt = Game.from_observation(obs, guess, seed=seed)
    assert rebuilt.observation(seat).hand == obs.hand
    if rebuilt.to_move == seat:
        assert rebuilt.legal_moves == game.legal_moves
    play_out(rebuilt, rnd)
    assert rebuilt.is_over()
    assert len(rebuilt.results) >= len(game.results) + 1


def test_from_observation_refuses_inconsistent_holdings():
    game = to_play(Game(seed=5))
    game.play(game.legal_moves.lowest())
    obs = game.observation(1)
    hands = [game.hand(s) for s in range(4)]
    with pytest.raises(DealError):
        Game.from_observation(obs, hands[:3])
    with pytest.raises(DealError):
        Game.from_observation(obs, [hands[1], hands[0], hands[2], hands[3]])
    with pytest.raises(DealError):
        Game.from_observation(obs, [hands[0], hands[1], hands[2], hands[2]])
    with pytest.raises(DealError):
        Game.from_observation(obs, [hands[0], hands[1], hands[2], CardSet()])
    with pytest.raises(ValueError, match="only in trick play"):
        Game.from_observation(Game(seed=5).observation(0), hands)


def test_from_observation_refuses_holdings_of_the_wrong_sizes():
    game = to_play(Game(seed=5))
    game.play(game.legal_moves.lowest())  # seat 3 leads: it holds 12 cards, the others 13
    hands = [game.hand(s) for s in range(4)]
    moved = CardSet.of(list(hands[3])[:3])
    wrong = [hands[0], hands[1], hands[2] | moved, hands[3] - moved]  # 13, 13, 15, 10
    with pytest.raises(DealError):
        Game.from_observation(game.observation(1), wrong)

"""The referee's refusals: each carries a reason (a code and its parameters), its message is
written from the reason, word for word as before, and a seat's observation tells the same
reason as the whole game does."""

import pytest
from hypothesis import given, settings

from referee import (
    CardSet,
    DecisionKind,
    Expose,
    Game,
    IllegalMoveError,
    Pass,
    Phase,
    Play,
    Reason,
    Refusal,
    Suit,
    card_name,
    observed_play_refusal,
)
from referee.refusals import MESSAGES
from tests.referee.referee_support import REFUSAL_SAMPLES
from tests.referee.test_properties import profiles, random_move, randoms, seeds


def test_every_code_has_a_message_and_a_sample():
    assert set(MESSAGES) == set(Refusal)
    assert {reason.code for reason, _ in REFUSAL_SAMPLES} == set(Refusal)


@pytest.mark.parametrize(("reason", "text"), REFUSAL_SAMPLES, ids=lambda v: getattr(v, "code", ""))
def test_each_message_reads_as_it_always_has(reason, text):
    assert reason.message == text
    assert str(IllegalMoveError(reason)) == text
    assert IllegalMoveError(reason).reason is reason


def test_a_reason_has_only_the_parameters_it_names():
    with pytest.raises(TypeError):
        Reason(Refusal.NOT_HELD, player=2)  # type: ignore[call-arg]
    assert Reason(Refusal.MUST_LEAD_2C, seat=1) == Reason(Refusal.MUST_LEAD_2C, seat=1)


def former_why_illegal(game: Game, seat: int, card: int) -> str | None:
    """The referee's reasons as they were written before they had codes, over the game's public
    state: the texts the reasons must still read as."""
    if game.phase is not Phase.PLAYING:
        return f"no card is played now: the game is {game.phase.value}"
    if seat != game.to_move:
        return f"it is seat {game.to_move}'s turn to play, not seat {seat}'s"
    hand = game.hand(seat)
    name = card_name(card)
    if card not in hand:
        return f"seat {seat} does not hold {name}"
    if card in game.legal_moves:
        return None
    suit = Suit(card // 13)
    rules = game.rules
    if game.trick and Suit(game.trick[0] // 13) is not suit:
        return f"seat {seat} must follow {Suit(game.trick[0] // 13).plural}"
    if not game.trick:
        first = not game.tricks
        if first and rules.lead_2c:
            return f"seat {seat} must lead 2C to the first trick"
        cands = hand
        if first and rules.no_spade_lead_first_trick:
            cands -= CardSet.of(c for c in hand if c // 13 == Suit.SPADES)
        if rules.hearts_must_break and not game.hearts_broken:
            cands -= CardSet.of(c for c in hand if c // 13 == Suit.HEARTS)
        if card not in (cands or hand):
            if suit is Suit.HEARTS and rules.hearts_must_break and not game.hearts_broken:
                return f"seat {seat} may not lead a heart before hearts are broken"
            return f"seat {seat} may not lead a spade to the first trick"
    return (
        f"exposed {name} cannot be played to the first {suit.singular} trick "
        f"while seat {seat} holds other {suit.plural}"
    )


@settings(max_examples=40)
@given(profiles(max_hands=1), seeds, randoms)
def test_refusals_carry_their_reason_and_read_as_before(rules, seed, rnd):
    game = Game(rules, seed=seed)
    while not game.is_over():
        for seat in range(4):
            obs = game.observation(seat)
            for card in range(52):
                reason = game.play_refusal(seat, card)
                assert game.why_illegal(seat, card) == former_why_illegal(game, seat, card)
                assert (reason and reason.message) == former_why_illegal(game, seat, card)
                assert observed_play_refusal(obs, card) == reason
        for decision in game.pending:
            seat = decision.seat
            if decision.kind is DecisionKind.PLAY:
                refused = [c for c in range(52) if c not in decision.choices]
                move: Play | Expose | Pass = Play(seat, rnd.choice(refused))
            elif decision.kind is DecisionKind.EXPOSE:
                move = Expose(seat, CardSet.of([rnd.choice(list(game.hand(seat)))]))
            else:
                move = Pass(seat, CardSet.of(list(decision.choices)[:2]))
            try:
                game.copy().push(move)
            except IllegalMoveError as error:
                assert str(error) == error.reason.message
                if isinstance(move, Play):
                    assert error.reason == game.play_refusal(seat, move.card)
        game.push(random_move(game, rnd))

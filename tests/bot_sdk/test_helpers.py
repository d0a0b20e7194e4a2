"""The Tracker: what it infers must always be true of the real, hidden hands."""

from __future__ import annotations

import pytest

from bot_sdk.helpers import DECK, HEARTS, CardSet, Suit, Tracker, parse_card
from referee import Expose, Game, Pass, RandomPlayer, Rules


def test_a_trick_taking_the_pig() -> None:
    game = Game(seed=1)
    game.push(Expose(3, CardSet()))
    game.push(Expose(0, CardSet()))
    for card in ("2S", "KS", "QS", "4S"):
        game.play(card)
    tracker = Tracker(game.observation(3))
    assert tracker.points == (0, 0, 0, -100)
    assert tracker.hearts_runner is None
    assert tracker.led_suit is None and tracker.winning is None
    assert str(tracker.played) == "2S 4S QS KS"
    assert tracker.voids[:3] == (frozenset(), frozenset(), frozenset())


def test_a_discard_shows_a_void() -> None:
    game = Game(Rules.with_variants("no_exposure"), seed=6)
    while not any(c // 13 != game.current_trick()[0][1] // 13 for _, c in game.current_trick()):
        game.play(game.legal_moves.highest())
    trick = game.current_trick()
    led = Suit(trick[0][1] // 13)
    discarder = next(s for s, c in trick if c // 13 != led)
    observer = (discarder + 1) % 4
    tracker = Tracker(game.observation(observer))
    assert led in tracker.voids[discarder]
    assert not tracker.may_hold(discarder).of_suit(led)
    assert tracker.led_suit is led and tracker.winning is not None


def test_passed_cards_are_known_to_be_with_the_receiver() -> None:
    game = Game(Rules.with_variants("pass_3"), seed=2)
    passes = {s: CardSet.of(list(game.hand(s))[:3]) for s in range(4)}
    game.push(Pass(0, passes[0]))
    assert Tracker(game.observation(0)).known[1] == CardSet()  # not everyone has passed yet
    for seat in (1, 2, 3):
        game.push(Pass(seat, passes[seat]))
    tracker = Tracker(game.observation(0))
    assert passes[0].issubset(tracker.known[1])
    assert passes[0].issubset(tracker.may_hold(1))
    assert not passes[0] & tracker.may_hold(2)


def test_exposed_cards_are_known_to_be_with_their_owner() -> None:
    game = Game(seed=1)
    game.push(Expose(3, CardSet.parse("AH")))
    game.push(Expose(0, CardSet.parse("QS")))
    tracker = Tracker(game.observation(1))
    assert parse_card("AH") in tracker.known[3] and parse_card("QS") in tracker.known[0]
    game.play("2S")
    game.play("KS")
    assert parse_card("QS") in Tracker(game.observation(1)).known[0]


@pytest.mark.parametrize(
    "rules",
    [Rules(fixed_hands=2), Rules.with_variants("pass_3", "sequential_exposure", fixed_hands=2)],
)
def test_every_inference_holds_at_every_decision_of_random_matches(rules: Rules) -> None:
    game = Game(rules, seed=9)
    players = [RandomPlayer(s) for s in range(4)]
    while not game.is_over():
        for decision in game.pending:
            obs = game.observation(decision.seat)
            tracker = Tracker(obs)
            others = CardSet()
            for seat in range(4):
                hand = game.hand(seat)
                if seat != obs.seat:
                    others |= hand
                assert tracker.known[seat].issubset(hand), seat
                assert hand.issubset(tracker.may_hold(seat)), seat
                for suit in tracker.voids[seat]:
                    assert not hand.of_suit(suit), (seat, suit)
            assert tracker.out == others == DECK - obs.hand - obs.played
            takers = {s for s in range(4) if obs.taken[s] & HEARTS}
            assert tracker.hearts_runner == (takers.pop() if len(takers) == 1 else None)
            game.push(players[decision.seat].decide(decision))

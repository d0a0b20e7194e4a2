"""The standard profile, rule by rule, on explicit deals (RULES.md sections 2 to 5)."""

import pytest

from referee import (
    CardSet,
    Decision,
    DecisionKind,
    Expose,
    Game,
    IllegalMoveError,
    InvalidCardError,
    MatchOverError,
    NotYourTurnError,
    Pass,
    Phase,
    Play,
    Rules,
    parse_card,
)
from tests.referee.referee_support import (
    advance,
    deal_with,
    finish_hand,
    finish_match,
    full_state,
    play_cards,
    preferring,
    to_play,
)

# Seat s holds every card whose number is s modulo 4: everyone holds every suit, seat 3
# holds 2S and no exposable card.
ROUND_ROBIN = [CardSet.of(c for c in range(52) if c % 4 == s) for s in range(4)]

# Seat 3 holds 2S and only spades and hearts; seat 1 is void in clubs, seat 2 in spades.
VOIDS = [
    CardSet.parse("2C 4C 6C 8C TC QC 3S 4S 5S 6S 7S 8S 9S"),
    CardSet.parse("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
    CardSet.parse("3C 5C 7C 9C JC KC AC 2H 3H 4H 5H 6H 7H"),
    CardSet.parse("2S TS JS QS KS AS 8H 9H TH JH QH KH AH"),
]

# For the exposure restriction: seat 0 leads (2S); seat 1 holds TC with other clubs and QS with
# other spades; seat 2 holds AH with other hearts and JD with other diamonds.
EXPOSURES = [
    CardSet.parse("2S 3S 4S 2C 3C 4C 5C 2D 3D 4D 5D 6D 7D"),
    CardSet.parse("9C TC JC 5S 6S QS 8D 9D 2H 3H 4H 5H 6H"),
    CardSet.parse("6C 7C 8C TD JD QD KD AD 7H 8H 9H TH AH"),
    CardSet.parse("QC KC AC 7S 8S 9S TS JS KS AS JH QH KH"),
]


def names(cards):
    return CardSet.parse(cards) if isinstance(cards, str) else cards


def refused(game, move, error, message):
    """Push ``move``, expect ``error`` whose message contains ``message``, and check that the
    refusal changed nothing."""
    before = full_state(game)
    with pytest.raises(error) as info:
        game.push(move)
    assert message in str(info.value)
    assert full_state(game) == before
    return str(info.value)


def P(seat, card):
    return Play(seat, parse_card(card))


def test_explicit_deals_are_valid():
    for deal in (ROUND_ROBIN, VOIDS, EXPOSURES):
        Game(deals=[deal])


# -- who leads ------------------------------------------------------------------------------


def test_holder_of_2s_leads_the_first_hand():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    assert game.first_leader == 3
    assert game.to_move == 3
    assert game.observation(0).first_leader == 3
    assert game.pending[0].seat == 3
    assert game.pending[0].kind is DecisionKind.PLAY


def test_the_leader_need_not_play_2s():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    assert game.legal_moves == game.hand(3)
    game.play("5C")
    assert game.current_trick() == [(3, parse_card("5C"))]


def test_the_taker_of_qs_leads_the_next_hand():
    hand_1 = [
        CardSet.parse("2S 3S 4S 5S 6S 7S 8S 9S TS JS KS 2D 3D"),
        CardSet.parse("QS 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC"),
        CardSet.parse("AS AC 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
        CardSet.parse(" ".join(r + "H" for r in "23456789TJQKA")),
    ]
    hand_2 = deal_with({3: "2S"})
    game = to_play(Game(Rules(fixed_hands=2), deals=[hand_1, hand_2]))
    # Trick 1: 2S led, seat 1 must give up its only spade QS, seat 2 takes it with AS.
    game.play("2S")
    assert game.legal_moves == CardSet.parse("QS")
    game.play("QS")
    assert game.legal_moves == CardSet.parse("AS")
    game.play("AS")
    game.play("2H")
    assert game.tricks[-1].winner == 2
    finish_hand(game)
    assert parse_card("QS") in game.results[0].seats[2].taken
    to_play(game)
    assert game.hand_number == 2
    assert game.first_leader == 2
    assert game.to_move == 2
    assert 2 not in [s for s in range(4) if parse_card("2S") in game.hand(s)]


# -- playing a trick ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lead", "wrong", "suit"),
    [("5C", "5D", "clubs"), ("4D", "2C", "diamonds"), ("3H", "3S", "hearts"),
     ("2S", "4H", "spades")],
)  # fmt: skip
def test_must_follow_the_suit_led(lead, wrong, suit):
    game = to_play(Game(deals=[ROUND_ROBIN]))
    game.play(lead)
    assert game.legal_moves == game.hand(0).of_suit(parse_card(lead) // 13)
    refused(game, P(0, wrong), IllegalMoveError, f"seat 0 must follow {suit}")


def test_any_card_when_void():
    game = to_play(Game(deals=[VOIDS]))
    assert game.to_move == 3
    game.play("2S")
    game.play("9S")  # seat 0 follows
    assert game.legal_moves == game.hand(1)  # seat 1 holds no spade
    game.play("AD")
    assert game.legal_moves == game.hand(2)
    game.play("AC")


def test_the_highest_card_of_the_suit_led_wins():
    game = to_play(Game(deals=[VOIDS]))
    for card in ("2S", "9S", "AD", "AC"):
        game.play(card)
    trick = game.tricks[-1]
    assert trick.leader == 3
    assert trick.winner == 0
    assert [s for s, _ in trick.plays()] == [3, 0, 1, 2]
    assert game.to_move == 0
    assert game.observation(0).taken[0] == CardSet()  # 2S 9S AD AC: nothing scores


def test_trick_winner_takes_the_scoring_cards():
    game = to_play(Game(deals=[VOIDS]))
    for card in ("2S", "3S", "JD", "AC"):
        game.play(card)
    assert game.tricks[-1].winner == 0
    assert game.observation(2).taken[0] == CardSet.parse("JD")


def test_hearts_may_be_led_at_any_time_in_the_standard_profile():
    game = to_play(Game(deals=[VOIDS]))
    assert not game.tricks
    assert game.hand(3).of_suit(2).issubset(game.legal_moves)
    game.play("AH")
    assert game.current_trick() == [(3, parse_card("AH"))]


def test_scoring_cards_may_be_played_to_the_first_trick():
    game = to_play(Game(deals=[VOIDS]))
    game.play("QS")  # the pig leads the first trick
    game.play("9S")
    game.play("JD")  # the goat is discarded on it
    game.play("7H")
    assert game.tricks[0].winner == 3
    assert game.observation(0).taken[3] == CardSet.parse("QS JD 7H")


def test_trick_play_goes_round_in_seat_order():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    seats = []
    for _ in range(8):
        seats.append(game.to_move)
        game.play(game.legal_moves.lowest())
    assert seats[:4] == [3, 0, 1, 2]
    winner = game.tricks[0].winner
    assert seats[4:] == [(winner + i) % 4 for i in range(4)]


# -- exposure -------------------------------------------------------------------------------


def test_only_holders_of_exposable_cards_are_asked_in_order_from_the_leader():
    game = Game(deals=[ROUND_ROBIN])
    assert game.phase is Phase.EXPOSING
    pending = game.pending
    assert [d.seat for d in pending] == [0, 1, 2]  # leader 3 holds none of AH QS JD TC
    assert all(d.kind is DecisionKind.EXPOSE and d.count is None for d in pending)
    assert [str(d.choices) for d in pending] == ["TC", "QS", "JD AH"]
    assert game.observation(3).decision is None


def test_a_decision_is_a_read_only_value():
    decision = Game(deals=[ROUND_ROBIN]).pending[0]
    same = Decision(0, DecisionKind.EXPOSE, CardSet.parse("TC"), None)
    assert decision == same and hash(decision) == hash(same)
    assert decision != Decision(0, DecisionKind.EXPOSE, CardSet.parse("TC"), 1)
    assert decision != (0, DecisionKind.EXPOSE, CardSet.parse("TC"), None)
    assert repr(decision) == (
        "Decision(seat=0, kind=<DecisionKind.EXPOSE: 'expose'>, choices=CardSet('TC'), count=None)"
    )
    with pytest.raises(AttributeError):
        decision.seat = 1  # type: ignore[misc]
    assert Decision.from_json(0, decision.to_json()) == decision


def test_seat_without_exposable_card_cannot_expose():
    game = Game(deals=[ROUND_ROBIN])
    refused(game, Expose(3, CardSet()), NotYourTurnError, "seat 3 has no expose decision pending")


def test_only_held_cards_can_be_exposed():
    game = Game(deals=[ROUND_ROBIN])
    refused(game, Expose(0, CardSet.parse("QS")), IllegalMoveError, "seat 0 does not hold QS")


@pytest.mark.parametrize("card", ["2C", "6C", "AC", "QH"])
def test_only_ah_qs_jd_tc_can_be_exposed(card):
    game = Game(deals=[ROUND_ROBIN])
    message = refused(
        game, Expose(0, CardSet.parse("TC " + card)), IllegalMoveError, "only AH, QS, JD and TC"
    )
    assert card in message


def test_a_seat_exposes_only_once():
    game = Game(deals=[ROUND_ROBIN])
    game.push(Expose(0, CardSet.parse("TC")))
    refused(game, Expose(0, CardSet()), NotYourTurnError, "seat 0 has no expose decision pending")


def test_exposing_nothing_is_allowed():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    assert game.results == []
    assert all(o == CardSet() for o in game.observation(0).exposed)


def test_simultaneous_exposures_stay_hidden_until_all_have_decided():
    game = Game(deals=[ROUND_ROBIN])
    game.push(Expose(0, CardSet.parse("TC")))
    assert game.observation(0).exposed == (CardSet.parse("TC"), CardSet(), CardSet(), CardSet())
    for seat in (1, 2, 3):
        assert all(e == CardSet() for e in game.observation(seat).exposed)
    game.push(Expose(1, CardSet.parse("QS")))
    assert game.observation(1).exposed == (CardSet(), CardSet.parse("QS"), CardSet(), CardSet())
    assert game.observation(0).exposed == (CardSet.parse("TC"), CardSet(), CardSet(), CardSet())
    assert all(e == CardSet() for e in game.observation(2).exposed)
    assert all(e == CardSet() for e in game.observation(3).exposed)
    assert game.phase is Phase.EXPOSING
    game.push(Expose(2, CardSet.parse("AH")))
    assert game.phase is Phase.PLAYING
    revealed = (CardSet.parse("TC"), CardSet.parse("QS"), CardSet.parse("AH"), CardSet())
    for seat in range(4):
        assert game.observation(seat).exposed == revealed


def test_simultaneous_exposures_may_come_in_any_order():
    game = Game(deals=[ROUND_ROBIN])
    game.push(Expose(2, CardSet.parse("JD")))
    game.push(Expose(0, CardSet()))
    game.push(Expose(1, CardSet.parse("QS")))
    assert game.phase is Phase.PLAYING
    assert game.observation(3).exposed[2] == CardSet.parse("JD")


def test_expose_takes_names_a_mask_or_a_card_set_and_pushes_an_expose_move():
    game = Game(deals=[ROUND_ROBIN])
    game.expose(2, "JD AH")
    game.expose(0)  # nothing
    game.expose(1, CardSet.parse("QS").mask)
    assert game.move_stack == [
        Expose(2, CardSet.parse("JD AH")),
        Expose(0, CardSet()),
        Expose(1, CardSet.parse("QS")),
    ]
    assert game.phase is Phase.PLAYING
    assert game.pop() == Expose(1, CardSet.parse("QS"))
    assert game.phase is Phase.EXPOSING and game.pending_exposers() == [1]


def test_expose_refuses_like_push():
    game = Game(deals=[ROUND_ROBIN])
    with pytest.raises(IllegalMoveError, match="seat 0 does not hold QS"):
        game.expose(0, CardSet.parse("QS"))
    with pytest.raises(InvalidCardError):
        game.expose(0, "ZZ")
    with pytest.raises(ValueError, match="out of range"):
        game.expose(0, 1 << 52)
    assert game.move_stack == [] and game.pending_exposers() == [0, 1, 2]


def test_exposed_cards_stay_in_the_hand_and_are_recorded_in_the_result():
    game = to_play(Game(Rules(fixed_hands=1), deals=[ROUND_ROBIN]), exposures={1: "QS", 2: "AH"})
    assert parse_card("QS") in game.hand(1)
    finish_hand(game)
    assert game.results[0].exposed == CardSet.parse("QS AH")


# -- the exposure restriction -----------------------------------------------------------------


def test_exposed_card_cannot_follow_to_the_first_trick_of_its_suit():
    game = to_play(Game(deals=[EXPOSURES]), exposures={1: "TC QS", 2: "AH JD"})
    game.play("2S")
    assert game.legal_moves == CardSet.parse("5S 6S")
    refused(
        game,
        P(1, "QS"),
        IllegalMoveError,
        "exposed QS cannot be played to the first spade trick while seat 1 holds other spades",
    )


def test_exposure_restriction_is_gone_once_the_suit_was_led():
    game = to_play(Game(deals=[EXPOSURES]), exposures={1: "TC QS", 2: "AH JD"})
    play = preferring({0: "2S 3S", 1: "5S QS", 2: "2H", 3: "7S 8S"})
    play_cards(game, 4, play)  # 2S 5S (discard) 7S: seat 3 wins the first spade trick
    assert game.tricks[0].winner == 3
    game.play("8S")
    game.play("3S")
    assert game.legal_moves == CardSet.parse("6S QS")
    game.play("QS")
    game.play(game.legal_moves.lowest())  # seat 2 is void in spades
    assert game.tricks[1].winner == 1


def test_exposed_card_cannot_be_led_to_open_its_suit():
    game = to_play(Game(deals=[EXPOSURES]), exposures={1: "TC QS", 2: "AH JD"})
    play = preferring({0: "2S 3S", 1: "5S QS", 2: "2H 3H", 3: "7S 8S"})
    play_cards(game, 8, play)  # seat 1 wins the second spade trick with QS
    assert game.to_move == 1
    assert CardSet.parse("TC 9C JC").issubset(game.hand(1))
    assert parse_card("TC") not in game.legal_moves
    refused(
        game,
        P(1, "TC"),
        IllegalMoveError,
        "exposed TC cannot be played to the first club trick while seat 1 holds other clubs",
    )


def test_exposed_card_may_be_led_when_it_is_the_only_card_of_its_suit():
    game = to_play(
        Game(deals=[deal_with({0: "2S 3S AH 2C 3C 4C 5C 6C 7C 8C 9C 2D 3D"})]),
        exposures={0: "AH"},
    )
    assert game.to_move == 0
    assert parse_card("AH") in game.legal_moves
    game.play("AH")


def test_leader_may_not_lead_exposed_pig_or_ace_while_holding_others_of_the_suit():
    deal = deal_with({0: "2S 3S QS AH 5H 2C 3C 4C 5C 6C 7C 8C 9C"})
    game = to_play(Game(deals=[deal]), exposures={0: "QS AH"})
    assert game.legal_moves == game.hand(0) - CardSet.parse("QS AH")
    refused(game, P(0, "QS"), IllegalMoveError, "exposed QS cannot be played to the first spade")
    refused(game, P(0, "AH"), IllegalMoveError, "exposed AH cannot be played to the first heart")


def test_exposed_card_may_follow_when_it_is_the_only_card_of_its_suit():
    deal = deal_with(
        {0: "2S 2H 3H 4H 2C 3C 4C 5C 6C 7C 8C 9C 2D", 1: "AH 3D 4D 5D 6D 7D 8D 9D TD 3S 4S 5S 6S"}
    )
    game = to_play(Game(deals=[deal]), exposures={1: "AH"})
    game.play("2H")
    assert game.legal_moves == CardSet.parse("AH")
    game.play("AH")


def test_exposed_card_may_be_discarded_when_void_in_the_suit_led():
    deal = deal_with(
        {0: "2S 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", 1: "QS 3S 4S 5S 2D 3D 4D 5D 6D 7D 8D 9D TD"}
    )
    game = to_play(Game(deals=[deal]), exposures={1: "QS"})
    game.play("2C")
    assert parse_card("QS") in game.legal_moves
    assert game.legal_moves == game.hand(1)
    game.play("QS")


def test_exposure_of_the_pig_restricts_its_holder_even_when_exposed_by_the_holder_only():
    deal = deal_with({0: "2S 3S QS AS 2C 3C 4C 5C 6C 7C 8C 9C TC"})
    game = to_play(Game(deals=[deal]), exposures={0: "QS"})
    assert parse_card("QS") not in game.legal_moves
    game.play("AS")  # opens spades
    play_cards(game, 3)
    assert game.tricks[0].winner == 0
    assert parse_card("QS") in game.legal_moves  # spades were led once: no restriction
    game.play("QS")


# -- refusals change nothing ------------------------------------------------------------------


def test_play_by_the_wrong_seat_is_refused():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    refused(game, P(0, "2C"), NotYourTurnError, "it is seat 3's turn to play, not seat 0's")


def test_play_of_a_card_not_held_is_refused():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    refused(game, P(3, "2C"), IllegalMoveError, "seat 3 does not hold 2C")


@pytest.mark.parametrize("card", [52, -1, 100, "QS", None])
def test_play_of_a_non_card_is_refused(card):
    game = to_play(Game(deals=[ROUND_ROBIN]))
    refused(game, Play(3, card), IllegalMoveError, "is not a card")


def test_a_boolean_is_not_a_card():
    game = Game(Rules.with_variants("no_exposure"), deals=[ROUND_ROBIN])
    game.play("5C")  # seat 3 leads a club; seat 0 may follow with 2C (card 0) or 6C ...
    game.play("2C")
    assert parse_card("3C") in game.legal_moves  # seat 1 holds 3C (card 1)
    refused(game, Play(1, True), IllegalMoveError, "is not a card")


def test_play_during_the_exposure_phase_is_refused():
    game = Game(deals=[ROUND_ROBIN])
    refused(game, P(3, "2S"), NotYourTurnError, "the game is exposing")


def test_exposure_during_trick_play_is_refused():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    refused(game, Expose(0, CardSet.parse("TC")), NotYourTurnError, "the game is playing")


def test_pass_without_pass_3_is_refused():
    game = Game(deals=[ROUND_ROBIN])
    refused(game, Pass(0, CardSet.parse("2C 6C TC")), NotYourTurnError, "cannot pass now")


def test_moves_after_the_match_are_refused_with_match_over():
    game = Game(Rules(fixed_hands=1), deals=[ROUND_ROBIN])
    finish_match(game)
    assert game.is_over()
    assert game.pending == []
    assert game.legal_moves == CardSet()
    for seat in range(4):
        assert game.observation(seat).decision is None
    refused(game, P(0, "2C"), MatchOverError, "the match is over")
    refused(game, Expose(0, CardSet()), MatchOverError, "the match is over")
    refused(game, Pass(0, CardSet()), MatchOverError, "the match is over")


def test_refusal_errors_are_illegal_move_errors():
    assert issubclass(NotYourTurnError, IllegalMoveError)
    assert issubclass(MatchOverError, IllegalMoveError)


def test_push_refuses_what_is_not_a_move():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    before = full_state(game)
    with pytest.raises(TypeError):
        game.push((3, parse_card("5C")))
    assert full_state(game) == before


def test_play_by_name_plays_for_the_seat_on_turn():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    game.play("5c")
    game.play(parse_card("6C"))
    assert game.move_stack[-2:] == [P(3, "5C"), P(0, "6C")]
    with pytest.raises(InvalidCardError):
        game.play("5X")


def test_why_illegal_explains_and_accepts():
    game = to_play(Game(deals=[ROUND_ROBIN]))
    assert game.why_illegal(3, parse_card("5C")) is None
    assert "seat 3 does not hold" in game.why_illegal(3, parse_card("2C"))
    assert "turn" in game.why_illegal(1, parse_card("3C"))


# -- a whole hand -----------------------------------------------------------------------------


def test_a_whole_hand_plays_thirteen_tricks_and_scores_them():
    game = Game(Rules(fixed_hands=1), deals=[EXPOSURES])
    advance(game, exposures={1: "QS"})
    finish_hand(game)
    assert game.is_over()
    tricks = game.tricks
    assert len(tricks) == 13
    played = [card for trick in tricks for card in trick.cards]
    assert sorted(played) == list(range(52))
    result = game.results[0]
    assert result.exposed == CardSet.parse("QS")
    assert sum(result.scores) == sum(game.totals)
    assert list(result.totals) == game.totals

"""Each named variant of RULES.md does what its row says (match-end variants: test_match_end.py)."""

import itertools

import pytest

from referee import (
    SUITS,
    CardSet,
    DecisionKind,
    Expose,
    Game,
    IllegalMoveError,
    NotYourTurnError,
    Pass,
    Phase,
    Play,
    Rules,
    Suit,
    parse_card,
    score_seat,
)
from tests.referee.referee_support import (
    advance,
    deal_with,
    finish_hand,
    full_state,
    play_cards,
    preferring,
    to_play,
)

ROUND_ROBIN = [CardSet.of(c for c in range(52) if c % 4 == s) for s in range(4)]
HEARTS = SUITS[Suit.HEARTS]
SPADES = SUITS[Suit.SPADES]


def P(seat, card):
    return Play(seat, parse_card(card))


def refused(game, move, error, message):
    before = full_state(game)
    with pytest.raises(error) as info:
        game.push(move)
    assert message in str(info.value)
    assert full_state(game) == before


# -- no_exposure ----------------------------------------------------------------------------


def test_no_exposure_skips_the_exposure_phase():
    game = Game(Rules.with_variants("no_exposure", fixed_hands=1), deals=[ROUND_ROBIN])
    assert game.phase is Phase.PLAYING
    assert game.to_move == 3
    assert [d.kind for d in game.pending] == [DecisionKind.PLAY]
    assert game.legal_moves == game.hand(3)
    refused(game, Expose(0, CardSet.parse("TC")), NotYourTurnError, "the game is playing")
    finish_hand(game)
    assert game.results[0].exposed == CardSet()


def test_no_exposure_skips_it_in_every_hand():
    game = Game(Rules.with_variants("no_exposure", fixed_hands=3), seed=4)
    for _ in range(3):
        assert game.phase is Phase.PLAYING
        finish_hand(game)
    assert game.is_over()


# -- sequential_exposure ----------------------------------------------------------------------

# Seat 2 leads (2S) and holds TC; seats 3, 0, 1 hold QS, JD, AH.
ALL_EXPOSE = [
    CardSet.parse("2C 3C 4C 5C 6C 7C 8C 9C JC QC KC AC JD"),
    CardSet.parse("2D 3D 4D 5D 6D 7D 8D 9D TD QD KD AD AH"),
    CardSet.parse("TC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH 2S"),
    CardSet.parse("KH 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
]


def test_sequential_exposure_asks_one_seat_at_a_time_in_order_from_the_leader():
    game = Game(Rules.with_variants("sequential_exposure"), deals=[ALL_EXPOSE])
    order = []
    while game.phase is Phase.EXPOSING:
        (decision,) = game.pending
        order.append(decision.seat)
        for other in set(range(4)) - {decision.seat}:
            assert game.observation(other).decision is None
        game.push(Expose(decision.seat, CardSet()))
    assert order == [2, 3, 0, 1]
    assert game.to_move == 2


def test_sequential_exposure_refuses_a_seat_out_of_turn():
    game = Game(Rules.with_variants("sequential_exposure"), deals=[ALL_EXPOSE])
    refused(
        game,
        Expose(3, CardSet.parse("QS")),
        NotYourTurnError,
        "it is seat 2's turn to expose, not seat 3's",
    )


def test_sequential_exposure_shows_earlier_exposures_to_later_seats():
    game = Game(Rules.with_variants("sequential_exposure"), deals=[ALL_EXPOSE])
    game.push(Expose(2, CardSet.parse("TC")))
    seen = game.observation(3)
    assert seen.decision is not None
    assert seen.exposed == (CardSet(), CardSet(), CardSet.parse("TC"), CardSet())
    game.push(Expose(3, CardSet.parse("QS")))
    seen = game.observation(0)
    assert seen.exposed == (CardSet(), CardSet(), CardSet.parse("TC"), CardSet.parse("QS"))
    game.push(Expose(0, CardSet()))
    game.push(Expose(1, CardSet.parse("AH")))
    assert game.phase is Phase.PLAYING
    final = (CardSet(), CardSet.parse("AH"), CardSet.parse("TC"), CardSet.parse("QS"))
    for seat in range(4):
        assert game.observation(seat).exposed == final


def test_sequential_exposure_skips_seats_without_exposable_cards():
    game = Game(Rules.with_variants("sequential_exposure"), deals=[ROUND_ROBIN])
    order = []
    while game.phase is Phase.EXPOSING:
        (decision,) = game.pending
        order.append(decision.seat)
        game.push(Expose(decision.seat, CardSet()))
    assert order == [0, 1, 2]  # from leader 3, who holds none


def test_sequential_exposure_keeps_the_exposure_restriction():
    game = Game(Rules.with_variants("sequential_exposure"), deals=[ALL_EXPOSE])
    to_play(game, exposures={3: "QS"})
    game.play("2S")
    assert parse_card("QS") not in game.legal_moves
    assert game.legal_moves == game.hand(3).of_suit(Suit.SPADES) - CardSet.parse("QS")


# -- lead_2c ------------------------------------------------------------------------------------


def test_lead_2c_the_holder_of_2c_leads_and_must_lead_it():
    game = to_play(Game(Rules.with_variants("lead_2c"), deals=[ROUND_ROBIN]))
    assert game.first_leader == 0
    assert game.to_move == 0
    assert game.legal_moves == CardSet.parse("2C")
    refused(game, P(0, "6C"), IllegalMoveError, "seat 0 must lead 2C to the first trick")
    game.play("2C")
    play_cards(game, 3)
    winner = game.tricks[0].winner
    assert game.to_move == winner
    assert len(game.legal_moves) > 1  # later leads are free


def test_lead_2c_applies_to_every_hand():
    second = deal_with({2: "2C", 1: "2S"})
    game = Game(Rules.with_variants("lead_2c", fixed_hands=2), deals=[ROUND_ROBIN, second])
    finish_hand(game)
    to_play(game)
    assert game.hand_number == 2
    assert game.first_leader == 2
    assert game.legal_moves == CardSet.parse("2C")


def test_lead_2c_asks_for_exposures_from_the_2c_holder_on():
    game = Game(Rules.with_variants("lead_2c", "sequential_exposure"), deals=[ALL_EXPOSE])
    order = []
    while game.phase is Phase.EXPOSING:
        (decision,) = game.pending
        order.append(decision.seat)
        game.push(Expose(decision.seat, CardSet()))
    assert order == [0, 1, 2, 3]


# -- dealer_left_leads ------------------------------------------------------------------------


def test_dealer_rotates_and_the_seat_after_the_dealer_leads_any_card():
    game = Game(Rules.with_variants("dealer_left_leads", "no_exposure", fixed_hands=6), seed=21)
    dealers = []
    for hand in range(1, 7):
        assert game.hand_number == hand
        dealer = game.observation(0).dealer
        dealers.append(dealer)
        assert game.dealer == dealer
        assert game.first_leader == (dealer + 1) % 4
        assert game.to_move == (dealer + 1) % 4
        assert game.legal_moves == game.hand(game.to_move)
        finish_hand(game)
    assert [(b - a) % 4 for a, b in itertools.pairwise(dealers)] == [1] * 5
    assert game.is_over()


def test_without_dealer_left_leads_there_is_no_dealer():
    assert Game(seed=1).observation(0).dealer is None


# -- hearts_must_break --------------------------------------------------------------------------

BREAK = [
    CardSet.parse("2C 3C 4C 5C 6C 7C 8C 9C TC 2H 3H 2S AS"),
    CardSet.parse("2D 3D 4D 5D 6D 7D 8D 9D TD JD 4H 5H 6H"),
    CardSet.parse("JC QC KC AC QD KD AD 7H 8H 9H TH JH QH"),
    CardSet.parse("KH AH 3S 4S 5S 6S 7S 8S 9S TS JS QS KS"),
]


def test_hearts_must_break_forbids_leading_hearts_before_they_are_broken():
    game = to_play(Game(Rules.with_variants("hearts_must_break"), deals=[BREAK]))
    assert game.to_move == 0
    assert game.legal_moves == game.hand(0) - HEARTS
    refused(game, P(0, "2H"), IllegalMoveError, "seat 0 may not lead a heart before hearts are")


def test_hearts_are_broken_by_a_heart_discarded_on_another_suit():
    game = to_play(Game(Rules.with_variants("hearts_must_break"), deals=[BREAK]))
    play_cards(game, 4, preferring({0: "AS", 1: "4H", 2: "JC", 3: "3S"}))
    assert game.tricks[0].winner == 0
    assert game.observation(0).hearts_broken
    assert CardSet.parse("2H 3H").issubset(game.legal_moves)
    game.play("2H")


def test_hearts_stay_unbroken_without_a_heart_discard():
    game = to_play(Game(Rules.with_variants("hearts_must_break"), deals=[BREAK]))
    play_cards(game, 4, preferring({0: "AS", 1: "2D", 2: "JC", 3: "3S"}))
    assert game.tricks[0].winner == 0
    assert not game.observation(0).hearts_broken
    assert game.legal_moves == game.hand(0) - HEARTS


def test_hearts_must_break_lets_a_leader_holding_only_hearts_lead_them():
    deal = deal_with({0: " ".join(HEARTS.names())})
    rules = Rules.with_variants("hearts_must_break", "dealer_left_leads", "no_exposure")
    game = Game(rules, deals=[deal])
    assert game.to_move == 0
    assert game.legal_moves == HEARTS
    game.play("2H")
    play_cards(game, 3)
    assert not game.observation(0).hearts_broken  # a heart led is not a heart discarded


def test_standard_profile_lets_hearts_be_led_first():
    game = to_play(Game(deals=[BREAK]))
    assert game.legal_moves == game.hand(0)


# -- no_spade_lead_first_trick --------------------------------------------------------------------


def test_no_spade_lead_on_the_first_trick():
    game = to_play(Game(Rules.with_variants("no_spade_lead_first_trick"), deals=[ROUND_ROBIN]))
    assert game.to_move == 3  # the holder of 2S leads, but not a spade
    assert game.legal_moves == game.hand(3) - SPADES
    refused(game, P(3, "2S"), IllegalMoveError, "seat 3 may not lead a spade to the first trick")


def test_spades_may_be_led_after_the_first_trick():
    game = to_play(Game(Rules.with_variants("no_spade_lead_first_trick"), deals=[ROUND_ROBIN]))
    play_cards(game, 4)
    leader = game.to_move
    spades = game.hand(leader).of_suit(Suit.SPADES)
    assert spades
    assert spades.issubset(game.legal_moves)


def test_no_spade_lead_yields_to_a_leader_holding_only_spades():
    deal = deal_with({0: " ".join(SPADES.names())})
    rules = Rules.with_variants("no_spade_lead_first_trick", "dealer_left_leads", "no_exposure")
    game = Game(rules, deals=[deal])
    assert game.to_move == 0
    assert game.legal_moves == SPADES


# -- two lead restrictions together ----------------------------------------------------------------

SPADES_AND_HEARTS = deal_with({0: "2S 3S 4S 5S QS 2H 3H 4H 5H 6H 7H 8H AH"})


@pytest.mark.parametrize(
    ("variants", "legal"),
    [
        (("hearts_must_break",), "2S 3S 4S 5S QS"),
        (("no_spade_lead_first_trick",), "2H 3H 4H 5H 6H 7H 8H AH"),
        (("hearts_must_break", "no_spade_lead_first_trick"), str(SPADES_AND_HEARTS[0])),
    ],
)  # fmt: skip
def test_lead_restrictions_that_together_leave_nothing_are_lifted(variants, legal):
    game = to_play(Game(Rules.with_variants(*variants), deals=[SPADES_AND_HEARTS]))
    assert game.to_move == 0
    assert game.legal_moves == CardSet.parse(legal)


EXPOSED_QS = "exposed QS cannot be played to the first spade trick"
EXPOSED_AH = "exposed AH cannot be played to the first heart trick"


@pytest.mark.parametrize(
    ("variants", "legal", "why_not_qs", "why_not_ah"),
    [
        (("hearts_must_break",), "2S 3S 4S 5S", EXPOSED_QS, "may not lead a heart"),
        (("no_spade_lead_first_trick",), "2H 3H 4H 5H 6H 7H 8H", "may not lead a spade",
         EXPOSED_AH),
        (("hearts_must_break", "no_spade_lead_first_trick"), "2S 3S 4S 5S 2H 3H 4H 5H 6H 7H 8H",
         EXPOSED_QS, EXPOSED_AH),
    ],
)  # fmt: skip
def test_the_exposure_restriction_still_applies_when_lead_restrictions_are_lifted(
    variants, legal, why_not_qs, why_not_ah
):
    game = Game(Rules.with_variants(*variants), deals=[SPADES_AND_HEARTS])
    to_play(game, exposures={0: "QS AH"})
    assert game.legal_moves == CardSet.parse(legal)
    refused(game, P(0, "QS"), IllegalMoveError, why_not_qs)
    refused(game, P(0, "AH"), IllegalMoveError, why_not_ah)


# -- pass_3 ------------------------------------------------------------------------------------

OFFSETS = {"next": 1, "previous": 3, "across": 2}


def passing_game(direction, **params):
    rules = Rules.with_variants("pass_3", pass_direction=direction, **params)
    return Game(rules, deals=[ROUND_ROBIN, ROUND_ROBIN])


@pytest.mark.parametrize("direction", ["next", "previous", "across", "cycle"])
def test_pass_3_starts_every_seat_with_a_pass_decision(direction):
    game = passing_game(direction)
    assert game.phase is Phase.PASSING
    pending = game.pending
    assert [d.seat for d in pending] == [0, 1, 2, 3]
    for decision in pending:
        assert decision.kind is DecisionKind.PASS
        assert decision.count == 3
        assert decision.choices == game.hand(decision.seat)
    assert game.observation(0).first_leader is None


@pytest.mark.parametrize(("direction", "offset"), [*OFFSETS.items(), ("cycle", 1)])
def test_pass_3_moves_the_cards_to_the_right_seat(direction, offset):
    game = passing_game(direction)
    chosen = {s: CardSet.of(list(ROUND_ROBIN[s])[-3:]) for s in range(4)}
    for seat in range(4):
        game.push(Pass(seat, chosen[seat]))
    assert game.phase is not Phase.PASSING
    for seat in range(4):
        giver = (seat - offset) % 4
        assert game.hand(seat) == ROUND_ROBIN[seat] - chosen[seat] | chosen[giver]
        seen = game.observation(seat)
        assert seen.passed == chosen[seat]
        assert seen.pass_to == (seat + offset) % 4
        assert seen.received == chosen[giver]
    assert game.deals[0] == tuple(h.mask for h in ROUND_ROBIN)  # the deal as dealt


def test_passes_stay_private_until_everyone_has_passed():
    game = passing_game("next")
    game.push(Pass(0, CardSet.parse("2C 6C TC")))
    mine, theirs = game.observation(0), game.observation(1)
    assert mine.passed == CardSet.parse("2C 6C TC")
    assert mine.received is None
    assert mine.decision is None
    assert theirs.passed is None
    assert theirs.received is None
    assert theirs.decision.kind is DecisionKind.PASS
    assert parse_card("TC") in game.hand(0)  # cards move only when everyone has passed
    assert "TC" not in str(theirs.to_json())


def test_pass_3_refuses_wrong_passes():
    game = passing_game("next")
    refused(game, Pass(0, CardSet.parse("2C 6C")), IllegalMoveError, "exactly 3 cards, not 2")
    refused(game, Pass(0, CardSet.parse("2C 6C TC AC")), IllegalMoveError, "exactly 3 cards, not 4")
    refused(game, Pass(0, CardSet.parse("2C 6C 3C")), IllegalMoveError, "seat 0 does not hold 3C")
    refused(game, Play(0, parse_card("2C")), NotYourTurnError, "the game is passing")
    refused(game, Expose(0, CardSet.parse("TC")), NotYourTurnError, "the game is passing")
    game.push(Pass(0, CardSet.parse("2C 6C TC")))
    refused(game, Pass(0, CardSet.parse("AC 5D 9D")), NotYourTurnError, "no pass decision pending")


def test_exposure_and_the_first_leader_follow_the_passed_cards():
    game = passing_game("next")
    passes = {0: "2C 6C TC", 1: "QS 3C 7C", 2: "JD AH 4C", 3: "2S 5C 9C"}
    for seat, cards in passes.items():
        game.push(Pass(seat, CardSet.parse(cards)))
    assert game.first_leader == 0  # seat 0 received 2S from seat 3
    assert game.phase is Phase.EXPOSING
    choices = {d.seat: str(d.choices) for d in game.pending}
    assert choices == {1: "TC", 2: "QS", 3: "JD AH"}


def test_cycle_passes_next_previous_across_then_not_at_all():
    rules = Rules.with_variants("pass_3", "no_exposure", pass_direction="cycle", fixed_hands=5)
    game = Game(rules, seed=31)
    offsets = []
    for _ in range(5):
        if game.phase is Phase.PASSING:
            advance(game)
            offsets.append(game.observation(0).pass_to)
        else:
            seen = game.observation(0)
            assert (seen.passed, seen.pass_to, seen.received) == (None, None, None)
            offsets.append(None)
        finish_hand(game)
    assert offsets == [1, 3, 2, None, 1]


# -- teams ------------------------------------------------------------------------------------


def test_teams_add_partners_scores_in_the_standing():
    game = Game(Rules.with_variants("teams", fixed_hands=2), seed=41)
    finish_hand(game)
    scores = game.results[0].scores
    team_a, team_b = scores[0] + scores[2], scores[1] + scores[3]
    assert game.results[0].totals == (team_a, team_b, team_a, team_b)
    assert game.standing() == (team_a, team_b, team_a, team_b)
    for seat in range(4):
        seen = game.observation(seat)
        assert seen.totals == tuple(scores)
        assert seen.standing == (team_a, team_b, team_a, team_b)
    finish_hand(game)
    a = sum(r.scores[0] + r.scores[2] for r in game.results)
    b = sum(r.scores[1] + r.scores[3] for r in game.results)
    assert game.outcome.totals == (a, b, a, b)
    expected = (1 if a >= b else 2, 1 if b >= a else 2)
    assert game.outcome.places == expected * 2


def test_without_teams_the_standing_is_the_totals():
    game = Game(Rules(fixed_hands=1), seed=41)
    finish_hand(game)
    assert game.standing() == tuple(game.totals) == game.results[0].totals


# -- qd_bonus ---------------------------------------------------------------------------------


def qd_later_tricks(tricks):
    qd = parse_card("QD")
    captured = next(i for i, t in enumerate(tricks) if qd in t.cards)
    taker = tricks[captured].winner
    return taker, sum(1 for t in tricks[captured + 1 :] if t.winner == taker)


def test_qd_bonus_adds_ten_per_later_trick_after_the_transformer():
    # Seed 87, lowest cards: seat 2 captures QD in the 4th trick, wins 3 more, takes TC JD 4H 5H.
    game = Game(Rules.with_variants("qd_bonus", "no_exposure", fixed_hands=1), seed=87)
    finish_hand(game)
    taker, later = qd_later_tricks(game.tricks)
    assert (taker, later) == (2, 3)
    seat = game.results[0].seats[2]
    assert seat.taken == CardSet.parse("TC JD 4H 5H")
    assert seat.qd_bonus == 30
    assert seat.score == (100 - 10) * 2 + 30
    for other in (0, 1, 3):
        assert game.results[0].seats[other].qd_bonus == 0


def test_without_qd_bonus_the_same_play_scores_no_bonus():
    game = Game(Rules.with_variants("no_exposure", fixed_hands=1), seed=87)
    finish_hand(game)
    assert game.results[0].seats[2].score == 180
    assert all(s.qd_bonus == 0 for s in game.results[0].seats)


def test_qd_bonus_counts_every_later_trick_in_a_fresh_scenario():
    for seed in range(20):
        game = Game(Rules.with_variants("qd_bonus", "no_exposure", fixed_hands=1), seed=seed)
        finish_hand(game)
        taker, later = qd_later_tricks(game.tricks)
        seats = game.results[0].seats
        assert [s.qd_bonus for s in seats] == [10 * later if s == taker else 0 for s in range(4)]


# -- hand_cap_800 -------------------------------------------------------------------------------

# Seat 0 holds every spade and wins all 13 tricks: all 16 scoring cards.
SUIT_EACH = [SUITS[Suit.SPADES], SUITS[Suit.HEARTS], SUITS[Suit.DIAMONDS], SUITS[Suit.CLUBS]]


def sweep_game(variants, exposures):
    game = Game(Rules.with_variants(*variants, fixed_hands=1), deals=[SUIT_EACH])
    to_play(game, exposures=exposures)
    finish_hand(game)
    assert all(trick.winner == 0 for trick in game.tricks)
    return game


def sweep(variants, exposures):
    return sweep_game(variants, exposures).results[0].seats[0]


ALL_FOUR = {0: "QS", 1: "AH", 2: "JD", 3: "TC"}


def test_taking_all_sixteen_with_all_exposed_scores_3200():
    assert sweep((), ALL_FOUR).score == 3200


def test_hand_cap_800_cuts_3200_to_800():
    seat = sweep(("hand_cap_800",), ALL_FOUR)
    assert seat.score == 800
    assert seat.capped


def test_hand_cap_800_keeps_exactly_800():
    seat = sweep(("hand_cap_800",), {})
    assert seat.score == 800
    assert not seat.capped


def test_hand_cap_800_applies_after_the_qd_bonus():
    game = sweep_game(("qd_bonus",), {})
    taker, later = qd_later_tricks(game.tricks)
    assert taker == 0
    assert later > 0
    assert game.results[0].seats[0].score == 800 + 10 * later
    capped = sweep(("qd_bonus", "hand_cap_800"), {})
    assert capped.score == 800
    assert capped.capped


def test_sweep_scores_match_score_seat():
    seat = sweep((), {0: "QS"})
    assert seat == score_seat(CardSet.parse(" ".join(CardSet((1 << 52) - 1).names())),
                              CardSet.parse("QS"))  # fmt: skip

"""When a match ends and how it is ranked (RULES.md section 8 and the match-end variants).

Most tests reach chosen totals with :func:`finish_hand_with_totals`, which sets ``game.totals``
(an internal attribute: the referee has no public way to start from given totals) before the
last card of a hand and lets the referee's own ``push`` decide the end. The first tests reach
their totals by real play only.
"""

import pytest

from referee import CardSet, Game, Phase, Rules, Termination, places_of
from tests.referee.referee_support import finish_hand, finish_hand_with_totals, preferring, to_play

# Seat 0 holds 12 spades and 2H, seat 1 twelve hearts and AC, seat 2 the diamonds, seat 3 3S and
# twelve clubs. Seat 0 wins twelve spade tricks, then loses 2H to seat 1's 3H.
SWEEP = [
    CardSet.parse("2S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2H"),
    CardSet.parse("3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH AC"),
    CardSet.parse("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
    CardSet.parse("3S 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC"),
]
SWEEP_SCRIPT = {
    0: "4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S 2H",
    1: "AH KH QH JH TH 9H 8H 7H 6H 5H 4H AC 3H",
    3: "3S KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
}


def play_sweep(goat_goes_to_seat_1):
    """One real hand of SWEEP with QS and TC exposed, played by script."""
    kept = "JD" if goat_goes_to_seat_1 else "2D"
    diamonds = [c for c in reversed(SWEEP[2].names()) if c != kept]
    script = {**SWEEP_SCRIPT, 2: " ".join([*diamonds, kept])}
    game = Game(Rules(max_hands=2), deals=[SWEEP, SWEEP])
    to_play(game, exposures={0: "QS", 3: "TC"})
    finish_hand(game, preferring(script))
    return game


def test_a_real_hand_reaching_the_threshold_with_a_unique_top_ends_the_match():
    game = play_sweep(goat_goes_to_seat_1=True)
    # seat 0: (hearts -200, exposed pig -200) x 4 for the exposed TC; seat 1: the goat.
    assert game.results[0].scores == (-1600, 100, 0, 0)
    assert game.is_over()
    outcome = game.outcome
    assert outcome.termination is Termination.THRESHOLD
    assert outcome.totals == (-1600, 100, 0, 0)
    assert outcome.places == (4, 1, 2, 2)
    assert outcome.winners == (1,)
    assert outcome.out == (0,)
    assert outcome.hands_played == 1


def test_a_real_hand_reaching_the_threshold_with_a_tied_top_plays_on():
    game = play_sweep(goat_goes_to_seat_1=False)
    assert game.results[0].scores == (-1200, 0, 0, 0)
    assert not game.is_over()
    assert game.outcome is None
    assert game.hand_number == 2
    assert game.phase is Phase.EXPOSING
    assert game.totals == [-1200, 0, 0, 0]


# -- the rule book's examples -----------------------------------------------------------------


def test_rulebook_example_top_tied_plays_on():
    game = Game(seed=1)
    finish_hand_with_totals(game, (-1010, 120, 120, -300))
    assert not game.is_over()
    assert game.hand_number == 2
    assert game.results[-1].totals == (-1010, 120, 120, -300)


def test_rulebook_example_unique_top_ends_and_the_player_on_150_wins():
    game = Game(seed=1)
    finish_hand_with_totals(game, (-1010, 150, 120, -300))
    assert game.is_over()
    assert game.phase is Phase.OVER
    outcome = game.outcome
    assert outcome.termination is Termination.THRESHOLD
    assert outcome.winners == (1,)
    assert outcome.places == (4, 1, 2, 3)
    assert outcome.out == (0,)
    assert outcome.to_json() == {
        "termination": "threshold",
        "totals": [-1010, 150, 120, -300],
        "places": [4, 1, 2, 3],
        "winners": [1],
        "out": [0],
        "hands_played": 1,
    }


def test_play_on_after_a_tie_then_end_when_the_top_is_unique():
    game = Game(seed=2)
    finish_hand_with_totals(game, (-1010, 120, 120, -300))
    assert not game.is_over()
    finish_hand_with_totals(game, (-1100, 130, 120, -300))
    assert game.is_over()
    assert game.outcome.hands_played == 2
    assert game.outcome.winners == (1,)


@pytest.mark.parametrize(
    ("totals", "ends"),
    [
        ((-1000, 10, 0, 0), True),
        ((-999, 10, 0, 0), False),
        ((-2000, 10, 0, -1500), True),
        ((0, 0, 0, 0), False),
        ((900, 800, -500, -900), False),
    ],
)
def test_the_match_ends_at_minus_1000_or_lower(totals, ends):
    game = Game(seed=3)
    finish_hand_with_totals(game, totals)
    assert game.is_over() is ends


def test_several_players_out_at_once():
    game = Game(seed=4)
    finish_hand_with_totals(game, (-1010, 50, -1200, 40))
    assert game.outcome.out == (0, 2)
    assert game.outcome.places == (3, 1, 4, 2)


# -- places ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "places"),
    [
        ((-1010, 150, 120, -300), (4, 1, 2, 3)),
        ((-1010, 120, 120, -300), (4, 1, 1, 3)),
        ((-1010, 150, 120, 150), (4, 1, 3, 1)),
        ((0, 0, 0, 0), (1, 1, 1, 1)),
        ((5, 5, 5, -5), (1, 1, 1, 4)),
        ((-5, -5, 7, -5), (2, 2, 1, 2)),
        ((1, 2, 3, 4), (4, 3, 2, 1)),
    ],
)
def test_places_of_ranks_highest_first_and_ties_share(totals, places):
    assert places_of(totals) == places


# -- losing threshold, target_500 -------------------------------------------------------------


def test_losing_threshold_is_a_parameter():
    game = Game(Rules(losing_threshold=-300), seed=5)
    finish_hand_with_totals(game, (-310, 100, 0, 0))
    assert game.outcome.termination is Termination.THRESHOLD
    assert game.outcome.out == (0,)


def test_target_500_ends_at_minus_500():
    game = Game(Rules.with_variants("target_500"), seed=5)
    finish_hand_with_totals(game, (-510, 100, 0, 0))
    assert game.is_over()
    assert game.outcome.termination is Termination.THRESHOLD


def test_minus_510_does_not_end_the_standard_match():
    game = Game(seed=5)
    finish_hand_with_totals(game, (-510, 100, 0, 0))
    assert not game.is_over()


def test_target_500_still_plays_on_while_the_top_is_tied():
    game = Game(Rules.with_variants("target_500"), seed=5)
    finish_hand_with_totals(game, (-510, 100, 100, 0))
    assert not game.is_over()


# -- end_at_plus_1000 ---------------------------------------------------------------------------


def test_end_at_plus_1000_ends_when_a_total_exceeds_1000():
    game = Game(Rules.with_variants("end_at_plus_1000"), seed=6)
    finish_hand_with_totals(game, (1010, -300, 0, 0))
    assert game.outcome.termination is Termination.PLUS_1000
    assert game.outcome.winners == (0,)
    assert game.outcome.out == ()


def test_end_at_plus_1000_needs_more_than_1000():
    game = Game(Rules.with_variants("end_at_plus_1000"), seed=6)
    finish_hand_with_totals(game, (1000, -300, 0, 0))
    assert not game.is_over()


def test_plus_1000_does_not_end_the_standard_match():
    game = Game(seed=6)
    finish_hand_with_totals(game, (1010, -300, 0, 0))
    assert not game.is_over()


def test_end_at_plus_1000_still_ends_at_the_losing_threshold():
    game = Game(Rules.with_variants("end_at_plus_1000"), seed=6)
    finish_hand_with_totals(game, (-1010, 300, 0, 0))
    assert game.outcome.termination is Termination.THRESHOLD


# -- tie rules --------------------------------------------------------------------------------


def test_tie_share_ends_at_once_and_the_tied_share_first_place():
    game = Game(Rules.with_variants("tie_share"), seed=7)
    finish_hand_with_totals(game, (-1010, 120, 120, -300))
    assert game.is_over()
    assert game.outcome.termination is Termination.THRESHOLD
    assert game.outcome.places == (4, 1, 1, 3)
    assert game.outcome.winners == (1, 2)


def test_tie_share_does_not_end_a_match_below_the_threshold():
    game = Game(Rules.with_variants("tie_share"), seed=7)
    finish_hand_with_totals(game, (-900, 120, 120, -300))
    assert not game.is_over()


def test_tie_continue_bottom_plays_on_while_the_lowest_is_tied():
    game = Game(Rules.with_variants("tie_continue_bottom"), seed=8)
    finish_hand_with_totals(game, (-1010, -1010, 200, 100))
    assert not game.is_over()


def test_tie_continue_bottom_ends_with_a_unique_lowest_even_if_the_top_is_tied():
    game = Game(Rules.with_variants("tie_continue_bottom"), seed=8)
    finish_hand_with_totals(game, (-1020, -1010, 150, 150))
    assert game.is_over()
    assert game.outcome.termination is Termination.THRESHOLD
    assert game.outcome.places == (4, 3, 1, 1)
    assert game.outcome.winners == (2, 3)


# -- max_hands, fixed_hands ---------------------------------------------------------------------


def test_hand_cap_ends_the_match_and_ties_share_a_place():
    game = Game(Rules(max_hands=2), seed=9)
    finish_hand_with_totals(game, (10, 0, 0, -10))
    assert not game.is_over()
    finish_hand_with_totals(game, (-50, 20, 20, 10))
    assert game.outcome.termination is Termination.HAND_CAP
    assert game.outcome.places == (4, 1, 1, 3)
    assert game.outcome.hands_played == 2
    assert game.outcome.out == ()


def test_hand_cap_ends_a_match_whose_top_is_tied_past_the_threshold():
    game = Game(Rules(max_hands=1), seed=9)
    finish_hand_with_totals(game, (-1010, 120, 120, -300))
    assert game.outcome.termination is Termination.HAND_CAP
    assert game.outcome.places == (4, 1, 1, 3)
    assert game.outcome.out == (0,)


def test_a_regular_end_at_the_cap_is_reported_as_threshold():
    game = Game(Rules(max_hands=1), seed=9)
    finish_hand_with_totals(game, (-1010, 150, 120, -300))
    assert game.outcome.termination is Termination.THRESHOLD


def test_fixed_hands_ignores_the_threshold():
    game = Game(Rules(fixed_hands=2), seed=10)
    finish_hand_with_totals(game, (-1010, 150, 120, -300))
    assert not game.is_over()
    finish_hand_with_totals(game, (-1500, 120, 120, -300))
    assert game.outcome.termination is Termination.FIXED_HANDS
    assert game.outcome.places == (4, 1, 1, 3)
    assert game.outcome.hands_played == 2
    assert game.outcome.out == (0,)


def test_fixed_hands_ignores_plus_1000():
    game = Game(Rules.with_variants("end_at_plus_1000", fixed_hands=2), seed=10)
    finish_hand_with_totals(game, (1500, 0, 0, 0))
    assert not game.is_over()


def test_fixed_hands_of_one():
    game = Game(Rules(fixed_hands=1), seed=11)
    finish_hand(game)
    assert game.outcome.termination is Termination.FIXED_HANDS
    assert game.outcome.places == places_of(game.totals)


# -- teams ------------------------------------------------------------------------------------


def test_teams_end_on_a_team_total_and_partners_share_a_place():
    game = Game(Rules.with_variants("teams"), seed=12)
    finish_hand_with_totals(game, (-600, 100, -500, 50))
    assert game.is_over()
    outcome = game.outcome
    assert outcome.termination is Termination.THRESHOLD
    assert outcome.totals == (-1100, 150, -1100, 150)
    assert outcome.places == (2, 1, 2, 1)
    assert outcome.winners == (1, 3)
    assert outcome.out == (0, 2)
    assert game.results[-1].totals == (-1100, 150, -1100, 150)


def test_teams_ignore_a_single_seat_past_the_threshold():
    game = Game(Rules.with_variants("teams"), seed=12)
    finish_hand_with_totals(game, (-1010, 0, 500, 0))
    assert not game.is_over()
    assert game.standing() == (-510, 0, -510, 0)


def test_teams_play_on_while_the_two_teams_are_tied():
    game = Game(Rules.with_variants("teams"), seed=12)
    finish_hand_with_totals(game, (-600, -400, -400, -600))
    assert not game.is_over()


def test_teams_tied_at_the_cap_share_first_place():
    game = Game(Rules.with_variants("teams", max_hands=1), seed=12)
    finish_hand_with_totals(game, (-600, -400, -400, -600))
    assert game.outcome.termination is Termination.HAND_CAP
    assert game.outcome.places == (1, 1, 1, 1)


def test_teams_with_end_at_plus_1000_use_team_totals():
    game = Game(Rules.with_variants("teams", "end_at_plus_1000"), seed=12)
    finish_hand_with_totals(game, (600, 0, 500, 0))
    assert game.outcome.termination is Termination.PLUS_1000
    assert game.outcome.places == (1, 2, 1, 2)

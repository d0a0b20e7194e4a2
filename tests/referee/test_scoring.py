"""Scoring one seat's hand (RULES.md section 7, worked examples, qd_bonus and hand_cap_800)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee import EXPOSABLE_CARDS, SCORING_CARDS, SUITS, CardSet, SeatScore, Suit, score_seat

HEARTS = SUITS[Suit.HEARTS]
ALL_HEARTS = str(HEARTS)
ALL_16 = str(SCORING_CARDS)

# The worked-examples table of RULES.md, row by row: (cards taken, exposed, hand score).
WORKED_EXAMPLES = [
    ("QS AH 5H", "", -160),
    ("TC", "", 50),
    ("TC 2H", "", 0),
    ("TC JD", "", 200),
    ("TC JD QS", "", 0),
    ("TC QS 7H", "", -220),
    ("TC QS 7H", "TC QS", -840),
    (ALL_HEARTS, "", 200),
    (ALL_HEARTS + " QS", "", 300),
    (ALL_16, "", 800),
    ("AH KH", "AH", -180),
    ("TC QS", "TC", -400),
    (ALL_16, "AH QS JD TC", 3200),
]


def identity_holds(s: SeatScore) -> bool:
    return s.score == (s.hearts + s.pig + s.goat) * s.multiplier + s.transformer_bonus + s.qd_bonus


@pytest.mark.parametrize(("taken", "exposed", "expected"), WORKED_EXAMPLES)
def test_worked_example(taken, exposed, expected):
    result = score_seat(CardSet.parse(taken), CardSet.parse(exposed))
    assert result.score == expected
    assert identity_holds(result)
    assert not result.capped
    assert result.qd_bonus == 0


@pytest.mark.parametrize(("taken", "exposed", "expected"), WORKED_EXAMPLES)
def test_worked_example_with_masks(taken, exposed, expected):
    assert score_seat(CardSet.parse(taken).mask, CardSet.parse(exposed).mask).score == expected


# Breakdown of some rows: taken, exposed, then the FIELDS of the SeatScore.
FIELDS = ("hearts", "pig", "goat", "transformer_bonus", "multiplier", "all_hearts")
BREAKDOWNS = [
    ("QS AH 5H", "", (-60, -100, 0, 0, 1, False)),
    ("TC", "", (0, 0, 0, 50, 1, False)),
    ("TC", "TC", (0, 0, 0, 100, 1, False)),
    ("TC 2H", "", (0, 0, 0, 0, 2, False)),
    ("TC JD", "", (0, 0, 100, 0, 2, False)),
    ("TC JD", "JD", (0, 0, 200, 0, 2, False)),
    ("TC QS 7H", "TC QS", (-10, -200, 0, 0, 4, False)),
    (ALL_HEARTS, "", (200, 0, 0, 0, 1, True)),
    (ALL_HEARTS, "AH", (400, 0, 0, 0, 1, True)),
    (ALL_HEARTS + " QS", "", (200, 100, 0, 0, 1, True)),
    (ALL_HEARTS + " QS", "QS", (200, 200, 0, 0, 1, True)),
    (ALL_16, "", (200, 100, 100, 0, 2, True)),
    (ALL_16, "AH QS JD TC", (400, 200, 200, 0, 4, True)),
    ("AH KH", "AH", (-180, 0, 0, 0, 1, False)),
    ("KH", "AH", (-80, 0, 0, 0, 1, False)),
    ("TC QS", "TC", (0, -100, 0, 0, 4, False)),
    ("QS", "QS", (0, -200, 0, 0, 1, False)),
]


@pytest.mark.parametrize(("taken", "exposed", "expected"), BREAKDOWNS)
def test_breakdown_fields(taken, exposed, expected):
    result = score_seat(CardSet.parse(taken), CardSet.parse(exposed))
    assert tuple(getattr(result, field) for field in FIELDS) == expected
    assert identity_holds(result)


HEART_VALUES = {
    "AH": -50, "KH": -40, "QH": -30, "JH": -20,
    "TH": -10, "9H": -10, "8H": -10, "7H": -10, "6H": -10, "5H": -10,
    "4H": 0, "3H": 0, "2H": 0,
}  # fmt: skip


@pytest.mark.parametrize(("card", "value"), HEART_VALUES.items())
def test_heart_value(card, value):
    result = score_seat(CardSet.parse(card))
    assert result.hearts == value
    assert result.score == value
    assert result.taken == CardSet.parse(card)


@pytest.mark.parametrize(("card", "value"), HEART_VALUES.items())
def test_heart_value_doubled_when_ah_exposed_whoever_takes_it(card, value):
    assert score_seat(CardSet.parse(card), CardSet.parse("AH")).score == 2 * value


def test_the_thirteen_hearts_add_up_to_minus_200():
    assert sum(HEART_VALUES.values()) == -200
    assert score_seat(HEARTS - CardSet.parse("2H")).score == -200


@pytest.mark.parametrize("zero_heart", ["2H", "3H", "4H"])
def test_zero_heart_is_a_scoring_card_for_the_transformer(zero_heart):
    result = score_seat(CardSet.parse("TC " + zero_heart))
    assert result.transformer_bonus == 0
    assert result.multiplier == 2
    assert result.score == 0


def test_non_scoring_cards_are_ignored():
    result = score_seat(CardSet.parse("2C 3D AS KS QS QD"))
    assert result.taken == CardSet.parse("QS")
    assert result.score == -100
    assert score_seat(CardSet.parse("2C 3D AS")).score == 0


def test_nothing_taken_scores_zero():
    result = score_seat(CardSet())
    assert result.score == 0
    assert result.multiplier == 1
    assert not result.all_hearts


def test_exposure_of_cards_the_seat_did_not_take_changes_nothing():
    assert score_seat(CardSet.parse("5H JD"), CardSet.parse("QS TC")).score == 90


def test_all_scoring_property():
    assert score_seat(SCORING_CARDS).all_scoring
    assert not score_seat(SCORING_CARDS - CardSet.parse("2H")).all_scoring


def test_twelve_hearts_are_not_all_hearts():
    result = score_seat(HEARTS - CardSet.parse("2H") | CardSet.parse("QS"))
    assert not result.all_hearts
    assert result.score == -300


# -- qd_bonus ------------------------------------------------------------------------------------


def test_qd_bonus_is_ten_per_later_trick():
    result = score_seat(CardSet.parse("5H"), qd_later_tricks=3)
    assert result.qd_bonus == 30
    assert result.score == -10 + 30


def test_qd_bonus_is_added_after_the_transformer_multiplier():
    result = score_seat(CardSet.parse("TC JD"), qd_later_tricks=2)
    assert result.multiplier == 2
    assert result.score == 200 + 20  # not (100 + 20) * 2
    exposed = score_seat(CardSet.parse("TC JD"), CardSet.parse("TC"), qd_later_tricks=2)
    assert exposed.score == 400 + 20


def test_qd_bonus_adds_to_the_lone_transformer_bonus():
    result = score_seat(CardSet.parse("TC"), qd_later_tricks=1)
    assert (result.transformer_bonus, result.qd_bonus, result.score) == (50, 10, 60)


# -- hand_cap (hand_cap_800) -----------------------------------------------------------------------


def test_hand_cap_cuts_a_score_above_800():
    result = score_seat(SCORING_CARDS, EXPOSABLE_CARDS, hand_cap=800)
    assert result.capped
    assert result.score == 800
    # the breakdown still explains the uncapped score
    assert (result.hearts + result.pig + result.goat) * result.multiplier == 3200


def test_hand_cap_keeps_a_score_of_exactly_800():
    result = score_seat(SCORING_CARDS, hand_cap=800)
    assert not result.capped
    assert result.score == 800


def test_hand_cap_applies_after_the_qd_bonus():
    result = score_seat(SCORING_CARDS, qd_later_tricks=2, hand_cap=800)
    assert result.capped
    assert result.score == 800


def test_hand_cap_leaves_negative_scores_alone():
    result = score_seat(CardSet.parse("TC QS 7H"), CardSet.parse("TC QS"), hand_cap=800)
    assert not result.capped
    assert result.score == -840


def test_without_a_cap_nothing_is_capped():
    result = score_seat(SCORING_CARDS, EXPOSABLE_CARDS)
    assert not result.capped
    assert result.score == 3200


# -- an independent reading of section 7, checked on random hands ------------------------------


def reference_score(taken: set[str], exposed: set[str], qd_later: int, cap: int | None) -> int:
    """Section 7 of RULES.md, written from the text, card names only."""
    hearts_taken = {c for c in taken if c.endswith("H")}
    all_hearts = len(hearts_taken) == 13
    hearts = sum(HEART_VALUES[c] for c in hearts_taken)
    if all_hearts:
        hearts = 200
    if "AH" in exposed:
        hearts *= 2
    pig = 0
    if "QS" in taken:
        pig = (100 if all_hearts else -100) * (2 if "QS" in exposed else 1)
    goat = (200 if "JD" in exposed else 100) if "JD" in taken else 0
    others = hearts_taken | (taken & {"QS", "JD"})
    score = hearts + pig + goat
    if "TC" in taken:
        if others:
            score *= 4 if "TC" in exposed else 2
        else:
            score += 100 if "TC" in exposed else 50
    score += 10 * qd_later
    if cap is not None and score > cap:
        score = cap
    return score


scoring_names = sorted(SCORING_CARDS.names())


@given(
    taken=st.sets(st.sampled_from(scoring_names)),
    exposed=st.sets(st.sampled_from(["AH", "QS", "JD", "TC"])),
    qd_later=st.integers(min_value=0, max_value=12),
    cap=st.sampled_from([None, 800]),
    all_hearts=st.booleans(),
)
def test_score_seat_matches_an_independent_reading_of_the_rules(
    taken, exposed, qd_later, cap, all_hearts
):
    if all_hearts:  # make the rare all-hearts cases common
        taken = taken | set(HEARTS.names())
    result = score_seat(
        CardSet.parse(sorted(taken)),
        CardSet.parse(sorted(exposed)),
        qd_later_tricks=qd_later,
        hand_cap=cap,
    )
    assert result.score == reference_score(taken, exposed, qd_later, cap)
    assert result.taken == CardSet.parse(sorted(taken))
    assert result.all_hearts == (len([c for c in taken if c.endswith("H")]) == 13)
    if not result.capped:
        assert identity_holds(result)
    else:
        assert result.score == cap
        assert (result.hearts + result.pig + result.goat) * result.multiplier + (
            result.transformer_bonus + result.qd_bonus
        ) > cap


@given(st.sets(st.sampled_from(scoring_names)), st.sets(st.sampled_from(scoring_names)))
def test_seat_score_json_round_trip(taken, exposed):
    result = score_seat(CardSet.parse(sorted(taken)), CardSet.parse(sorted(exposed)))
    assert SeatScore.from_json(result.to_json()) == result

"""The rules profile: its JSON form, its checks, and the flags it derives."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee import STANDARD, PassDirection, Rules, RulesError, Variant

EXCLUSIVE_PAIRS = [
    ("no_exposure", "sequential_exposure"),
    ("lead_2c", "dealer_left_leads"),
    ("tie_continue_bottom", "tie_share"),
]


def test_default_profile_is_the_standard_one():
    assert Rules() == STANDARD
    assert Rules.from_json(None) == STANDARD
    assert Rules.from_json({}) == STANDARD
    assert STANDARD.to_json() == {
        "variants": [],
        "losing_threshold": -1000,
        "max_hands": 100,
        "fixed_hands": None,
        "pass_direction": "next",
    }


def test_standard_profile_flags():
    r = STANDARD
    assert r.exposure
    assert not r.sequential_exposure
    assert not r.passing
    assert not r.lead_2c
    assert not r.dealer_left_leads
    assert not r.hearts_must_break
    assert not r.no_spade_lead_first_trick
    assert not r.teams
    assert not r.qd_bonus
    assert r.hand_cap is None


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_each_variant_round_trips_through_json(variant):
    rules = Rules.from_json({"variants": [variant.value]})
    data = rules.to_json()
    assert data["variants"] == [variant.value]
    assert Rules.from_json(data) == rules
    assert Rules.from_json(data).to_json() == data
    assert variant in rules
    assert variant.value in rules


@pytest.mark.parametrize("direction", list(PassDirection), ids=lambda d: d.value)
def test_pass_3_round_trips_with_each_direction(direction):
    rules = Rules.from_json({"variants": ["pass_3"], "pass_direction": direction.value})
    assert rules.pass_direction is direction
    assert Rules.from_json(rules.to_json()) == rules


FLAGS = {
    "no_exposure": ("exposure", False),
    "sequential_exposure": ("sequential_exposure", True),
    "lead_2c": ("lead_2c", True),
    "dealer_left_leads": ("dealer_left_leads", True),
    "hearts_must_break": ("hearts_must_break", True),
    "no_spade_lead_first_trick": ("no_spade_lead_first_trick", True),
    "pass_3": ("passing", True),
    "teams": ("teams", True),
    "qd_bonus": ("qd_bonus", True),
    "hand_cap_800": ("hand_cap", 800),
    "target_500": ("losing_threshold", -500),
}


@pytest.mark.parametrize(("variant", "flag"), FLAGS.items())
def test_variant_sets_its_flag(variant, flag):
    attribute, value = flag
    assert getattr(Rules.with_variants(variant), attribute) == value
    assert getattr(STANDARD, attribute) != value


def valid_combinations():
    names = [v.value for v in Variant]
    for r in range(len(names) + 1):
        for combo in itertools.combinations(names, r):
            if not any(a in combo and b in combo for a, b in EXCLUSIVE_PAIRS):
                yield combo


def test_every_valid_combination_of_variants_round_trips():
    count = 0
    for combo in valid_combinations():
        rules = Rules.from_json({"variants": list(reversed(combo))})
        data = rules.to_json()
        assert data["variants"] == sorted(combo)
        assert Rules.from_json(data) == rules
        count += 1
    assert count == 2**14 * 27 // 64  # 3 exclusive pairs leave 3/4 of each pair's 4 choices


profiles = st.builds(
    lambda variants, threshold, max_hands, fixed, direction: {
        "variants": sorted(variants),
        **({"losing_threshold": threshold} if "target_500" not in variants else {}),
        "max_hands": max_hands,
        "fixed_hands": None if fixed is None else min(fixed, max_hands),
        **({"pass_direction": direction} if "pass_3" in variants else {}),
    },
    st.sets(st.sampled_from([v.value for v in Variant])).filter(
        lambda vs: not any(a in vs and b in vs for a, b in EXCLUSIVE_PAIRS)
    ),
    st.integers(min_value=-100_000, max_value=-1),
    st.integers(min_value=1, max_value=10_000),
    st.none() | st.integers(min_value=1, max_value=10_000),
    st.sampled_from([d.value for d in PassDirection]),
)


@given(profiles)
def test_any_valid_profile_round_trips(data):
    rules = Rules.from_json(data)
    assert Rules.from_json(rules.to_json()) == rules
    assert rules.to_json() == Rules.from_json(rules.to_json()).to_json()
    assert hash(Rules.from_json(rules.to_json())) == hash(rules)
    for key, value in data.items():
        assert rules.to_json()[key] == value


def test_variants_order_does_not_matter():
    a = Rules.with_variants("teams", "qd_bonus", "pass_3")
    b = Rules.from_json({"variants": ["pass_3", "teams", "qd_bonus"]})
    assert a == b
    assert hash(a) == hash(b)
    assert a.to_json()["variants"] == ["pass_3", "qd_bonus", "teams"]


def test_with_variants_accepts_names_enums_and_parameters():
    rules = Rules.with_variants(Variant.TEAMS, "qd_bonus", max_hands=7)
    assert Variant.TEAMS in rules
    assert "qd_bonus" in rules
    assert "hand_cap_800" not in rules
    assert rules.max_hands == 7


def test_target_500_sets_the_threshold():
    assert Rules.with_variants("target_500").losing_threshold == -500
    assert Rules.from_json({"variants": ["target_500"], "losing_threshold": -500}) == (
        Rules.with_variants("target_500")
    )


def test_any_losing_threshold_is_a_parameter():
    assert Rules(losing_threshold=-300).losing_threshold == -300
    assert Rules.from_json({"losing_threshold": -1}).losing_threshold == -1


# -- refusals ---------------------------------------------------------------------------------


def refused(data, *fragments):
    with pytest.raises(RulesError) as info:
        Rules.from_json(data)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    return str(info.value)


def test_unknown_key_is_refused_with_the_known_keys():
    refused({"variant": ["teams"]}, "unknown rules key", "variant", "variants", "max_hands")
    refused({"variants": [], "speed": 3, "colour": 1}, "colour, speed")


def test_unknown_variant_is_refused_with_the_known_variants():
    refused({"variants": ["jokers"]}, "unknown variant 'jokers'", "known:", "teams")
    refused({"variants": ["Teams"]}, "unknown variant 'Teams'")


def test_duplicate_variant_is_refused():
    refused({"variants": ["teams", "qd_bonus", "teams"]}, "teams is listed twice")


@pytest.mark.parametrize(("a", "b"), EXCLUSIVE_PAIRS)
def test_exclusive_variants_are_refused_with_both_names(a, b):
    message = refused({"variants": [a, b]}, a, b, "cannot be combined")
    assert ": " in message.split("cannot be combined")[1]  # and the reason why


@pytest.mark.parametrize(("a", "b"), EXCLUSIVE_PAIRS)
def test_exclusive_variants_are_refused_when_constructed_directly(a, b):
    with pytest.raises(RulesError, match="cannot be combined"):
        Rules(variants=frozenset({Variant(a), Variant(b)}))


@pytest.mark.parametrize("direction", ["previous", "across", "cycle"])
def test_pass_direction_without_pass_3_is_refused(direction):
    refused({"pass_direction": direction}, "pass_direction", "pass_3")


def test_pass_direction_next_without_pass_3_is_the_default():
    assert Rules.from_json({"pass_direction": "next"}) == STANDARD


@pytest.mark.parametrize("direction", ["north", "NEXT", "", 1, None, ["next"]])
def test_unknown_pass_direction_is_refused(direction):
    refused({"variants": ["pass_3"], "pass_direction": direction}, "pass_direction", "cycle")


def test_fixed_hands_beyond_max_hands_is_refused():
    refused({"fixed_hands": 11, "max_hands": 10}, "fixed_hands", "at most 10", "11")
    refused({"fixed_hands": 101}, "fixed_hands", "at most 100")
    assert Rules.from_json({"fixed_hands": 10, "max_hands": 10}).fixed_hands == 10


@pytest.mark.parametrize("threshold", [-1000 + 1, -700, -499, -501, -10_000])
def test_target_500_with_a_contradicting_threshold_is_refused(threshold):
    refused({"variants": ["target_500"], "losing_threshold": threshold}, "target_500", "-500")


def test_target_500_with_an_explicit_minus_1000_is_refused():
    refused({"variants": ["target_500"], "losing_threshold": -1000}, "target_500")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("losing_threshold", "x"),
        ("losing_threshold", -1000.0),
        ("losing_threshold", None),
        ("max_hands", "10"),
        ("max_hands", 10.0),
        ("max_hands", None),
        ("fixed_hands", "2"),
        ("fixed_hands", 2.0),
        ("fixed_hands", [2]),
    ],
)
def test_non_integer_numbers_are_refused(key, value):
    refused({key: value}, key, "whole number")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("losing_threshold", True),
        ("losing_threshold", False),
        ("max_hands", True),
        ("fixed_hands", True),
        ("fixed_hands", False),
    ],
)
def test_booleans_are_not_numbers(key, value):
    refused({key: value}, key, "whole number")


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("losing_threshold", 0, "at most -1"),
        ("losing_threshold", 500, "at most -1"),
        ("max_hands", 0, "at least 1"),
        ("max_hands", -5, "at least 1"),
        ("max_hands", 10_001, "at most 10000"),
        ("fixed_hands", 0, "at least 1"),
    ],
)
def test_numbers_out_of_range_are_refused(key, value, fragment):
    refused({key: value}, key, fragment)


@pytest.mark.parametrize("variants", ["teams", 3, None, True])
def test_variants_must_be_a_list(variants):
    refused({"variants": variants}, "variants must be a list")


@pytest.mark.parametrize("name", [3, None, True])
def test_variant_names_must_be_strings(name):
    refused({"variants": [name]}, "unknown variant")


def test_unhashable_variant_name_is_a_rules_error():
    refused({"variants": [["teams"]]}, "variant")


def test_variants_given_as_an_object_are_refused():
    refused({"variants": {"teams": False}}, "variants must be a list")


@pytest.mark.parametrize("data", [[], "standard", 3, [("variants", [])]])
def test_profile_must_be_an_object(data):
    refused(data, "a rules profile is a JSON object")


def test_direct_construction_checks_types():
    with pytest.raises(RulesError, match="not a Variant"):
        Rules(variants=frozenset({"teams"}))
    with pytest.raises(RulesError, match="not a PassDirection"):
        Rules(variants=frozenset({Variant.PASS_3}), pass_direction="cycle")
    with pytest.raises(RulesError, match="whole number"):
        Rules(max_hands=True)


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


# -- pass directions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("direction", "offsets"),
    [
        (PassDirection.NEXT, [1, 1, 1, 1, 1]),
        (PassDirection.PREVIOUS, [3, 3, 3, 3, 3]),
        (PassDirection.ACROSS, [2, 2, 2, 2, 2]),
        (PassDirection.CYCLE, [1, 3, 2, 0, 1]),
    ],
)
def test_pass_direction_offsets(direction, offsets):
    assert [direction.offset(n) for n in range(1, 6)] == offsets

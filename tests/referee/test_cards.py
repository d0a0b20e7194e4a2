"""Cards and card sets: the two-character notation of the rule book and the CardSet type."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee import (
    DECK,
    EXPOSABLE_CARDS,
    SCORING_CARDS,
    SUITS,
    CardSet,
    InvalidCardError,
    Suit,
    card_name,
    parse_card,
    rank_of,
    suit_of,
)

ALL_NAMES = [r + s for s in "CDHS" for r in "23456789TJQKA"]

card_sets = st.integers(min_value=0, max_value=(1 << 52) - 1).map(CardSet)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_card_name_round_trips(name):
    card = parse_card(name)
    assert card_name(card) == name
    assert 0 <= card < 52


def test_cards_are_numbered_suit_then_rank():
    assert parse_card("2C") == 0
    assert parse_card("AC") == 12
    assert parse_card("2D") == 13
    assert parse_card("AS") == 51
    assert suit_of(parse_card("QS")) is Suit.SPADES
    assert rank_of(parse_card("QS")) == 10
    assert suit_of(parse_card("TC")) is Suit.CLUBS
    assert rank_of(parse_card("2H")) == 0


@pytest.mark.parametrize(
    ("written", "expected"),
    [("QS", "QS"), ("qs", "QS"), ("Qs", "QS"), ("10C", "TC"), ("10c", "TC"), (" AH ", "AH")],
)
def test_parse_card_accepts_case_and_ten_as_10(written, expected):
    assert card_name(parse_card(written)) == expected


@pytest.mark.parametrize(
    "junk", ["", "Q", "S", "1C", "11C", "10", "QX", "XS", "QSS", "Q S", "♠Q", "0S"]
)
def test_parse_card_refuses_junk_strings(junk):
    with pytest.raises(InvalidCardError, match="not a card"):
        parse_card(junk)


@pytest.mark.parametrize("junk", [None, 12, 3.0, b"QS", ["QS"]])
def test_parse_card_refuses_non_strings(junk):
    with pytest.raises(InvalidCardError, match="must be a string"):
        parse_card(junk)


def test_invalid_card_error_is_a_value_error():
    assert issubclass(InvalidCardError, ValueError)


def test_cardset_parse_from_string_and_from_names():
    assert CardSet.parse("AH KH 2C QS") == CardSet.parse(["QS", "2C", "kh", "ah"])
    assert CardSet.parse("") == CardSet()
    assert CardSet.parse([]) == CardSet()


def test_cardset_parse_refuses_duplicates():
    with pytest.raises(InvalidCardError, match="listed twice"):
        CardSet.parse("QS 2C QS")
    with pytest.raises(InvalidCardError, match="listed twice"):
        CardSet.parse(["TC", "10C"])


def test_cardset_parse_refuses_junk():
    with pytest.raises(InvalidCardError):
        CardSet.parse("QS ZZ")


def test_cardset_iterates_clubs_diamonds_hearts_spades_low_to_high():
    hand = CardSet.parse("AS 2C KH 3D QS TC 2H")
    assert hand.names() == ["2C", "TC", "3D", "2H", "KH", "QS", "AS"]
    assert [card_name(c) for c in hand] == hand.names()
    assert [card_name(c) for c in reversed(hand)] == list(reversed(hand.names()))


def test_cardset_str_and_repr():
    hand = CardSet.parse("AH KH 2C QS")
    assert str(hand) == "2C KH AH QS"
    assert repr(hand) == "CardSet('2C KH AH QS')"
    assert str(CardSet()) == ""
    assert repr(CardSet()) == "CardSet('')"


def test_cardset_membership_len_and_truth():
    hand = CardSet.parse("AH KH 2C QS")
    assert parse_card("KH") in hand
    assert parse_card("QH") not in hand
    assert "KH" not in hand  # membership is by card number, not by name
    assert 52 not in hand
    assert -1 not in hand
    assert len(hand) == 4
    assert hand
    assert not CardSet()


def test_cardset_set_operations():
    a = CardSet.parse("2C 3C QS AH")
    b = CardSet.parse("3C QS KD")
    assert a | b == CardSet.parse("2C 3C QS AH KD")
    assert a & b == CardSet.parse("3C QS")
    assert a - b == CardSet.parse("2C AH")
    assert a ^ b == CardSet.parse("2C AH KD")
    assert (a & b).issubset(a)
    assert not a.issubset(b)
    assert CardSet().issubset(b)


@given(card_sets, card_sets)
def test_cardset_operations_agree_with_python_sets(a, b):
    sa, sb = set(a), set(b)
    assert set(a | b) == sa | sb
    assert set(a & b) == sa & sb
    assert set(a - b) == sa - sb
    assert set(a ^ b) == sa ^ sb
    assert a.issubset(b) == (sa <= sb)
    assert len(a) == len(sa)
    assert (a == b) == (sa == sb)
    assert list(a) == sorted(sa)
    assert CardSet.of(sa) == a
    assert CardSet.parse(str(a)) == a


def test_cardset_equality_and_hash():
    assert CardSet.parse("QS 2C") == CardSet.parse("2C QS")
    assert hash(CardSet.parse("QS 2C")) == hash(CardSet.parse("2C QS"))
    assert CardSet.parse("QS") != CardSet.parse("QH")
    assert CardSet.parse("QS") != "QS"
    assert len({CardSet.parse("QS 2C"), CardSet.parse("2C QS")}) == 1


def test_cardset_of_suit_lowest_highest():
    hand = CardSet.parse("2C TC 5H QS AS")
    assert hand.of_suit(Suit.CLUBS) == CardSet.parse("2C TC")
    assert hand.of_suit(Suit.DIAMONDS) == CardSet()
    assert card_name(hand.lowest()) == "2C"
    assert card_name(hand.highest()) == "AS"
    with pytest.raises(ValueError):
        CardSet().lowest()
    with pytest.raises(ValueError):
        CardSet().highest()


@pytest.mark.parametrize("mask", [-1, 1 << 52])
def test_cardset_refuses_masks_outside_the_deck(mask):
    with pytest.raises(ValueError, match="out of range"):
        CardSet(mask)


def test_named_card_sets():
    assert len(DECK) == 52
    assert len(SCORING_CARDS) == 16
    assert SUITS[Suit.HEARTS] | CardSet.parse("QS JD TC") == SCORING_CARDS
    assert CardSet.parse("AH QS JD TC") == EXPOSABLE_CARDS
    assert [len(s) for s in SUITS] == [13, 13, 13, 13]
    everything = CardSet()
    for cards in SUITS:
        everything |= cards
    assert everything == DECK
    assert str(SUITS[Suit.HEARTS]) == " ".join(r + "H" for r in "23456789TJQKA")

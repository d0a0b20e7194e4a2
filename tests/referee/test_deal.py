"""Dealing: the seeded deal of referee/deal.py, explicit deals, and Game's use of them."""

import hashlib
import struct

import pytest

from referee import DECK, CardSet, DealError, Game, InvalidCardError, Rules, deal_from_seed
from referee.deal import parse_deal
from tests.referee.referee_support import deal_with, finish_hand, full_state, play_to_last_card

QS = CardSet.parse("QS").mask


def assert_complete(deal):
    assert len(deal) == 4
    seen = 0
    for mask in deal:
        assert mask.bit_count() == 13
        assert not seen & mask
        seen |= mask
    assert seen == DECK.mask


def rebuild(seed, hand_number):
    """The algorithm of deal.py's docstring, written again from the text."""
    stream = hashlib.shake_256(f"gongzhu-deal:{seed}:{hand_number}".encode()).digest(208)
    keys = [struct.unpack(">I", stream[4 * c : 4 * c + 4])[0] for c in range(52)]
    order = sorted(range(52), key=lambda c: (keys[c], c))
    return tuple(CardSet.of(order[13 * s : 13 * s + 13]).mask for s in range(4))


@pytest.mark.parametrize(("seed", "hand_number"), [(0, 1), (7, 1), (7, 2), ("abc", 9), (-3, 100)])
def test_seeded_deal_is_complete(seed, hand_number):
    assert_complete(deal_from_seed(seed, hand_number))


def test_seeded_deals_are_complete_for_many_seeds():
    for seed in range(300):
        assert_complete(deal_from_seed(seed, 1 + seed % 7))


def test_seeded_deal_is_deterministic():
    assert deal_from_seed(12345, 3) == deal_from_seed(12345, 3)


def test_seeded_deal_depends_on_seed_and_hand_number():
    assert deal_from_seed(1, 1) != deal_from_seed(2, 1)
    assert deal_from_seed(1, 1) != deal_from_seed(1, 2)
    deals = {deal_from_seed(seed, hand) for seed in range(20) for hand in range(1, 6)}
    assert len(deals) == 100


def test_seed_is_used_through_its_text():
    # The key stream is SHAKE-256 of f"gongzhu-deal:{seed}:{hand}", so 7 and "7" deal alike.
    assert deal_from_seed(7, 1) == deal_from_seed("7", 1)


def test_pinned_deal_seed_7_hand_1():
    deal = deal_from_seed(7, 1)
    assert str(CardSet(deal[0])) == "4C 6C 7C 7D TD 3H 6H 9H QH 2S 4S JS AS"


@pytest.mark.parametrize(("seed", "hand_number"), [(7, 1), (0, 1), (99, 4), ("tournament-3", 2)])
def test_seeded_deal_follows_the_documented_algorithm(seed, hand_number):
    assert deal_from_seed(seed, hand_number) == rebuild(seed, hand_number)


def test_pig_lands_on_each_seat_about_a_quarter_of_the_time():
    counts = [0, 0, 0, 0]
    for seed in range(2000):
        deal = deal_from_seed(seed, 1)
        counts[next(s for s in range(4) if deal[s] & QS)] += 1
    for count in counts:
        assert 400 <= count <= 600, counts


def test_every_card_reaches_every_seat():
    seen = [0, 0, 0, 0]
    for seed in range(200):
        for seat, mask in enumerate(deal_from_seed(seed, 1)):
            seen[seat] |= mask
    assert seen == [DECK.mask] * 4


# -- explicit deals ---------------------------------------------------------------------------


def test_parse_deal_accepts_card_sets_masks_strings_and_name_lists():
    hands = deal_with({})
    forms = [hands[0], hands[1].mask, str(hands[2]), hands[3].names()]
    deal = parse_deal(forms)
    assert deal == tuple(h.mask for h in hands)


@pytest.mark.parametrize("count", [0, 3, 5])
def test_parse_deal_wants_four_hands(count):
    hands = (deal_with({}) * 2)[:count]
    with pytest.raises(DealError, match=f"4 hands, not {count}"):
        parse_deal(hands)


def test_parse_deal_wants_13_cards_each():
    hands = deal_with({})
    short = [hands[0] - CardSet.of([hands[0].lowest()]), *hands[1:]]
    with pytest.raises(DealError, match="seat 0 is dealt 12 cards, not 13"):
        parse_deal(short)
    long = list(hands)
    long[2] = hands[2] | CardSet.of([hands[3].lowest()])
    long[3] = hands[3] - CardSet.of([hands[3].lowest()])
    with pytest.raises(DealError, match="seat 2 is dealt 14 cards"):
        parse_deal(long)


def test_parse_deal_refuses_a_card_dealt_to_two_seats():
    hands = deal_with({})
    moved = hands[1].lowest()
    dup = [hands[0] - CardSet.of([hands[0].lowest()]) | CardSet.of([moved]), *hands[1:]]
    with pytest.raises(DealError, match="more than one seat"):
        parse_deal(dup)


def test_parse_deal_refuses_a_card_listed_twice_in_one_hand():
    hands = [h.names() for h in deal_with({})]
    hands[0][1] = hands[0][0]
    with pytest.raises((DealError, InvalidCardError)):
        parse_deal(hands)


def test_parse_deal_refuses_junk_card_names():
    hands = [h.names() for h in deal_with({})]
    hands[3][5] = "ZZ"
    with pytest.raises(InvalidCardError):
        parse_deal(hands)


def test_game_uses_the_seeded_deal_of_each_hand():
    game = Game(Rules(fixed_hands=2), seed=7)
    assert game.deals[0] == deal_from_seed(7, 1)
    assert [game.hand(s).mask for s in range(4)] == list(deal_from_seed(7, 1))
    finish_hand(game)
    assert game.deals[1] == deal_from_seed(7, 2)


def test_game_uses_explicit_deals_in_order():
    first, second = deal_with({0: "2S"}), deal_with({3: "2S QS"})
    game = Game(Rules(fixed_hands=2), deals=[first, second])
    assert [game.hand(s) for s in range(4)] == first
    finish_hand(game)
    assert [game.hand(s) for s in range(4)] == second
    assert game.deals == [tuple(h.mask for h in first), tuple(h.mask for h in second)]


def test_game_refuses_an_explicit_deal_that_is_not_a_deal():
    hands = deal_with({})
    with pytest.raises(DealError):
        Game(deals=[[hands[0], hands[0], hands[2], hands[3]]])


def test_game_with_no_explicit_deal_raises_deal_error():
    with pytest.raises(DealError, match="no deal was given for hand 1"):
        Game(deals=[])


def test_game_raises_deal_error_when_the_match_outlives_its_deals():
    game = Game(Rules(fixed_hands=2), deals=[deal_with({})])
    play_to_last_card(game)
    with pytest.raises(DealError, match="no deal was given for hand 2"):
        game.play(game.legal_moves.lowest())


def test_a_move_refused_for_want_of_a_deal_changes_nothing():
    game = Game(Rules(fixed_hands=2), deals=[deal_with({})])
    play_to_last_card(game)
    before = full_state(game)
    with pytest.raises(DealError):
        game.play(game.legal_moves.lowest())
    assert full_state(game) == before
    last = game.move_stack[-1]
    assert game.pop() == last  # the undo stack still matches the moves
    game.push(last)
    assert full_state(game) == before


def test_explicit_deals_suffice_when_the_match_ends_in_time():
    game = Game(Rules(fixed_hands=1), deals=[deal_with({})])
    finish_hand(game)
    assert game.is_over()
    assert game.outcome.hands_played == 1

"""The house bots: always legal, reproducible, and sensible where the seeds say what is right."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import pytest

from bot_sdk.bot import Bot
from bot_sdk.house import HOUSE_BOTS, EasyBot, HardBot, NormalBot, house_bot
from bot_sdk.house.hard import equivalent_groups
from bot_sdk.house.sampling import sample_holdings
from bot_sdk.house.table import read_table
from referee import CardSet, Game, Rules, card_name, parse_card
from tests.bot_sdk.house_support import PROFILES, Done, play_game, position


def fast_hard(seed: int | str) -> HardBot:
    return HardBot(seed, budget_s=10.0, max_samples=2)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_house_bot_plays_only_legal_moves(profile: str) -> None:
    rules = PROFILES[profile]
    for seed in range(6):
        bots: list[Bot] = [EasyBot(seed), NormalBot(seed), fast_hard(seed), NormalBot(seed)]
        # Rotate the seats so every level meets every position over the seeds.
        bots = bots[seed % 4 :] + bots[: seed % 4]
        game = play_game(rules, seed, bots)
        assert game.outcome is not None


@pytest.mark.parametrize("level", ["easy", "normal"])
def test_cheap_levels_stay_legal_over_many_deals(level: str) -> None:
    for seed in range(40):
        play_game(Rules(fixed_hands=3), seed, [house_bot(level, seed) for _ in range(4)])


@pytest.mark.parametrize("level", sorted(HOUSE_BOTS))
def test_a_seeded_bot_is_deterministic(level: str) -> None:
    def bots() -> list[Bot]:
        if level == "hard":
            return [fast_hard(s) for s in range(4)]
        return [house_bot(level, s) for s in range(4)]

    first = play_game(Rules(fixed_hands=1), 11, bots()).move_stack
    assert play_game(Rules(fixed_hands=1), 11, bots()).move_stack == first


def test_house_bot_names_are_case_blind_and_unknown_ones_refused() -> None:
    assert isinstance(house_bot("Hard"), HardBot)
    with pytest.raises(ValueError, match="easy, normal, hard"):
        house_bot("grandmaster")


def test_easy_never_exposes_and_passes_its_highest_cards() -> None:
    game = Game(Rules.with_variants("pass_3"), seed=4)
    obs = game.observation(0)
    passed = CardSet.of(EasyBot(0).pass_cards(obs))
    ranks = sorted((c % 13 for c in obs.hand), reverse=True)
    assert sorted((c % 13 for c in passed), reverse=True) == ranks[:3]
    exposing = Game(seed=1)
    assert EasyBot().expose(exposing.observation(exposing.pending[0].seat)) == CardSet()


def normal(hand: str, trick: list[tuple[int, str]], seat: int, tricks: Sequence[Done] = ()) -> str:
    """Normal's card in a built position."""
    return card_name(NormalBot().play(position(seat, hand, trick, tricks=tricks)))


def test_normal_dumps_the_pig_when_void_in_the_suit_led() -> None:
    assert normal("QS 3S 4D 8D 2H", [(0, "5C"), (1, "KC")], seat=2) == "QS"


def test_normal_dumps_the_pig_under_a_higher_spade() -> None:
    assert normal("QS 3S 4S 8D", [(0, "5S"), (1, "KS")], seat=2) == "QS"


def test_normal_does_not_capture_the_pig_with_the_ace_when_it_can_play_low() -> None:
    assert normal("AS 3S 8D 2H", [(0, "5S"), (1, "QS")], seat=2) == "3S"
    assert normal("AS 3S 8D 2H", [(0, "5S"), (1, "QS"), (2, "7S")], seat=3) == "3S"


def test_normal_does_not_lead_the_spades_above_the_pig_while_it_is_out() -> None:
    assert normal("AS KS 4S 9C JC", [], seat=0) not in ("AS", "KS")
    # Once the pig has fallen they are safe leads again.
    tricks = [(1, "2S 3S QS 5S", 3)]
    assert normal("AS KS 4S 9C JC", [], seat=3, tricks=tricks) in ("AS", "KS", "4S", "9C")


def test_normal_takes_the_goat_with_the_ace_when_it_is_safe() -> None:
    assert normal("AD 3D 8C", [(0, "5D"), (1, "JD"), (2, "7D")], seat=3) == "AD"
    # Not last, but no diamond left out there can beat the ace.
    assert normal("AD 3D 8C", [(0, "5D"), (1, "JD")], seat=2) == "AD"


def test_normal_does_not_take_the_transformer_onto_its_own_losses() -> None:
    # Seat 3 already holds the pig: taking TC would double it.
    hand = "AC 3C 8D"
    tricks = [(1, "2S 3S QS 4S", 3)]
    assert normal(hand, [(0, "TC"), (1, "5C"), (2, "9C")], seat=3, tricks=tricks) == "3C"
    assert normal(hand, [(0, "TC"), (1, "5C"), (2, "9C")], seat=3) == "AC"


def test_normal_takes_a_cheap_heart_to_stop_an_all_hearts_run() -> None:
    tricks = [(0, "AH 2H 3H 4H", 0)]
    # Seat 0 has every heart so far: seat 1 overtakes with TH instead of ducking.
    assert normal("5H TH 2C 3D", [(0, "9H")], seat=1, tricks=tricks) == "TH"
    # With the hearts shared out, it ducks.
    shared = [(0, "AH 2H 3H 4H", 0), (2, "5C 6H 7C 8C", 2)]
    assert normal("5H TH 2C 3D", [(0, "9H")], seat=1, tricks=shared) == "5H"


def test_normal_exposes_only_with_confidence() -> None:
    bot = NormalBot()
    for seed in range(60):
        game = Game(seed=seed)
        for decision in game.pending:
            obs = game.observation(decision.seat)
            hand = obs.hand
            chosen = bot.expose(obs)
            diamonds = len(hand.of_suit(1))
            if parse_card("JD") in chosen:
                assert parse_card("AD") in hand and diamonds >= 3
            if parse_card("QS") in chosen:
                assert len(hand.of_suit(3)) >= 6


def test_the_sampler_respects_voids_sizes_and_known_cards() -> None:
    obs = position(2, "AS 3S 8D 2H 4C 5C 6C 7C 8C 9C TC JC QC", [(0, "5H"), (1, "KS")])
    t = read_table(obs)
    rng = random.Random(0)
    for _ in range(50):
        holdings = sample_holdings(t, rng)
        assert holdings[2] == obs.hand.mask
        assert not holdings[1] & CardSet.parse("2H 3H 4H 6H 7H 8H 9H TH JH QH KH AH").mask
        assert [bin(h).count("1") for h in holdings] == [12, 12, 13, 13]
        Game.from_observation(obs, holdings)


def test_hard_answers_within_its_budget() -> None:
    game = Game(Rules.with_variants("no_exposure"), seed=2)
    obs = game.observation(game.to_move)
    bot = HardBot(0, budget_s=0.05)
    start = time.perf_counter()
    bot.decide(obs)
    assert time.perf_counter() - start < 0.05 + 0.25


def test_hard_prefers_the_obviously_right_card() -> None:
    bot = HardBot(0, budget_s=10.0, max_samples=12)
    dump = position(3, "QS 3S 4S 8D 9D 2H 3H 4H 5H 6H 7H 8H 9H", [(0, "5C"), (1, "KC"), (2, "9C")])
    assert bot.play(dump) == parse_card("QS")
    goat = position(3, "AD 3D 8C 9C 2S 3S 4S 5S 6S 7S 8S 9S TS", [(0, "5D"), (1, "JD"), (2, "7D")])
    assert bot.play(goat) == parse_card("AD")


def test_hard_searches_one_card_of_each_interchangeable_run() -> None:
    obs = position(0, "2C 3C 5C 7C 5H 6H JH QH", [], tricks=[(1, "4C 9D 6C 8C", 0)])
    groups = [CardSet(g).names() for g in equivalent_groups(read_table(obs), obs.legal.mask)]
    # 4C and 6C are played, so 2C..7C are one run; 5H and 6H cost the same, JH and QH do not.
    assert groups == [["2C", "3C", "5C", "7C"], ["5H", "6H"], ["JH"], ["QH"]]

"""The house bots: always legal, reproducible, and sensible where the seeds say what is right."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import pytest

from bot_sdk.bot import Bot
from bot_sdk.house import HOUSE_BOTS, EasyBot, HardBot, NormalBot, hard, house_bot
from bot_sdk.house.hard import equivalent_groups
from bot_sdk.house.playout import policy
from bot_sdk.house.sampling import sample_holdings
from bot_sdk.house.table import lowest, read_table
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


@pytest.mark.parametrize("budget_s", [0.05, 1000.0])
def test_hard_stops_its_search_at_its_time_cap(
    budget_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap is checked before every playout: on a clock that moves 10 ms at each reading
    (whatever the machine's load), a 50 ms cap stops the search within a deal or so of
    playouts, where an unbounded cap plays at least the least number of deals."""
    clock = iter(range(10**6))
    monkeypatch.setattr(hard.time, "perf_counter", lambda: next(clock) / 100)
    playouts: list[int] = []
    played = hard.play_out

    def counted(game: Game) -> None:
        playouts.append(1)
        played(game)

    monkeypatch.setattr(hard, "play_out", counted)
    game = Game(Rules.with_variants("no_exposure"), seed=2)
    obs = game.observation(game.to_move)
    t = read_table(obs)
    groups = len(equivalent_groups(t, obs.legal.mask))
    assert groups > 1
    HardBot(0, budget_s=budget_s).decide(obs)
    if budget_s < 1:
        assert len(playouts) <= 2 * groups + 5
    else:
        assert len(playouts) >= hard.MIN_SAMPLES * groups


def test_hard_prefers_the_obviously_right_card() -> None:
    bot = HardBot(0, budget_s=10.0, max_samples=48)
    dump = position(3, "QS 3S 4S 8D 9D 2H 3H 4H 5H 6H 7H 8H 9H", [(0, "5C"), (1, "KC"), (2, "9C")])
    assert bot.play(dump) == parse_card("QS")
    goat = position(3, "AD 3D 8C 9C 2S 3S 4S 5S 6S 7S 8S 9S TS", [(0, "5D"), (1, "JD"), (2, "7D")])
    assert bot.play(goat) == parse_card("AD")


def test_hard_searches_one_card_of_each_interchangeable_run() -> None:
    obs = position(0, "2C 3C 5C 7C 5H 6H JH QH", [], tricks=[(1, "4C 9D 6C 8C", 0)])
    groups = [CardSet(g).names() for g in equivalent_groups(read_table(obs), obs.legal.mask)]
    # 4C and 6C are played, so 2C..7C are one run; 5H and 6H cost the same, JH and QH do not.
    assert groups == [["2C", "3C", "5C", "7C"], ["5H", "6H"], ["JH"], ["QH"]]


TEAMS = Rules.with_variants("teams", "no_exposure")


def test_hard_plays_the_same_card_in_the_same_position_whatever_came_before() -> None:
    close = position(2, "AS 3S 8D 9D 2H 5H 9H QH 9C 2C 4D 6S 7S", [(0, "5C"), (1, "KC")])
    other = position(1, "4D 7D JD 3H 5H 8H 2S 3S 4S 2C 4C 6C 8C", [(0, "6D")])
    first = HardBot(5, budget_s=10.0, max_samples=8)
    second = HardBot(5, budget_s=10.0, max_samples=8)
    for _ in range(3):
        second.play(other)  # a different history of decisions must not change the answer
    t = read_table(close)
    legal = close.legal.mask
    searched = [
        bot.search(t, legal, lowest(legal), time.perf_counter() + 10.0)
        for bot in (first, second, first)
    ]
    assert searched[0] == searched[1] == searched[2]
    assert first.play(close) == second.play(close)
    # Another seed samples other deals.
    assert (
        HardBot(6, max_samples=8).search(t, legal, lowest(legal), time.perf_counter() + 10)
        != (searched[0])
    )


def test_hard_stops_early_only_when_the_decision_is_clear() -> None:
    bot = HardBot(0, budget_s=10.0, max_samples=64)
    goat = position(3, "AD 3D 8C 9C 2S 3S 4S 5S 6S 7S 8S 9S TS", [(0, "5D"), (1, "JD"), (2, "7D")])
    t = read_table(goat)
    legal, ace = goat.legal.mask, parse_card("AD")
    assert len(bot.search(t, legal, ace, time.perf_counter() + 10.0)[ace]) < 64
    bot.clear_z = None
    assert len(bot.search(t, legal, ace, time.perf_counter() + 10.0)[ace]) == 64


def test_the_sampler_reads_who_declined_to_shed_the_pig() -> None:
    # Seat 0 was void in clubs on seat 1's trick and threw a low diamond, not the pig or a high
    # heart: everyone sheds those first, so seat 0 most likely holds neither.
    tricks = [(1, "2C 4C 5C 3D", 3)]
    obs = position(2, "AS 3S 8D 9D 2H 5H 9C 7C 8C 6S 7S 8S", [], tricks=tricks)
    t = read_table(obs)
    pig = CardSet.parse("QS").mask
    counts = {}
    for infer in (True, False):
        rng = random.Random(1)
        holdings = [sample_holdings(t, rng, infer=infer) for _ in range(300)]
        counts[infer] = sum(bool(h[0] & pig) for h in holdings)
    # Without the inference seat 0 holds the pig about a third of the time (its share of room).
    assert counts[False] > 70
    assert counts[True] < counts[False] / 3


def test_normal_feeds_its_partner_the_goat_and_never_its_pig() -> None:
    # The partner (seat 0) leads the ace of diamonds: nobody can beat it, so the goat goes on.
    assert normal_teams("JD 3D 8C", [(0, "AD"), (1, "5D")], seat=2) == "JD"
    # The partner wins the spades with the king: the pig stays with us, a low spade goes.
    assert normal_teams("QS 3S 8D", [(0, "KS"), (1, "5S")], seat=2) == "3S"
    # Void, on the partner's trick: the goat, and never the pig.
    assert normal_teams("QS JD 4H 9D", [(0, "5C"), (1, "2C")], seat=2) == "JD"
    assert normal_teams("QS 4H 9D", [(0, "5C"), (1, "2C")], seat=2) == "9D"
    # Individually, a king of spades winning is the pig's place.
    assert normal("QS 3S 8D", [(0, "KS"), (1, "5S")], seat=2) == "QS"


def test_normal_protects_its_partners_all_hearts_run() -> None:
    run = [(0, "AH 2H 3H 4H", 0)]
    # The partner (seat 0) holds every heart so far: a discard on its trick is a heart,
    assert normal_teams("KH 9C 8S", [(0, "9D"), (1, "5D")], seat=2, tricks=run) == "KH"
    # and none goes to a rival.
    assert normal_teams("KH 9C 8S", [(3, "5D"), (0, "2D"), (1, "9D")], seat=2, tricks=run) != "KH"


def normal_teams(
    hand: str, trick: list[tuple[int, str]], seat: int, tricks: Sequence[Done] = ()
) -> str:
    obs = position(seat, hand, trick, tricks=tricks, rules=TEAMS)
    return card_name(NormalBot().play(obs))


def test_the_playout_policy_keeps_the_pig_off_the_partner() -> None:
    # The partner's king of spades wins and we hold the pig and another spade: the policy plays
    # the other spade under teams, the pig without.
    ours = "QS 3S 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD"
    hands = (
        "AS 2S 4S 6S 7S 8S 9S TS JS KC AC 2H",
        "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        ours,
        "KD AD 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC",
    )
    holdings = [CardSet.parse(h).mask for h in hands]
    trick = [(0, "KS"), (1, "5S")]
    teams = Game.from_observation(position(2, ours, trick, rules=TEAMS), holdings)
    assert card_name(policy(teams)) == "3S"
    alone = Game.from_observation(position(2, ours, trick), holdings)
    assert card_name(policy(alone)) == "QS"

"""The PettingZoo environment: PettingZoo's own API and seed tests on every kind of profile, the
same trajectory from the same seed, the mask against the referee's pending decision, the
rewards against the scored hands, and illegal actions refused."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from referee import DecisionKind, Game, Rules
from tests.replays.replay_support import PROFILES
from training.encoding import DONE
from training.pettingzoo_env import AGENTS, GongZhuAECEnv
from training.table import IllegalActionError

DICT_OBSERVATIONS = {
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete",
}
"""What PettingZoo's API test says of every environment whose observation is a dictionary with
an action mask (its own card games': it lists their names to keep quiet about them)."""

API_PROFILES = {
    "one standard hand": Rules(fixed_hands=1),
    "pass_3 and teams": Rules.with_variants("pass_3", "teams", "qd_bonus", fixed_hands=2),
    "sequential exposure": Rules.with_variants(
        "sequential_exposure", "lead_2c", "hearts_must_break", fixed_hands=2
    ),
    "passes in a cycle, no exposure": Rules.with_variants(
        "pass_3", "no_exposure", "dealer_left_leads", pass_direction="cycle", fixed_hands=4
    ),
    "the standard match": Rules(),
}


@pytest.mark.parametrize("name", sorted(API_PROFILES))
def test_pettingzoo_api_test_passes(name: str) -> None:
    """Warnings count as failures, but for PettingZoo's two about dictionary observations. The
    test's 400 cycles of the four agents play the short profiles to their end."""
    env = GongZhuAECEnv(API_PROFILES[name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env, num_cycles=400)
    assert {str(w.message) for w in caught} <= DICT_OBSERVATIONS


@pytest.mark.parametrize("name", ["pass_3 and teams", "sequential exposure"])
def test_pettingzoo_seed_test_passes(name: str) -> None:
    seed_test(lambda: GongZhuAECEnv(API_PROFILES[name]), num_cycles=200)


def play(env: GongZhuAECEnv, seed: int, policy: int) -> Iterator[tuple[object, ...]]:
    """Every step of a match from ``reset(seed=seed)`` with random legal actions drawn from
    ``policy``: the agent, what ``last()`` gave and the action taken."""
    rng = random.Random(policy)
    env.reset(seed=seed)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        action = None if terminated else rng.choice(observation["action_mask"].nonzero()[0])
        yield agent, observation, reward, terminated, truncated, info, action
        env.step(action)


def same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_the_same_seed_plays_the_same_match_and_another_seed_another() -> None:
    rules = PROFILES["pass_cycle"]
    first = list(play(GongZhuAECEnv(rules, requests=True), 7, policy=1))
    again = list(play(GongZhuAECEnv(rules, requests=True), 7, policy=1))
    assert len(first) == len(again) > 4 * 52
    assert all(same(a, b) for a, b in zip(first, again, strict=True))
    other = list(play(GongZhuAECEnv(rules), 8, policy=1))
    assert not all(same(a[1], b[1]) for a, b in zip(first, other, strict=False))


def test_reset_without_a_seed_deals_the_next_match_of_the_last_seed_given() -> None:
    env = GongZhuAECEnv(Rules(fixed_hands=1))
    seeds = []
    for _ in range(2):
        env.reset(seed=3)
        seeds.append([env.deal_seed] + [env.reset() or env.deal_seed for _ in range(2)])
    assert seeds[0] == seeds[1] and len(set(seeds[0])) == 3
    env.reset(seed=3)
    for _ in play(env, 3, policy=2):
        pass
    dealt = Game(Rules(fixed_hands=1), seed=3).deals[0]
    assert env.table.game.deals[0] == dealt  # the seed is the referee's: Game(rules, seed=3)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_mask_is_the_referee_s_pending_decision(name: str) -> None:
    """Each step's mask, against the referee's first pending decision: its legal plays; its
    exposable cards not yet chosen, and DONE; the cards of its hand not yet chosen to pass."""
    env = GongZhuAECEnv(PROFILES[name])
    kinds = set()
    chosen = 0
    for agent, observation, _, terminated, *_, action in play(env, 5, policy=5):
        if terminated:
            continue
        game = env.table.game
        decision = game.pending[0]
        assert AGENTS[decision.seat] == agent
        kinds.add(decision.kind)
        expected = decision.choices.mask & ~chosen
        if decision.kind is DecisionKind.EXPOSE:
            expected |= 1 << DONE
        if decision.kind is DecisionKind.PLAY:
            assert decision.choices == game.legal_moves
        mask = observation["action_mask"]
        assert sum(1 << int(i) for i in mask.nonzero()[0]) == expected
        for other in AGENTS:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        if action == DONE or decision.kind is DecisionKind.PLAY:
            chosen = 0
        else:
            chosen |= 1 << int(action)
            if decision.kind is DecisionKind.PASS and chosen.bit_count() == 3:
                chosen = 0
    assert DecisionKind.PLAY in kinds
    assert (DecisionKind.PASS in kinds) == PROFILES[name].passing
    assert env.agents == []


@pytest.mark.parametrize("reward", ["hand", "team", "match"])
def test_rewards_add_up_to_the_match(reward: str) -> None:
    rules = Rules.with_variants("teams", max_hands=3)
    env = GongZhuAECEnv(rules, reward=reward)
    earned = dict.fromkeys(AGENTS, 0.0)
    for agent, _, got, *_ in play(env, 2, policy=2):
        earned[agent] += got
    game = env.table.game
    assert game.outcome is not None
    if reward == "hand":
        assert [earned[a] for a in AGENTS] == game.totals
    elif reward == "team":
        assert [earned[a] for a in AGENTS] == list(game.standing())
    else:
        places = game.outcome.places
        won = {1: 1.0, 2: -1.0} if places[0] != places[1] else {1: 0.0}
        assert [earned[a] for a in AGENTS] == [won[p] for p in places]


def test_the_match_reward_ranks_a_seat_among_its_three_opponents() -> None:
    env = GongZhuAECEnv(Rules.with_variants("tie_share", max_hands=2), reward="match")
    earned = dict.fromkeys(AGENTS, 0.0)
    for agent, _, got, *_ in play(env, 4, policy=4):
        earned[agent] += got
    places = env.table.game.outcome.places
    for seat, agent in enumerate(AGENTS):
        below = sum(p > places[seat] for p in places)
        above = sum(p < places[seat] for p in places)
        assert earned[agent] == (below - above) / 3


def test_team_reward_needs_teams() -> None:
    with pytest.raises(ValueError, match="reward 'team' needs the teams variant"):
        GongZhuAECEnv(Rules(), reward="team")


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (0, "seat 1 may not play 2C: seat 1 must follow spades; legal: 3S 7S QS KS"),
        (2, "seat 1 may not play 4C: seat 1 does not hold 4C; legal: 3S 7S QS KS"),
        (DONE, "seat 1 must play a card, 52 ends only an exposure; legal: "),
        (53, "an action is a card from 0 to 51 or 52 to end an exposure, not 53"),
        ("QS", "an action is an integer, 0 to 51 for a card or 52 to end an exposure, not 'QS'"),
        (True, "an action is an integer"),
    ],
)
def test_an_illegal_action_is_refused_and_changes_nothing(action: object, message: str) -> None:
    env = GongZhuAECEnv(Rules.with_variants("no_exposure", fixed_hands=1))
    env.reset(seed=7)
    env.step(39)  # seat 0 leads 2S
    before = env.observe("seat_1"), env.table.game.copy().move_stack, env.agent_selection
    with pytest.raises(IllegalActionError) as refused:
        env.step(action)
    assert str(refused.value).startswith(message)
    after = env.observe("seat_1"), env.table.game.move_stack, env.agent_selection
    assert same(before[0], after[0]) and before[1:] == after[1:]


def test_an_illegal_pass_or_exposure_says_why() -> None:
    env = GongZhuAECEnv(Rules.with_variants("pass_3", fixed_hands=1))
    env.reset(seed=1)
    hand = env.table.game.hand(0)
    held = hand.lowest()
    not_held = next(c for c in range(52) if c not in hand)
    env.step(held)
    cases = {
        held: "has already chosen",
        not_held: "does not hold",
        DONE: "seat 0 passes 3 cards: choose 2 more",
    }
    for action, why in cases.items():
        with pytest.raises(IllegalActionError, match=why):
            env.step(action)
    env = GongZhuAECEnv(Rules(fixed_hands=1))
    env.reset(seed=1)
    seat = env.table.seat_to_act()
    unexposable = env.table.game.hand(seat).lowest()
    with pytest.raises(IllegalActionError, match=r"only AH, QS, JD and TC may be exposed"):
        env.step(unexposable)


def test_a_finished_agent_takes_none_only() -> None:
    env = GongZhuAECEnv(Rules(fixed_hands=1))
    for agent, *_, terminated, _, _, _ in play(env, 1, policy=1):
        if terminated:
            with pytest.raises(IllegalActionError, match=f"{agent} is done"):
                env.step(0)
            break
    else:
        pytest.fail("the match did not end")


def test_render_shows_the_table() -> None:
    env = GongZhuAECEnv(Rules(fixed_hands=1), render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert text is not None and text.startswith("hand 1, exposing; totals [0, 0, 0, 0]")
    assert str(env.table.game.hand(3)) in text


def test_stepping_without_a_match_says_to_reset() -> None:
    env = GongZhuAECEnv(Rules(fixed_hands=1))
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call reset\(\) first"):
        env.step(0)
    for _ in play(env, 1, policy=1):
        pass
    assert env.agents == []
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call reset\(\) first"):
        env.step(None)

"""The Gymnasium environment: Gymnasium's checker, the same trajectory from the same seed with
house bots, the learner's reward against its points, any SDK bot as an opponent (a failing one
answered by the fallback, as in practice), and illegal actions refused."""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import training  # noqa: F401  (registers gongzhu/GongZhu-v0)
from bot_sdk.bot import Bot, FunctionBot
from referee import HandResult, Observation, Outcome, Rules
from training.encoding import DONE
from training.gymnasium_env import GongZhuEnv
from training.table import IllegalActionError

SHORT = {"variants": ["pass_3", "teams"], "fixed_hands": 2, "max_hands": 2}


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"rules": SHORT, "opponents": ("easy", "hard", "normal"), "seat": None}],
    ids=["default", "pass_3 teams, a seat drawn"],
)
def test_gymnasium_check_env_passes(kwargs: dict[str, Any]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make("gongzhu/GongZhu-v0", **kwargs)
        check_env(env.unwrapped)
    assert not [str(w.message) for w in caught]


def run(env: GongZhuEnv, seed: int, policy: int) -> list[tuple[Any, ...]]:
    """A match from ``reset(seed=seed)``, random legal actions from ``policy``: each step."""
    rng = random.Random(policy)
    observation, info = env.reset(seed=seed)
    steps: list[tuple[Any, ...]] = [(observation, info)]
    terminated = False
    while not terminated:
        action = int(rng.choice(observation["action_mask"].nonzero()[0]))
        observation, reward, terminated, truncated, info = env.step(action)
        steps.append((action, observation, reward, terminated, truncated, info))
    return steps


def flat(step: tuple[Any, ...]) -> list[Any]:
    out: list[Any] = []
    for item in step:
        if isinstance(item, dict):
            out += [(k, v.tolist() if isinstance(v, np.ndarray) else v) for k, v in item.items()]
        else:
            out.append(item)
    return out


def test_the_same_seed_plays_the_same_match_against_house_bots() -> None:
    def env() -> GongZhuEnv:
        return GongZhuEnv(SHORT, opponents=("easy", "normal", "normal"), seat=None, requests=True)

    first, again = run(env(), 9, policy=1), run(env(), 9, policy=1)
    assert [flat(s) for s in first] == [flat(s) for s in again]
    other = run(env(), 10, policy=1)
    assert [flat(s) for s in first] != [flat(s) for s in other]


@pytest.mark.parametrize("seat", [0, 3])
def test_the_learner_s_reward_is_its_points(seat: int) -> None:
    env = GongZhuEnv({"max_hands": 3}, opponents=("easy", "easy", "easy"), seat=seat)
    steps = run(env, 4, policy=4)
    assert sum(s[2] for s in steps[1:]) == env.table.game.totals[seat]
    assert all(s[-1]["seat"] == seat for s in steps[1:])
    assert steps[-1][3] and not steps[-1][1]["action_mask"].any()


class Recorder(Bot):
    """Plays its lowest legal card, passes and exposes as the SDK's default, and keeps what it
    is told."""

    name = "recorder"

    def __init__(self) -> None:
        self.hands: list[tuple[HandResult, Observation]] = []
        self.ends: list[Outcome] = []

    def play(self, obs: Observation) -> int:
        return obs.legal.lowest()

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.hands.append((result, observation))

    def match_end(self, outcome: Outcome) -> None:
        self.ends.append(outcome)


def test_any_sdk_bot_sits_opposite_and_is_told_of_each_hand_and_the_match() -> None:
    bots = [Recorder(), Recorder(), Recorder()]
    env = GongZhuEnv({"fixed_hands": 2, "max_hands": 2}, opponents=bots, seat=1)
    run(env, 2, policy=2)
    game = env.table.game
    for seat, bot in zip((0, 2, 3), bots, strict=True):
        assert [r for r, _ in bot.hands] == game.results and bot.ends == [game.outcome]
        views = [v for _, v in bot.hands]
        assert all(v.seat == seat and len(v.tricks) == 12 and len(v.trick) == 3 for v in views)


def test_a_failing_opponent_has_the_fallback_played_and_the_info_says_so() -> None:
    def broken(obs: Observation) -> str:
        raise RuntimeError("a bug")

    opponents = (FunctionBot(play=broken, name="broken"), "easy", "easy")
    env = GongZhuEnv(Rules(fixed_hands=1), opponents=opponents, seat=0)
    steps = run(env, 3, policy=3)
    incidents = [i for s in steps for i in s[-1].get("incidents", [])]
    assert len(incidents) == 13
    assert all(i.startswith("seat 1 (broken): fallback played: ") for i in incidents)
    assert "RuntimeError: a bug" in incidents[0]


def test_an_illegal_action_is_refused_with_the_reason_and_changes_nothing() -> None:
    env = GongZhuEnv(Rules(fixed_hands=1), opponents=("easy",) * 3, illegal_reward=-5.0)
    observation, _ = env.reset(seed=6)
    wrong = next(a for a in range(DONE + 1) if not observation["action_mask"][a])
    again, reward, terminated, truncated, info = env.step(wrong)
    assert info["illegal"].startswith("seat 0 may not ")
    assert "; legal: " in info["illegal"]
    assert (reward, terminated, truncated) == (-5.0, False, False)
    assert np.array_equal(again["observation"], observation["observation"])
    env = GongZhuEnv(Rules(fixed_hands=1), opponents=("easy",) * 3, illegal="raise")
    env.reset(seed=6)
    with pytest.raises(IllegalActionError, match="seat 0 may not "):
        env.step(wrong)


def test_requests_carry_the_learner_s_decision_request() -> None:
    env = GongZhuEnv(Rules(fixed_hands=1), opponents=("easy",) * 3, seat=2, requests=True)
    observation, info = env.reset(seed=1)
    request = info["request"]
    assert request["type"] == "decision" and request["seat"] == 2
    assert request["protocol"] == "gongzhu-bot/2"
    choices = request["observation"]["decision"]["choices"]
    mask = observation["action_mask"]
    kind = request["kind"]
    cards = {int(i) for i in mask.nonzero()[0]} - {DONE}
    assert len(cards) == len(choices) and (mask[DONE] == 1) == (kind == "expose")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="give 3 opponents, not 2"):
        GongZhuEnv(opponents=("easy", "easy"))
    with pytest.raises(ValueError, match="seat is 0 to 3"):
        GongZhuEnv(seat=4)
    with pytest.raises(ValueError, match="illegal is 'refuse' or 'raise'"):
        GongZhuEnv(illegal="ignore")
    with pytest.raises(ValueError, match="'expert' is not a house level, module:Class or URL"):
        GongZhuEnv(opponents=("expert", "easy", "easy")).reset(seed=1)


def test_stepping_without_a_match_says_to_reset() -> None:
    env = GongZhuEnv(Rules(fixed_hands=1), opponents=("easy",) * 3)
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call reset\(\) first"):
        env.step(0)
    run(env, 1, policy=1)
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call reset\(\) first"):
        env.step(0)  # refused as it is, not as an illegal action: there is no match

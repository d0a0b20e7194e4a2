"""The protocol's form of an observation: the environment's request for each decision is the one
the arena's match loop sends a bot in that seat, byte for byte (the hash the match log records
of it), in both protocol versions and under every profile."""

from __future__ import annotations

import pytest

from arena.match_loop import play_match
from bot_sdk.protocol import (
    DEFAULT_FAULT_LIMIT,
    DEFAULT_TIME_BANK_MS,
    DEFAULT_TIME_LIMIT_MS,
    ProtocolVersion,
    decode,
)
from referee import Game
from replays.deals import DealSource
from replays.log import SeatInfo, TimeControl
from tests.replays.replay_support import PROFILES, HashingSeat, RandomBot
from training.encoding import actions_of
from training.gymnasium_env import GongZhuEnv
from training.pettingzoo_env import AGENTS, GongZhuAECEnv

TIME_CONTROL = TimeControl(DEFAULT_TIME_LIMIT_MS, DEFAULT_TIME_BANK_MS, DEFAULT_FAULT_LIMIT)
"""The arena's defaults: the environment's requests carry them (no clock: the bank stays
full, as a bot answering in 0 ms keeps it in a match)."""


@pytest.mark.parametrize("protocol", list(ProtocolVersion))
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_request_is_the_one_the_arena_sends(name: str, protocol: ProtocolVersion) -> None:
    rules, seed = PROFILES[name], 17
    seats = [
        HashingSeat(
            RandomBot(f"{name}-{seat}"), SeatInfo(seat, f"bot-{seat}", "r", "1", protocol=protocol)
        )
        for seat in range(4)
    ]
    log = play_match(
        Game(rules, seed=seed), seats, match_id="m-1", deals=DealSource.practice(str(seed)),
        time_control=TIME_CONTROL,
    )  # fmt: skip
    env = GongZhuAECEnv(rules, protocol=protocol, requests=True, match_id="m-1")
    env.reset(seed=seed)
    asked = 0
    for hand in log.hands:
        for record in hand.decisions:
            agent = env.agent_selection
            assert agent == AGENTS[record.seat]
            request = env.request(agent)
            assert request is not None and request.sha256 == record.request_sha256
            assert env.infos[agent] == {"request": decode(request.body)}
            assert all(env.infos[a] == {} for a in AGENTS if a != agent)
            for action in actions_of(record.applied):
                assert env.request(agent) == request  # the same until the decision is made
                env.step(action)
            asked += 1
    assert asked > 52 and env.table.game.outcome == log.outcome


def test_the_gymnasium_env_s_request_is_its_seat_s() -> None:
    """One seat's requests only, the others played by bots: still the arena's, by their ids."""
    rules = PROFILES["pass_next"]
    env = GongZhuEnv(rules, opponents=("easy",) * 3, seat=1, requests=True, match_id="m-2")
    observation, info = env.reset(seed=3)
    seen = 0
    while "request" in info:
        request = env.table.request(1)
        assert request is not None and info["request"] == decode(request.body)
        assert request.message["decision_id"].startswith(f"m-2:{env.table.game.hand_number}:")
        action = int(observation["action_mask"].nonzero()[0][0])
        observation, _, terminated, _, info = env.step(action)
        seen += 1
    assert terminated and seen > 13

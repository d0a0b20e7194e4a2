"""Gong Zhu as a PettingZoo AEC environment: the four seats are agents, on the referee.

The agents are ``seat_0`` to ``seat_3``, one per seat. The agent to act is the seat of the
referee's first pending decision; in the phases where seats decide at once (passing, the
standard exposure) they act in that order, each seeing only what its observation shows it.
A pass takes three actions and an exposure a card at a time then ``DONE``
(:mod:`training.encoding`). The match is the rules profile's whole match; it ends every agent at
once (no truncation).

>>> env = GongZhuAECEnv(Rules.with_variants("pass_3", fixed_hands=2, max_hands=2))
>>> env.reset(seed=42)
>>> for agent in env.agent_iter():
...     observation, reward, terminated, truncated, info = env.last()
...     legal = observation["action_mask"].nonzero()[0]
...     env.step(None if terminated else int(legal[0]))
>>> env.table.game.outcome.hands_played, env.agents
(2, [])
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Final

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from bot_sdk.protocol import DecisionRequest, ProtocolVersion
from referee import CardSet, Game, Rules, card_name
from training.encoding import ACTIONS, SIZE, Mask, Vector, observation_space_bounds
from training.table import IllegalActionError, Reward, Table

AGENTS: Final = ("seat_0", "seat_1", "seat_2", "seat_3")
Observed = dict[str, Vector | Mask]
"""What an environment observes: ``"observation"``, the vector, and ``"action_mask"``."""


def observation_space() -> gymnasium.spaces.Dict:
    """The space of an observation: the vector (:func:`training.encoding.encode`) and the
    mask of legal actions."""
    low, high = observation_space_bounds()
    return gymnasium.spaces.Dict(
        {
            "observation": gymnasium.spaces.Box(low, high, (SIZE,), np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (ACTIONS,), np.int8),
        }
    )


def rules_of(rules: Rules | Mapping[str, Any] | None) -> Rules:
    """A rules profile given as :class:`~referee.Rules` or as its JSON object."""
    if rules is None or isinstance(rules, Rules):
        return rules or Rules()
    return Rules.from_json(rules)


class GongZhuAECEnv(AECEnv[str, dict[str, Any], np.int64 | None]):
    """The four seats of a match under ``rules`` (a :class:`~referee.Rules` or its JSON), each
    rewarded by ``reward`` (:class:`training.table.Reward`). With ``requests``, each agent's
    info carries ``"request"``: the decision request a bot in its seat would be sent now,
    in ``protocol``, as the JSON it receives (``{}`` for the agents not to act)."""

    # a class's (gymnasium and pettingzoo read it before making an environment), declared an
    # instance's by the base class
    metadata: dict[str, Any] = {  # noqa: RUF012
        "name": "gongzhu_v0",
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: Rules | Mapping[str, Any] | None = None,
        *,
        reward: Reward | str = Reward.HAND,
        protocol: ProtocolVersion | str = ProtocolVersion.V2,
        requests: bool = False,
        match_id: str = "training",
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode is one of ansi, human or None, not {render_mode!r}")
        self.render_mode = render_mode
        self.table = Table(rules_of(rules), reward=reward, protocol=protocol, match_id=match_id)
        self.requests = requests
        self.possible_agents = list(AGENTS)
        space = observation_space()
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: gymnasium.spaces.Discrete(ACTIONS) for a in AGENTS}
        self.agents: list[str] = []
        self._seeds = random.Random()
        self.deal_seed: int | None = None
        """The seed the match was dealt from: ``Game(rules, seed=env.deal_seed)`` deals it."""
        self._rewarded = False

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match: dealt from ``seed``, or else from the next seed of those drawn from the
        last seed given (so ``reset(seed=42)`` then ``reset()`` deal the same matches every
        time)."""
        if seed is not None:
            self._seeds.seed(seed)
            self.deal_seed = seed
        else:
            self.deal_seed = self._seeds.getrandbits(63)
        self.table.deal(self.deal_seed)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self._rewarded = False
        self.agent_selection = AGENTS[self.table.seat_to_act()]
        if self.requests:
            self._note_request()

    def step(self, action: int | np.integer[Any] | None) -> None:
        """Take ``action`` for :attr:`agent_selection`; an illegal one raises
        :class:`~training.table.IllegalActionError` and changes nothing."""
        if not self.agents:
            raise gymnasium.error.ResetNeeded("no match is being played: call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(f"{agent} is done: its only action is None")
            self._was_dead_step(None)
            return
        table = self.table
        earned = table.act(action)
        self._cumulative_rewards[agent] = 0.0
        rewards = self.rewards
        if self._rewarded:
            for a in AGENTS:
                rewards[a] = 0.0
            self._rewarded = False
        if earned is not None:
            for seat, a in enumerate(AGENTS):
                rewards[a] = earned[seat]
            self._accumulate_rewards()
            self._rewarded = True
        seat = table.seat_to_act()
        if seat < 0:
            self.terminations = dict.fromkeys(AGENTS, True)
            self.agent_selection = AGENTS[0]
        else:
            self.agent_selection = AGENTS[seat]
        if self.requests:
            self._note_request()

    def _note_request(self) -> None:
        for agent, seat in zip(AGENTS, range(4), strict=True):
            request = self.table.request(seat)
            self.infos[agent] = {} if request is None else {"request": request.message}

    def observe(self, agent: str) -> Observed:
        """The agent's observation vector and legal-action mask (zeros unless it is to act)."""
        vector, mask = self.table.encode(AGENTS.index(agent))
        return {"observation": vector, "action_mask": mask}

    def request(self, agent: str) -> DecisionRequest | None:
        """The decision request a bot in ``agent``'s seat would be sent now (None unless it is
        to act): ``.message`` is the JSON it receives, ``.body`` the bytes."""
        return self.table.request(AGENTS.index(agent))

    def render(self) -> str | None:
        return render(self.render_mode, self.table.game)

    def close(self) -> None:
        """Nothing to release."""


def render(mode: str | None, game: Game) -> str | None:
    """What an environment's ``render()`` does in ``mode``: ``"ansi"`` returns
    :func:`describe`, ``"human"`` prints it."""
    if mode is None:
        gymnasium.logger.warn("render() without a render_mode: give render_mode='ansi'")
        return None
    text = describe(game)
    if mode == "human":
        print(text)
        return None
    return text


def describe(game: Game) -> str:
    """The whole table in a few lines of text (every hand: for a person watching)."""
    lines = [f"hand {game.hand_number}, {game.phase.value}; totals {game.totals}"]
    for seat in range(4):
        exposed = game.exposed_by[seat]
        shown = f"; exposed {CardSet(exposed)}" if exposed else ""
        lines.append(f"  seat {seat}: {game.hand(seat)}{shown}")
    if game.trick:
        played = " ".join(f"{seat}:{card_name(card)}" for seat, card in game.current_trick())
        lines.append(f"  trick: {played}")
    return "\n".join(lines)

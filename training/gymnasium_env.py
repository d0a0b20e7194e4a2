"""Gong Zhu as a Gymnasium environment: one seat learns, three SDK bots play the others.

The opponents are any :class:`~bot_sdk.Bot` or what ``python -m bot_sdk practice`` accepts for
one (a house level, ``module:Class``, a bot server's URL), house Normal by default. They are
driven as the practice runner drives them: each decides from its own seat's observation, a bot
that raises or answers an illegal move has the protocol's fallback played for it (the info's
``"incidents"`` say so, as they say of a decision over the time limit), and each is told of
every hand's end and of the match's end. Each step is one action of the learning seat, then
every opponent decision up to its next one; its reward is what the learning seat earned
meanwhile (:class:`training.table.Reward`).

>>> env = GongZhuEnv(opponents=("easy", "easy", "easy"), rules={"fixed_hands": 1, "max_hands": 1})
>>> observation, info = env.reset(seed=3)
>>> terminated, total = False, 0.0
>>> while not terminated:
...     action = int(observation["action_mask"].nonzero()[0][0])
...     observation, reward, terminated, truncated, info = env.step(action)
...     total += reward
>>> total == env.table.game.results[-1].scores[env.seat]
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from bot_sdk.bot import Bot
from bot_sdk.practice import BotSpec, Clock, last_views, load_bot
from bot_sdk.protocol import DEFAULT_TIME_LIMIT_MS, ProtocolVersion
from referee import Observation, Rules
from training.encoding import ACTIONS, Mask
from training.pettingzoo_env import Observed, observation_space, render, rules_of
from training.table import IllegalActionError, Reward, Table

DEFAULT_OPPONENTS = ("normal", "normal", "normal")


class GongZhuEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """Seat ``seat`` (0 to 3; None: a seat drawn at each reset) learns against ``opponents``
    (three bots, for the other seats in seat order), under ``rules`` (a :class:`~referee.Rules`
    or its JSON), rewarded by ``reward``. With ``requests``, the info carries ``"request"``:
    the decision request a bot in the learning seat would be sent now, in ``protocol``, as the
    JSON it receives (absent once the match is over).

    An illegal action is refused and changes nothing: with ``illegal="refuse"`` (the default,
    as Gymnasium's tools expect of an environment, which may send any action of the space) the
    step returns the same observation, ``illegal_reward`` and the info's ``"illegal"``, the
    referee's reason; with ``illegal="raise"`` it raises
    :class:`~training.table.IllegalActionError`."""

    # a class's (gymnasium.make reads it before making the environment), declared an instance's
    # by the base class
    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        rules: Rules | Mapping[str, Any] | None = None,
        *,
        opponents: Sequence[BotSpec] = DEFAULT_OPPONENTS,
        seat: int | None = 0,
        reward: Reward | str = Reward.HAND,
        protocol: ProtocolVersion | str = ProtocolVersion.V2,
        requests: bool = False,
        illegal: str = "refuse",
        illegal_reward: float = 0.0,
        match_id: str = "training",
        render_mode: str | None = None,
    ) -> None:
        if illegal not in ("refuse", "raise"):
            raise ValueError(f"illegal is 'refuse' or 'raise', not {illegal!r}")
        if len(opponents) != 3:
            raise ValueError(f"give 3 opponents, not {len(opponents)}")
        if seat is not None and seat not in range(4):
            raise ValueError(f"seat is 0 to 3 (or None for a seat drawn each match), not {seat}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode is one of ansi, human or None, not {render_mode!r}")
        self.render_mode = render_mode
        self.table = Table(rules_of(rules), reward=reward, protocol=protocol, match_id=match_id)
        self.opponent_specs = tuple(opponents)
        self.fixed_seat = seat
        self.seat = seat if seat is not None else 0
        """The learning seat of this match."""
        self.requests = requests
        self.illegal = illegal
        self.illegal_reward = illegal_reward
        self.observation_space = observation_space()
        self.action_space = gymnasium.spaces.Discrete(ACTIONS)
        self.deal_seed: int | None = None
        """The seed the match was dealt from: ``Game(rules, seed=env.deal_seed)`` deals it."""
        self._bots: list[Bot | None] = [None, None, None, None]
        self._clock = Clock(DEFAULT_TIME_LIMIT_MS)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observed, dict[str, Any]]:
        """A new match, dealt from ``seed`` (or the next seed drawn from the last one given),
        with new house bots seeded from it; plays the opponents up to the learning seat's
        first decision."""
        super().reset(seed=seed)
        self.deal_seed = seed if seed is not None else int(self.np_random.integers(2**63))
        if self.fixed_seat is None:
            self.seat = int(self.np_random.integers(4))
        others = [s for s in range(4) if s != self.seat]
        self._bots = [None, None, None, None]
        for seat, spec in zip(others, self.opponent_specs, strict=True):
            self._bots[seat] = load_bot(spec, f"{self.deal_seed}:{seat}")
        self.table.deal(self.deal_seed)
        incidents: list[str] = []
        self._play_opponents(incidents)
        return self._observe(), self._info(incidents)

    def step(
        self, action: int | np.integer[Any]
    ) -> tuple[Observed, float, bool, bool, dict[str, Any]]:
        """The learning seat's ``action``, then the opponents' decisions up to its next (an
        illegal action changes nothing: see the class)."""
        table = self.table
        if self.deal_seed is None or table.seat_to_act() < 0:
            raise gymnasium.error.ResetNeeded("no match is being played: call reset() first")
        views = last_views(table.game)
        try:
            earned = table.act(action)
        except IllegalActionError as error:
            if self.illegal == "raise":
                raise
            info = {**self._info([]), "illegal": str(error)}
            return self._observe(), self.illegal_reward, False, False, info
        self._tell_hand_end(views)
        reward = 0.0 if earned is None else earned[self.seat]
        incidents: list[str] = []
        reward += self._play_opponents(incidents)
        over = table.seat_to_act() < 0
        return self._observe(), reward, over, False, self._info(incidents)

    def _play_opponents(self, incidents: list[str]) -> float:
        """Every opponent decision up to the learning seat's next one or the match's end: what
        the learning seat earned meanwhile."""
        table, game = self.table, self.table.game
        reward = 0.0
        seat = table.seat_to_act()
        while seat >= 0 and seat != self.seat:
            bot = self._bots[seat]
            assert bot is not None
            views = last_views(game)
            move, problems, _ = self._clock.decide(bot, game, seat)
            incidents += [f"seat {seat} ({bot.name}): {problem}" for problem in problems]
            earned = table.push(move)
            if earned is not None:
                reward += earned[self.seat]
            self._tell_hand_end(views)
            seat = table.seat_to_act()
        if seat < 0:
            outcome = game.outcome
            assert outcome is not None
            for bot in self._bots:
                if bot is not None:
                    bot.match_end(outcome)
        return reward

    def _tell_hand_end(self, views: list[Observation]) -> None:
        """Tell the opponents of the hand just scored, with ``views``, their views as its last
        card was about to be played (none: no hand ended)."""
        if views:
            result = self.table.game.results[-1]
            for seat, bot in enumerate(self._bots):
                if bot is not None:
                    bot.hand_end(result, views[seat])

    def _observe(self) -> Observed:
        vector, mask = self.table.encode(self.seat)
        return {"observation": vector, "action_mask": mask}

    def _info(self, incidents: list[str]) -> dict[str, Any]:
        info: dict[str, Any] = {"seat": self.seat}
        if incidents:
            info["incidents"] = incidents
        if self.requests:
            request = self.table.request(self.seat)
            if request is not None:
                info["request"] = request.message
        return info

    def action_masks(self) -> Mask:
        """The learning seat's legal actions now (what maskable learners ask for)."""
        return self.table.encode(self.seat)[1]

    def render(self) -> str | None:
        return render(self.render_mode, self.table.game)

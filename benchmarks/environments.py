"""The training environments' speed: steps with random legal play, side by side with OpenSpiel's
``hearts`` through its Python ``rl_environment`` and with the referee's own playout loop.

Every contestant plays one-hand matches (``Rules(fixed_hands=1)``: deal, exposures, 52 plays,
scoring), each dealt from the hand's number as a seed, choosing uniformly among the legal
actions with its own ``random.Random``, in its own subprocess, for a fixed CPU time (CPU time,
not wall time: these machines are shared, and CPU time is what the contestant itself spent).
Each round runs every contestant once, in an order reversed every other round; a contestant's
ratio to another is the median of the per-round ratios. ``--instructions`` adds the steadiest
figure: CPU instructions per hand, counted by valgrind, which no other load on the machine
changes (every contestant runs with ``PYTHONHASHSEED=0``, which fixes the count from run to
run).

    python benchmarks/environments.py                 # all contestants, 3 rounds of 3 s
    python benchmarks/environments.py --rounds 5 --seconds 5 --instructions 100

Contestants (a step is one action of one seat; a pass is three, an exposure one per card
exposed and one to end it):
- ``referee play_random``: ``referee.players.play_random`` (a step is a referee move).
- ``Table, no observation``: the environments' core (``training.table.Table``) taking random
  legal actions from its mask of legal actions: the one-action-at-a-time wrapper alone.
- ``Table and observation``: the same, and the observation vector and mask of the seat to act
  (``Table.encode``) before each action: what the numeric observation adds.
- ``PettingZoo AEC``: ``GongZhuAECEnv`` driven as PettingZoo documents: for each agent of
  ``env.agent_iter()``, ``env.last()`` (the observation vector and mask), an action drawn from
  the mask, ``env.step(action)``.
- ``Gymnasium``: ``GongZhuEnv`` against three SDK bots playing random legal moves; ``reset``,
  then ``step`` with an action drawn from the observation's mask (a step is the learning seat's;
  the opponents' decisions run inside it and are counted apart).
- ``open_spiel rl_environment``: ``rl_environment.Environment("hearts", pass_cards=False)``,
  ``env.step([choice(legal_actions)])`` until the time step is last (its chance events, the
  deal, are sampled inside ``step``).

OpenSpiel is an optional extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
if Path(sys.path[0]).resolve() == ROOT / "benchmarks":  # run as a script
    sys.path[0] = str(ROOT)

# ruff: noqa: E402  (the package's modules, importable once the path is the repository's)
from benchmarks.engine import (
    CALLGRIND,
    contestants_parser,
    has_open_spiel,
    in_rounds,
    instructions_counted,
    play_hands,
    run_worker_script,
)

Hand = Callable[[int], tuple[int, int]]
"""Plays hand ``i`` (from 0), start to finish: the steps taken and the seat decisions made."""


def _play_random() -> Hand:
    import random

    from referee import Game, Rules
    from referee.players import play_random

    rules = Rules(fixed_hands=1, max_hands=1)
    rng = random.Random(1)

    def hand(i: int) -> tuple[int, int]:
        game = Game(rules, seed=i)
        play_random(game, rng)
        return len(game.move_stack), len(game.move_stack)

    return hand


def _table(observe: bool = False) -> Hand:
    import random

    from referee import Rules
    from training.table import Table

    table = Table(Rules(fixed_hands=1, max_hands=1))
    uniform = random.Random(1).random

    def hand(i: int) -> tuple[int, int]:
        table.deal(i)
        steps = 0
        while (seat := table.seat_to_act()) >= 0:
            if observe:
                table.encode(seat)
            legal = table.legal()
            k = int(uniform() * legal.bit_count())
            while k:
                legal &= legal - 1
                k -= 1
            table.act((legal & -legal).bit_length() - 1)
            steps += 1
        return steps, len(table.game.move_stack)

    return hand


def _table_observed() -> Hand:
    return _table(observe=True)


def _aec() -> Hand:
    import random

    from referee import Rules
    from training.pettingzoo_env import GongZhuAECEnv

    env = GongZhuAECEnv(Rules(fixed_hands=1, max_hands=1))
    uniform = random.Random(1).random

    def hand(i: int) -> tuple[int, int]:
        env.reset(seed=i)
        steps = 0
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            env.step(int(legal[int(uniform() * len(legal))]))
            steps += 1
        return steps, len(env.table.game.move_stack)

    return hand


def _gymnasium() -> Hand:
    import random

    from bot_sdk.bot import FunctionBot
    from referee import Observation, Rules
    from training.gymnasium_env import GongZhuEnv

    rng = random.Random(2)

    def random_play(obs: Observation) -> int:
        return rng.choice(list(obs.legal))

    def random_exposure(obs: Observation) -> list[int]:
        return [card for card in obs.legal if rng.random() < 0.5]

    opponents = [FunctionBot(random_play, random_exposure, name="random") for _ in range(3)]
    env = GongZhuEnv(Rules(fixed_hands=1, max_hands=1), opponents=opponents)
    uniform = random.Random(1).random

    def hand(i: int) -> tuple[int, int]:
        observation, _ = env.reset(seed=i)
        steps, terminated = 0, False
        while not terminated:
            legal = observation["action_mask"].nonzero()[0]
            observation, _, terminated, _, _ = env.step(int(legal[int(uniform() * len(legal))]))
            steps += 1
        return steps, len(env.table.game.move_stack)

    return hand


def _open_spiel() -> Hand:
    import random

    from open_spiel.python import rl_environment

    sampler = rl_environment.ChanceEventSampler(seed=1)
    env = rl_environment.Environment("hearts", chance_event_sampler=sampler, pass_cards=False)
    choice = random.Random(1).choice

    def hand(i: int) -> tuple[int, int]:
        step = env.reset()
        steps = 0
        while not step.last():
            player = step.observations["current_player"]
            step = env.step([choice(step.observations["legal_actions"][player])])
            steps += 1
        return steps, steps

    return hand


WORKERS: dict[str, Callable[[], Hand]] = {
    "play-random": _play_random,
    "table": _table,
    "table-observed": _table_observed,
    "aec": _aec,
    "gymnasium": _gymnasium,
    "open-spiel": _open_spiel,
}


def _worker_main(name: str, seconds: float, hands: int | None) -> None:
    """Play for ``seconds`` of CPU time, or exactly ``hands`` hands, and print what was done."""
    from referee.build import describe

    play = WORKERS[name]()
    steps = decisions = 0

    def counted(i: int) -> None:
        nonlocal steps, decisions
        taken, made = play(i)
        steps += taken
        decisions += made

    done, elapsed = play_hands(counted, seconds, hands, time.process_time)
    result = {"hands": done, "steps": steps, "decisions": decisions, "seconds": elapsed}
    print(json.dumps({**result, "referee": describe()}))


# -- the harness ------------------------------------------------------------------------------


class Contestant(NamedTuple):
    name: str
    worker: str


CONTESTANTS = (
    Contestant("referee play_random", "play-random"),
    Contestant("Table, no observation", "table"),
    Contestant("Table and observation", "table-observed"),
    Contestant("PettingZoo AEC", "aec"),
    Contestant("Gymnasium", "gymnasium"),
)
PEER = Contestant("open_spiel rl_environment", "open-spiel")


def run_contestant(
    contestant: Contestant, *args: str, prefix: tuple[str, ...] = ()
) -> tuple[dict[str, object], str]:
    """Run one contestant's subprocess: what it printed (JSON) and its stderr."""
    # one hash seed: it moves an instruction count (dictionaries' layouts) from run to run
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    return run_worker_script(__file__, contestant.worker, args, env, prefix)


class Rates(NamedTuple):
    hands: float
    steps: float
    decisions: float
    """Per CPU second."""


def run_worker(contestant: Contestant, seconds: float) -> Rates:
    result, _ = run_contestant(contestant, "--seconds", str(seconds))
    elapsed = float(str(result["seconds"]))
    return Rates(*(float(str(result[k])) / elapsed for k in ("hands", "steps", "decisions")))


def instructions_per_hand(contestant: Contestant, hands: int) -> tuple[float, float]:
    """CPU instructions per hand and per step, counted by valgrind's callgrind over ``hands``
    hands; start-up (the same run with no hand) subtracted."""

    def count(n: int) -> tuple[int, int]:
        result, err = run_contestant(contestant, "--hands", str(n), prefix=CALLGRIND)
        return instructions_counted(err), int(str(result["steps"]))

    (base, _), (total, steps) = count(0), count(hands)
    return (total - base) / hands, (total - base) / steps


def main(argv: list[str] | None = None) -> None:
    parser = contestants_parser(
        __doc__, WORKERS, seconds="CPU time per contestant per round", hands=100
    )
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main(args.worker, args.seconds, args.hands)
        return

    contestants = list(CONTESTANTS)
    if has_open_spiel():
        contestants.append(PEER)
    else:
        print("open_spiel is not installed (pip install -e '.[bench]'): not run", file=sys.stderr)
    rates = in_rounds(contestants, args.rounds, lambda c: run_worker(c, args.seconds))
    print_rates(rates)
    if args.instructions:
        counts = {c.name: instructions_per_hand(c, args.instructions) for c in contestants}
        print_instructions(counts)


def _ratio(values: list[float], bases: list[float]) -> float:
    return statistics.median(v / b for v, b in zip(values, bases, strict=True))


def print_rates(rates: dict[str, list[Rates]]) -> None:
    """Steps per CPU second (median), against OpenSpiel's, and each contestant's CPU time per
    hand and per step against ``play_random``'s (the overhead: 0 % is as fast)."""
    peer = rates.get(PEER.name)
    base = rates[CONTESTANTS[0].name]
    row = "{:<27} {:>12} {:>10} {:>14} {:>9} {:>17} {:>17}"
    print(row.format(
        "contestant", "steps/s", "hands/s", "decisions/s", "steps/hand", "vs open_spiel",
        "over play_random",
    ))  # fmt: skip
    for name, runs in rates.items():
        steps = [r.steps for r in runs]
        hands = [r.hands for r in runs]
        versus = f"{_ratio(steps, [p.steps for p in peer]):.2f}x" if peer else "n/a"
        # the time per hand (per step) over play_random's, less one
        per_hand = _ratio([b.hands for b in base], hands) - 1
        per_step = _ratio([b.steps for b in base], steps) - 1
        numbers = (
            f"{statistics.median(steps):,.0f}",
            f"{statistics.median(hands):,.0f}",
            f"{statistics.median(r.decisions for r in runs):,.0f}",
            f"{statistics.median(s / h for s, h in zip(steps, hands, strict=True)):.1f}",
        )
        print(row.format(name, *numbers, versus, f"{per_hand:+.0%} / {per_step:+.0%}"))
    print("(over play_random: CPU time per hand / per step, more than play_random's)")


def print_instructions(counts: dict[str, tuple[float, float]]) -> None:
    base = counts[CONTESTANTS[0].name]
    print(f"\n{'contestant':<27} {'instr./hand':>13} {'instr./step':>12} {'over play_random':>17}")
    for name, (hand, step) in counts.items():
        over = f"{hand / base[0] - 1:+.0%} / {step / base[1] - 1:+.0%}"
        print(f"{name:<27} {hand:>13,.0f} {step:>12,.0f} {over:>17}")


if __name__ == "__main__":
    main()

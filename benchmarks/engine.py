"""Referee speed: full hands with random legal decisions, side by side with OpenSpiel's hearts.

Every contestant plays complete hands (deal, random exposures where the game has them,
52 random legal plays, scoring) for a fixed time in its own subprocess. Each round runs every
contestant once, in an order reversed every other round; the report gives each contestant's
median hands per second and its ratio to OpenSpiel's ``hearts`` driven from Python (the peer to
beat) as the median of the per-round ratios, so machine noise that drifts between rounds hits
both sides of a ratio alike. ``--instructions`` adds the steadiest figure: CPU instructions per
hand, counted by valgrind, which no other load on the machine changes.

    python benchmarks/engine.py                 # all contestants, 3 rounds of 3 s
    python benchmarks/engine.py --rounds 5 --seconds 5 --instructions 200

Contestants:
- ``gongzhu mypyc``: the referee as installed (``pip install .`` compiles it with mypyc where a
  C compiler is available), driven from Python through its public API:
  ``game.expose(decision.seat, ...)`` for each of ``game.pending``, then
  ``game.play(choice(game.legal_cards()))``.
- ``gongzhu pure Python``: the same driver on the referee's pure-Python source
  (``GONGZHU_COMPILE=0``).
- ``gongzhu mypyc play_random``: the compiled referee's own random-playout loop
  (``referee.players.play_random``), the counterpart of OpenSpiel's C++ loop.
- ``open_spiel python``: ``pyspiel.load_game("hearts", {"pass_cards": False})`` driven from
  Python: ``state.apply_action(choice(state.legal_actions()))`` until terminal (the deal is
  52 chance actions in OpenSpiel's API).
- ``open_spiel C++``: ``pyspiel.evaluate_bots`` with uniform-random bots (the stretch reference).

OpenSpiel is an optional extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar

from referee.build import COMPILED

ROOT = Path(__file__).resolve().parent.parent


# -- the contestants, each run inside its own subprocess -------------------------------------


Hand = Callable[[int], None]
"""Plays hand number ``i`` (from 0) of a contestant, start to finish."""


def _gongzhu_driver() -> Hand:
    import random

    from referee import Game, Phase, Rules

    rules = Rules(fixed_hands=1, max_hands=1)
    rng = random.Random(1)
    choice = rng.choice
    playing = Phase.PLAYING

    def hand(i: int) -> None:
        game = Game(rules, seed=i)
        while game.phase is not playing:
            for decision in game.pending:
                game.expose(decision.seat, decision.choices.mask & rng.getrandbits(52))
        while game.outcome is None:
            game.play(choice(game.legal_cards()))

    return hand


def _gongzhu_play_random() -> Hand:
    import random

    from referee import Game, Rules
    from referee.players import play_random

    rules = Rules(fixed_hands=1, max_hands=1)
    rng = random.Random(1)

    def hand(i: int) -> None:
        play_random(Game(rules, seed=i), rng)

    return hand


def _open_spiel_python() -> Hand:
    import random

    import pyspiel

    game = pyspiel.load_game("hearts", {"pass_cards": False})
    choice = random.Random(1).choice

    def hand(i: int) -> None:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))

    return hand


def _open_spiel_cpp() -> Hand:
    import pyspiel

    game = pyspiel.load_game("hearts", {"pass_cards": False})
    bots = [pyspiel.make_uniform_random_bot(seat, seat + 1) for seat in range(4)]

    def hand(i: int) -> None:
        pyspiel.evaluate_bots(game.new_initial_state(), bots, i)

    return hand


WORKERS: dict[str, Callable[[], Hand]] = {
    "gongzhu-driver": _gongzhu_driver,
    "gongzhu-play-random": _gongzhu_play_random,
    "open-spiel-python": _open_spiel_python,
    "open-spiel-cpp": _open_spiel_cpp,
}


def play_hands(
    play: Callable[[int], object], seconds: float, hands: int | None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[int, float]:  # fmt: skip
    """Play hands 0, 1, … for ``seconds`` on ``clock``, or exactly ``hands`` of them: how many
    were played, and in how long."""
    start = clock()
    done = 0
    if hands is not None:
        for done in range(hands):
            play(done)
        done = hands
    else:
        deadline = start + seconds
        while clock() < deadline:
            play(done)
            done += 1
    return done, clock() - start


def _worker_main(name: str, seconds: float, hands: int | None) -> None:
    """Play for ``seconds``, or exactly ``hands`` hands, and print what was done."""
    from referee.build import describe

    done, elapsed = play_hands(WORKERS[name](), seconds, hands)
    print(json.dumps({"hands": done, "seconds": elapsed, "referee": describe()}))


# -- the harness ------------------------------------------------------------------------------


class Contestant(NamedTuple):
    name: str
    worker: str
    compile_setting: str | None
    """``GONGZHU_COMPILE`` in its subprocess: "0" for the pure-Python referee, None as installed."""

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "GONGZHU_COMPILE"}
        if self.compile_setting is not None:
            env["GONGZHU_COMPILE"] = self.compile_setting
        return {**env, "PYTHONPATH": str(ROOT)}


def has_open_spiel() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


CALLGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
"""The prefix that runs a worker under valgrind, counting its instructions
(:func:`instructions_counted`)."""


def run_worker_script(
    script: str, worker: str, args: Sequence[str], env: Mapping[str, str],
    prefix: Sequence[str] = (),
) -> tuple[dict[str, object], str]:  # fmt: skip
    """Run ``script --worker WORKER ARGS`` in a subprocess of its own (under ``prefix``): the
    JSON it printed last, and its stderr."""
    done = subprocess.run(
        [*prefix, sys.executable, script, "--worker", worker, *args],
        check=True, env=env, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def instructions_counted(stderr: str) -> int:
    """The instructions valgrind counted, from the stderr of a run under :data:`CALLGRIND`."""
    line = next(x for x in stderr.splitlines() if "Collected :" in x)
    return int(line.split(":")[-1].strip())


def run_contestant(
    contestant: Contestant, *args: str, prefix: tuple[str, ...] = ()
) -> tuple[dict[str, object], str]:
    """Run one contestant's subprocess: what it printed (JSON) and its stderr."""
    return run_worker_script(__file__, contestant.worker, args, contestant.env(), prefix)


def installed_build() -> str:
    """Which build of the referee the installed package runs (``compiled (mypyc)`` or not)."""
    result, _ = run_contestant(Contestant("", "gongzhu-driver", None), "--hands", "0")
    return str(result["referee"])


def run_worker(contestant: Contestant, seconds: float) -> float:
    """Hands per second of one contestant over ``seconds``."""
    result, _ = run_contestant(contestant, "--seconds", str(seconds))
    return float(str(result["hands"])) / float(str(result["seconds"]))


def instructions_per_hand(contestant: Contestant, hands: int) -> float:
    """CPU instructions per hand, counted by valgrind's callgrind: unlike seconds, the count is
    the same whatever else the machine is doing. Start-up is measured alone and subtracted."""

    def count(n: int) -> int:
        _, err = run_contestant(contestant, "--hands", str(n), prefix=CALLGRIND)
        return instructions_counted(err)

    return (count(hands) - count(0)) / hands


def contestants_parser(
    description: str | None, workers: Iterable[str], *, seconds: str, hands: int
) -> argparse.ArgumentParser:
    """The options of a script that runs its contestants side by side: ``--seconds`` (the
    ``seconds`` each runs a round), ``--rounds``, ``--instructions`` (``hands`` in its help's
    example), and the worker's own (``--worker``, ``--hands``), hidden."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help=seconds)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--instructions", type=int, metavar="HANDS", default=0,
        help=f"also count instructions per hand with valgrind over HANDS hands (e.g. {hands})",
    )  # fmt: skip
    parser.add_argument("--worker", choices=sorted(workers), help=argparse.SUPPRESS)
    parser.add_argument("--hands", type=int, help=argparse.SUPPRESS)
    return parser


class Named(Protocol):
    @property
    def name(self) -> str: ...


C = TypeVar("C", bound=Named)
R = TypeVar("R")


def in_rounds(contestants: Sequence[C], rounds: int, run: Callable[[C], R]) -> dict[str, list[R]]:
    """Each contestant's results by name: ``run`` once each a round, in an order reversed every
    other round (noise that drifts between rounds then hits every contestant alike)."""
    results: dict[str, list[R]] = {c.name: [] for c in contestants}
    for round_number in range(rounds):
        order = contestants if round_number % 2 == 0 else contestants[::-1]
        for contestant in order:
            results[contestant.name].append(run(contestant))
        print(f"round {round_number + 1}/{rounds} done", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = contestants_parser(
        __doc__, WORKERS, seconds="time per contestant per round", hands=200
    )
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main(args.worker, args.seconds, args.hands)
        return

    contestants = [Contestant("gongzhu pure Python", "gongzhu-driver", "0")]
    build = installed_build()
    if build == COMPILED:
        contestants += [
            Contestant("gongzhu mypyc", "gongzhu-driver", None),
            Contestant("gongzhu mypyc play_random", "gongzhu-play-random", None),
        ]
    else:
        print(f"the installed referee runs {build}: no compiled contestants", file=sys.stderr)
    if has_open_spiel():
        contestants += [
            Contestant("open_spiel python", "open-spiel-python", None),
            Contestant("open_spiel C++", "open-spiel-cpp", None),
        ]
    else:
        print("open_spiel is not installed (pip install -e '.[bench]'): not run", file=sys.stderr)
    rates = in_rounds(contestants, args.rounds, lambda c: run_worker(c, args.seconds))
    hands = args.instructions
    counts = {c.name: instructions_per_hand(c, hands) for c in contestants if hands}

    peer = rates.get("open_spiel python")
    row = "{:<28} {:>17} {:>9} {:>9} {:>21}"
    print(row.format("contestant", "hands/s (median)", "min", "max", "vs open_spiel python"))
    for name, values in rates.items():
        ratio = "n/a"
        if peer:
            ratio = f"{statistics.median(v / p for v, p in zip(values, peer, strict=True)):.2f}x"
        numbers = (f"{v:,.0f}" for v in (statistics.median(values), min(values), max(values)))
        print(row.format(name, *numbers, ratio))
    if counts:
        base = counts.get("open_spiel python")
        print(f"\n{'contestant':<28} {'instructions/hand':>17} {'open_spiel python / this':>25}")
        for name, n in counts.items():
            ratio = f"{base / n:.2f}x" if base else "n/a"
            print(f"{name:<28} {n:>17,.0f} {ratio:>25}")


if __name__ == "__main__":
    main()

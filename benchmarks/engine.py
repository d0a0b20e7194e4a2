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
- ``gongzhu python``: the referee as shipped (pure Python), driven from Python through its
  public API: ``game.expose(decision.seat, ...)`` for each of ``game.pending``, then
  ``game.play(choice(game.legal_cards()))``.
- ``gongzhu mypyc``: the same source and driver, the referee compiled by mypyc
  (``GONGZHU_COMPILE=1 pip install .``, built into a temporary directory by this script).
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
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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


def _worker_main(name: str, seconds: float, hands: int | None) -> None:
    """Play for ``seconds``, or exactly ``hands`` hands, and print what was done."""
    import referee

    play = WORKERS[name]()
    start = time.perf_counter()
    done = 0
    if hands is not None:
        for done in range(hands):
            play(done)
        done = hands
    else:
        deadline = start + seconds
        while time.perf_counter() < deadline:
            play(done)
            done += 1
    elapsed = time.perf_counter() - start
    compiled = referee.game.__file__.endswith(".so")
    print(json.dumps({"hands": done, "seconds": elapsed, "compiled": compiled}))


# -- the harness ------------------------------------------------------------------------------


def build_compiled(target: Path) -> None:
    """Install the mypyc-compiled referee into ``target`` (the production build path)."""
    env = {**os.environ, "GONGZHU_COMPILE": "1"}
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(ROOT)],
        check=True, env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip


def has_open_spiel() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def run_worker(worker: str, seconds: float, pythonpath: Path) -> float:
    """Hands per second of one contestant over ``seconds``."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", worker, "--seconds", str(seconds)],
        check=True, env=env, capture_output=True, text=True,
    ).stdout  # fmt: skip
    result = json.loads(out.strip().splitlines()[-1])
    return float(result["hands"]) / float(result["seconds"])


def instructions_per_hand(worker: str, hands: int, pythonpath: Path) -> float:
    """CPU instructions per hand, counted by valgrind's callgrind: unlike seconds, the count is
    the same whatever else the machine is doing. Start-up is measured alone and subtracted."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}

    def count(n: int) -> int:
        err = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
             __file__, "--worker", worker, "--hands", str(n)],
            check=True, env=env, capture_output=True, text=True,
        ).stderr  # fmt: skip
        line = next(x for x in err.splitlines() if "Collected :" in x)
        return int(line.split(":")[-1].strip())

    return (count(hands) - count(0)) / hands


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="time per contestant per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-compile", action="store_true", help="skip the mypyc build")
    parser.add_argument(
        "--instructions", type=int, metavar="HANDS", default=0,
        help="also count instructions per hand with valgrind over HANDS hands (e.g. 200)",
    )  # fmt: skip
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--hands", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main(args.worker, args.seconds, args.hands)
        return

    with tempfile.TemporaryDirectory(prefix="gongzhu-compiled-") as tmp:
        contestants: list[tuple[str, str, Path]] = [("gongzhu python", "gongzhu-driver", ROOT)]
        if not args.no_compile:
            print("building the mypyc-compiled referee ...", file=sys.stderr)
            build_compiled(Path(tmp))
            contestants += [
                ("gongzhu mypyc", "gongzhu-driver", Path(tmp)),
                ("gongzhu mypyc play_random", "gongzhu-play-random", Path(tmp)),
            ]
        if has_open_spiel():
            contestants += [
                ("open_spiel python", "open-spiel-python", ROOT),
                ("open_spiel C++", "open-spiel-cpp", ROOT),
            ]
        else:
            print(
                "open_spiel is not installed (pip install -e '.[bench]'): skipping it",
                file=sys.stderr,
            )
        rates: dict[str, list[float]] = {name: [] for name, _, _ in contestants}
        for round_number in range(args.rounds):
            order = contestants if round_number % 2 == 0 else contestants[::-1]
            for name, worker, path in order:
                rates[name].append(run_worker(worker, args.seconds, path))
            print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)
        counts = {
            name: instructions_per_hand(worker, args.instructions, path)
            for name, worker, path in contestants
            if args.instructions
        }

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

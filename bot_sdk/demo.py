"""Watch a match: four built-in random players, printed hand by hand.

python -m bot_sdk.demo --seed 7 --variants pass_3,qd_bonus
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from referee import SUITS, Game, HandResult, RandomPlayer, Rules, RulesError, Suit, Termination


def _row(result: HandResult) -> str:
    cells = [f"{s.score:+6d} {t:+7d}" for s, t in zip(result.seats, result.totals, strict=True)]
    return f"{result.hand_number:>4}  {str(result.exposed) or '-':<12}  " + "  ".join(cells)


def _breakdown(result: HandResult) -> list[str]:
    lines = []
    for seat, s in enumerate(result.seats):
        if not s.taken:
            continue
        parts = [f"hearts {s.hearts:+d}"] if s.taken & SUITS[Suit.HEARTS] else []
        parts += [f"pig {s.pig:+d}"] * bool(s.pig) + [f"goat {s.goat:+d}"] * bool(s.goat)
        if s.multiplier > 1:
            parts.append(f"transformer x{s.multiplier}")
        if s.transformer_bonus:
            parts.append(f"transformer alone {s.transformer_bonus:+d}")
        if s.all_hearts:
            parts.append("ALL HEARTS")
        if s.qd_bonus:
            parts.append(f"QD bonus {s.qd_bonus:+d}")
        if s.capped:
            parts.append("capped")
        lines.append(f"        seat {seat}: {s.taken}  ->  {', '.join(parts)} = {s.score:+d}")
    return lines


def play_demo(rules: Rules, seed: int, out: TextIO, *, details: bool = True) -> Game:
    """Play one match between random players and print its score table."""
    game = Game(rules, seed=seed)
    players = [RandomPlayer(f"{seed}:{seat}") for seat in range(4)]
    variants = ", ".join(sorted(v.value for v in rules.variants)) or "standard profile"
    print(f"Gong Zhu demo: four random players, {variants}, seed {seed}\n", file=out)
    seats = "  ".join(f"{'seat ' + str(s):>14}" for s in range(4))
    print(f"hand  exposed       {seats}", file=out)
    print(" " * 20 + "  ".join(f"{'hand':>6} {'total':>7}" for _ in range(4)), file=out)
    shown = 0
    while not game.is_over():
        for decision in game.pending:
            game.push(players[decision.seat].decide(decision))
        for result in game.results[shown:]:
            print(_row(result), file=out)
            if details:
                for line in _breakdown(result):
                    print(line, file=out)
        shown = len(game.results)
    outcome = game.outcome
    assert outcome is not None
    why = {
        Termination.THRESHOLD: f"a total reached {rules.losing_threshold}",
        Termination.PLUS_1000: "a total went above +1000",
        Termination.HAND_CAP: f"the {rules.max_hands}-hand cap was reached",
        Termination.FIXED_HANDS: f"{rules.fixed_hands} hands were played",
    }[outcome.termination]
    print(f"\nThe match ended after {outcome.hands_played} hands: {why}.", file=out)
    for place, seat in sorted(zip(outcome.places, range(4), strict=True)):
        flag = "  out" if seat in outcome.out else ""
        print(f"  {place}. seat {seat}  {outcome.totals[seat]:+d}{flag}", file=out)
    return game


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--variants", default="", help="comma-separated named variants")
    parser.add_argument("--brief", action="store_true", help="no per-seat breakdown")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    try:
        rules = Rules.from_json({"variants": names})
    except RulesError as error:
        parser.error(str(error))
    play_demo(rules, args.seed, sys.stdout, details=not args.brief)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

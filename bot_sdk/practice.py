"""Practise a bot against the house bots on your own machine, with duplicate deals.

Every match seed is played four times, the bot in seat 0, 1, 2 and 3 in turn and the
opponents in the other seats in order. A seed fixes the deal of every hand number, so the
bot meets the same cards from every seat and the luck of the deal largely cancels out.

As in the arena, a decision that raises or is illegal is answered with the protocol's fallback
and the match goes on; each one, each decision over the time limit, and each answer a served
bot notes as its own fallback is reported, per decision.

>>> import io
>>> report = practice("normal", matches=1, seed=3, out=io.StringIO())
>>> len(report.games), report.names[0]
(4, 'house-normal')
"""

from __future__ import annotations

import importlib
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

import click

from bot_sdk.bot import Bot
from bot_sdk.dispatch import failure
from bot_sdk.house import HOUSE_BOTS, house_bot
from bot_sdk.protocol import (
    DEFAULT_TIME_LIMIT_MS,
    answer_of,
    encode,
    fallback_move,
    is_fallback_note,
    parse_answer,
    pending_decision,
)
from referee import (
    AnyMove,
    Deal,
    Game,
    HandResult,
    Observation,
    Outcome,
    Phase,
    Rules,
    RulesError,
)

Z95 = 1.96
BotSpec = Bot | str
BAD_SPEC = (ValueError, ImportError, AttributeError, TypeError)
"""What :func:`load_bot` raises for a spec it cannot load (the commands show it as an error)."""


def load_bot(spec: BotSpec, seed: str, secret: str | None = None, timeout_s: float = 5.0) -> Bot:
    """A bot from an instance, a house level, ``module:Class``, or the URL of a bot server."""
    if isinstance(spec, Bot):
        return spec
    if spec.lower() in HOUSE_BOTS:
        return house_bot(spec, seed)
    if spec.startswith(("http://", "https://")):
        from bot_sdk.client import RemoteBot  # noqa: PLC0415 - only URL specs need HTTP

        return RemoteBot(spec, secret, timeout_s=timeout_s)
    module_name, sep, attr = spec.partition(":")
    if not sep:
        raise ValueError(f"{spec!r} is not a house level, module:Class or URL")
    factory = getattr(importlib.import_module(module_name), attr)
    bot = factory()
    if not isinstance(bot, Bot):
        raise TypeError(f"{spec} made a {type(bot).__name__}, not a Bot")
    return bot


@dataclass(frozen=True)
class PracticeGame:
    """One match: ``seating[seat]`` is the participant there (0 is the bot under test)."""

    match: int
    seating: tuple[int, int, int, int]
    deals: tuple[Deal, ...]
    """The deal of every hand, seat 0 first (the same for the four seatings of a match)."""
    hands: tuple[HandResult, ...]
    outcome: Outcome
    incidents: tuple[Incident, ...] = ()


@dataclass(frozen=True)
class Incident:
    """A decision the bot's author should look at: over the time limit, or a fallback."""

    match: int
    seat: int
    name: str
    hand: int
    kind: str
    latency_ms: int
    what: str

    def line(self) -> str:
        return (
            f"  ! {self.name} in seat {self.seat}, hand {self.hand}, {self.kind} "
            f"({self.latency_ms} ms): {self.what}"
        )


@dataclass(frozen=True)
class Summary:
    name: str
    points: tuple[int, ...]
    """Hand scores, one per hand played."""
    places: tuple[int, int, int, int]
    """How many matches it finished 1st, 2nd, 3rd, 4th."""

    @property
    def mean(self) -> float:
        return statistics.fmean(self.points)

    @property
    def half_width(self) -> float:
        """Half the 95% interval of the mean (normal approximation; hands as independent)."""
        if len(self.points) < 2:
            return math.inf
        return Z95 * statistics.stdev(self.points) / math.sqrt(len(self.points))


@dataclass(frozen=True)
class PracticeReport:
    names: tuple[str, ...]
    """The participants: the bot under test, then the opponents in order."""
    games: tuple[PracticeGame, ...]

    def summary(self, participant: int) -> Summary:
        points: list[int] = []
        places = [0, 0, 0, 0]
        for game in self.games:
            seat = game.seating.index(participant)
            points.extend(h.scores[seat] for h in game.hands)
            places[game.outcome.places[seat] - 1] += 1
        first, second, third, fourth = places
        return Summary(self.names[participant], tuple(points), (first, second, third, fourth))


def practice(
    bot: BotSpec,
    opponents: Sequence[BotSpec] = ("normal", "normal", "normal"),
    *,
    matches: int = 2,
    seed: int | str = "practice",
    rules: Rules | None = None,
    out: TextIO | None = sys.stdout,
    secret: str | None = None,
    time_limit_ms: int = DEFAULT_TIME_LIMIT_MS,
) -> PracticeReport:
    """Play ``matches`` match seeds, each from all four seats; print every hand, every
    :class:`Incident` and a summary to ``out`` (``None``: silent)."""
    if len(opponents) != 3:
        raise ValueError(f"practice needs 3 opponents, not {len(opponents)}")
    rules = rules or Rules()
    clock = Clock(time_limit_ms)
    specs = [bot, *opponents]
    games: list[PracticeGame] = []
    names: list[str] = []
    for match in range(matches):
        match_seed = f"{seed}:{match}"
        for bot_seat in range(4):
            a, b, c, d = ((seat - bot_seat) % 4 for seat in range(4))
            seating = (a, b, c, d)
            bots = [load_bot(specs[p], f"{match_seed}:{bot_seat}:{p}", secret) for p in seating]
            if not names:
                names = [_label(p, bots[seating.index(p)].name) for p in range(4)]
            games.append(play_game(match, seating, bots, rules, match_seed, clock=clock))
            if out is not None:
                _print_game(games[-1], names, out)
    report = PracticeReport(tuple(names), tuple(games))
    if out is not None:
        print(summary_table(report), file=out)
    return report


def _label(participant: int, name: str) -> str:
    return name if participant == 0 else f"{name} #{participant}"


@dataclass(frozen=True)
class Clock:
    """Times each decision against ``limit_ms`` and plays the fallback for a bot that fails."""

    limit_ms: int

    def decide(self, bot: Bot, game: Game, seat: int) -> tuple[AnyMove, list[str], int]:
        """The bot's move (the fallback if it raised or was illegal), what went wrong, and how
        long it took."""
        obs = game.observation(seat)
        start = time.monotonic()
        problems: list[str] = []
        try:
            move = bot.decide(obs)
            parse_answer(pending_decision(obs).kind, encode(answer_of(move)), obs)
        except Exception as error:  # the bot's bug: reported, and the fallback played
            move = fallback_move(obs)
            problems.append(f"fallback played: {failure(error)}")
        latency = round((time.monotonic() - start) * 1000)
        note = getattr(bot, "note", None)
        if is_fallback_note(note):
            problems.append(f"the served bot answered its own fallback: {note}")
        if latency > self.limit_ms:
            problems.append(f"over the {self.limit_ms} ms time limit")
        return move, problems, latency


def play_game(
    match: int,
    seating: tuple[int, int, int, int],
    bots: list[Bot],
    rules: Rules,
    seed: str,
    *,
    clock: Clock,
) -> PracticeGame:
    """One match, telling every bot of each hand's end (with its view at the hand's last play,
    as the arena does) and of the match's end."""
    game = Game(rules, seed=seed)
    incidents: list[Incident] = []
    while not game.is_over():
        for decision in game.pending:
            bot = bots[decision.seat]
            views = last_views(game)
            move, problems, latency = clock.decide(bot, game, decision.seat)
            incidents += [
                Incident(
                    match,
                    decision.seat,
                    bot.name,
                    game.hand_number,
                    decision.kind.value,
                    latency,
                    what,
                )
                for what in problems
            ]
            game.push(move)
            for seat, view in enumerate(views):
                bots[seat].hand_end(game.results[-1], view)
    assert game.outcome is not None
    for bot in bots:
        bot.match_end(game.outcome)
    return PracticeGame(
        match, seating, tuple(game.deals), tuple(game.results), game.outcome, tuple(incidents)
    )


def last_views(game: Game) -> list[Observation]:
    """Each seat's view as the hand's last card is about to be played, which ``hand_end``
    carries (as the arena sends it); none at any other moment."""
    if game.phase is Phase.PLAYING and len(game.tricks) == 12 and len(game.trick) == 3:
        return [game.observation(seat) for seat in range(4)]
    return []


def _print_game(game: PracticeGame, names: list[str], out: TextIO) -> None:
    seats = "  ".join(f"{s}: {names[p]}" for s, p in enumerate(game.seating))
    print(f"match {game.match + 1}, bot in seat {game.seating.index(0)} — {seats}", file=out)
    for h in game.hands:
        cells = "  ".join(f"{sc:+5d} ({t:+6d})" for sc, t in zip(h.scores, h.totals, strict=True))
        print(f"  hand {h.hand_number:>3}  {cells}", file=out)
    places = " ".join(str(p) for p in game.outcome.places)
    print(f"  places {places} after {game.outcome.hands_played} hands", file=out)
    for incident in game.incidents:
        print(incident.line(), file=out)


def summary_table(report: PracticeReport) -> str:
    lines = [f"{'':<22} {'hands':>6} {'pts/hand':>9} {'95% CI':>18}   1st 2nd 3rd 4th"]
    for participant in range(4):
        s = report.summary(participant)
        lo, hi = s.mean - s.half_width, s.mean + s.half_width
        ci = f"[{lo:+.1f}, {hi:+.1f}]"
        places = " ".join(f"{n:>3}" for n in s.places)
        lines.append(f"{s.name:<22} {len(s.points):>6} {s.mean:>+9.1f} {ci:>18}   {places}")
    lines.append(incidents_line(report.games))
    return "\n".join(lines)


def incidents_line(games: Sequence[PracticeGame]) -> str:
    """How many of the games' decisions to look at, or that there are none."""
    incidents = [i for game in games for i in game.incidents]
    slow = sum("time limit" in i.what for i in incidents)
    if not incidents:
        return "every decision legal, in time and the bot's own"
    return (
        f"{len(incidents)} decisions to look at ({slow} over the time limit, "
        f"{len(incidents) - slow} fallbacks)"
    )


secret_option = click.option(
    "--secret", default=None, help="The signing secret of a bot given by URL (none: unsigned)."
)
time_limit_option = click.option(
    "--time-limit-ms", type=click.IntRange(min=1), default=DEFAULT_TIME_LIMIT_MS,
    show_default=True, help="Report decisions slower than this.",
)  # fmt: skip


@click.command("practice")
@click.argument("bot")
@click.option(
    "--opponents", default="normal,normal,normal", show_default=True,
    help="Three comma-separated house levels, module:Class specs or URLs.",
)  # fmt: skip
@click.option(
    "--matches", type=click.IntRange(min=1), default=2, show_default=True,
    help="Match seeds (each played from all 4 seats).",
)  # fmt: skip
@click.option("--seed", default="practice", show_default=True, help="Seed of the deals.")
@click.option("--variant", "variants", multiple=True, help="A rules variant; repeatable.")
@secret_option
@time_limit_option
@click.option("--quiet", is_flag=True, help="Print only the summary.")
def practice_command(
    bot: str,
    *,
    opponents: str,
    matches: int,
    seed: str,
    variants: tuple[str, ...],
    secret: str | None,
    time_limit_ms: int,
    quiet: bool,
) -> None:
    """Play BOT (house level, module:Class or URL) against house bots with duplicate deals."""
    try:
        rules = Rules.with_variants(*variants)
    except RulesError as e:
        raise click.BadParameter(str(e), param_hint="--variant") from None
    try:
        report = practice(
            bot,
            tuple(o.strip() for o in opponents.split(",")),
            matches=matches,
            seed=seed,
            rules=rules,
            out=None if quiet else sys.stdout,
            secret=secret,
            time_limit_ms=time_limit_ms,
        )
    except BAD_SPEC as e:
        raise click.ClickException(str(e)) from e
    if quiet:
        click.echo(summary_table(report))

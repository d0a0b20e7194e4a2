"""Is my new version better? A gauntlet between two local bots, with the arena's statistics and
stopping rule (:mod:`bot_sdk.sequential`).

The candidate and the baseline sit across from each other with an opponent between them on
each side (:func:`~bot_sdk.sequential.table`). Each deal is a match seed played in its four
seat rotations on the same cards, ``hands`` hands each; its paired difference (the candidate's
points less the baseline's, per hand, over the four) is one observation of the sequential
test, evaluated after every deal. The gauntlet stops at the test's verdict: "better",
"worse", "no difference" of ``δ`` or more, or the cap on deals. As in practice
(:mod:`bot_sdk.practice`, whose playing code this shares), a decision that raises or is
illegal is answered with the fallback and reported.

    python -m bot_sdk gauntlet my_bot:V2 my_bot:V1
    python -m bot_sdk gauntlet hard normal --delta 20 --max-deals 50 --seed 7

The same seed plays the same deals and seeds every house bot the same way, so a gauntlet of
deterministic bots gives the same verdict every time; house Hard searches for a time budget
and so plays a little differently on a busier machine.

>>> report = gauntlet("normal", "easy", ("easy", "easy"), hands=1, seed=2, out=None)
>>> report.state.verdict, len(report.deals) >= 10
(<Verdict.BETTER: 'better'>, True)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

import click

from bot_sdk.practice import (
    BAD_SPEC,
    BotSpec,
    Clock,
    PracticeGame,
    incidents_line,
    load_bot,
    play_game,
    secret_option,
    time_limit_option,
)
from bot_sdk.protocol import DEFAULT_TIME_LIMIT_MS
from bot_sdk.sequential import (
    ALPHA_RANGE,
    BETA_RANGE,
    DEALS_RANGE,
    DELTA_RANGE,
    Hypotheses,
    State,
    default_opponents,
    evaluate,
    paired_difference,
    table,
)
from referee import Rules

F = TypeVar("F", bound=Callable[..., Any])

CANDIDATE, BASELINE = 0, 1
SEATS = table(CANDIDATE, BASELINE, (2, 3))
"""The participants in seat order at rotation 0: the candidate (0), an opponent (2), the
baseline (1), the other opponent (3)."""
ROTATIONS = 4
DEFAULT_HANDS = 4
"""Hands per match, as in the arena's matches."""
DEFAULT_MAX_DEALS = 200


@dataclass(frozen=True)
class DealResult:
    """One deal: its four rotations (``games[r]`` is rotation ``r``) and its paired difference,
    in points per hand."""

    deal: int
    games: tuple[PracticeGame, ...]
    difference: float


def rotation(r: int) -> tuple[int, int, int, int]:
    """The participant in each seat at rotation ``r``: everyone ``r`` seats on."""
    a, b, c, d = (SEATS[(seat + r) % ROTATIONS] for seat in range(ROTATIONS))
    return (a, b, c, d)


def play_deal(
    specs: Sequence[BotSpec],
    deal: int,
    *,
    seed: int | str,
    hands: int,
    clock: Clock,
    secret: str | None = None,
    duplicate: bool = True,
) -> DealResult:
    """Deal number ``deal``: its four rotations, ``specs`` in participant order (candidate,
    baseline, the two opponents). With ``duplicate`` (a gauntlet) every rotation plays the same
    cards; without, each its own, as four unrelated matches would."""
    rules = Rules(fixed_hands=hands)
    games = []
    for r in range(ROTATIONS):
        seating = rotation(r)
        bots = [load_bot(specs[p], f"{seed}:{deal}:{r}:{p}", secret) for p in seating]
        cards = f"{seed}:{deal}" if duplicate else f"{seed}:{deal}:r{r}"
        games.append(play_game(deal, seating, bots, rules, cards, clock=clock))
    return DealResult(
        deal,
        tuple(games),
        paired_difference(
            _points(games, CANDIDATE), _points(games, BASELINE), sum(len(g.hands) for g in games)
        ),
    )


def _points(games: Sequence[PracticeGame], participant: int) -> int:
    return sum(h.scores[g.seating.index(participant)] for g in games for h in g.hands)


@dataclass(frozen=True)
class GauntletReport:
    candidate: str
    baseline: str
    opponents: tuple[str, str]
    test: Hypotheses
    hands: int
    deals: tuple[DealResult, ...]
    state: State
    """The test after the last deal: its verdict, Δ and interval."""

    @property
    def matches(self) -> int:
        return ROTATIONS * len(self.deals)


def gauntlet(
    candidate: BotSpec,
    baseline: BotSpec,
    opponents: tuple[BotSpec, BotSpec] | None = None,
    *,
    test: Hypotheses | None = None,
    max_deals: int = DEFAULT_MAX_DEALS,
    hands: int = DEFAULT_HANDS,
    seed: int | str = "gauntlet",
    out: TextIO | None = sys.stdout,
    secret: str | None = None,
    time_limit_ms: int = DEFAULT_TIME_LIMIT_MS,
) -> GauntletReport:
    """Play deals until the sequential test ``test`` (default :class:`Hypotheses`) stops,
    printing a line per deal and the verdict to ``out`` (``None``: silent). ``opponents``
    default to :func:`~bot_sdk.sequential.default_opponents`."""
    test = test or Hypotheses()
    names = (_name(candidate), _name(baseline))
    chosen = opponents or default_opponents(*names)
    specs = (candidate, baseline, *chosen)
    clock = Clock(time_limit_ms)
    if out is not None:
        print(header(names, (_name(chosen[0]), _name(chosen[1])), test, hands, max_deals), file=out)
    deals: list[DealResult] = []
    state = evaluate([], test, max_deals=max_deals)
    while not state.verdict.is_final:
        deals.append(
            play_deal(specs, len(deals), seed=seed, hands=hands, clock=clock, secret=secret)
        )
        state = evaluate([d.difference for d in deals], test, max_deals=max_deals)
        if out is not None:
            print(deal_line(deals[-1], state, test), file=out)
            for game in deals[-1].games:
                for incident in game.incidents:
                    print(incident.line(), file=out)
    report = GauntletReport(
        *names, (_name(chosen[0]), _name(chosen[1])), test, hands, tuple(deals), state
    )
    if out is not None:
        print(verdict_line(report), file=out)
        print(incidents_line([g for d in deals for g in d.games]), file=out)
    return report


def _name(spec: BotSpec) -> str:
    return spec if isinstance(spec, str) else spec.name


def header(
    names: tuple[str, str], opponents: tuple[str, str], test: Hypotheses, hands: int, cap: int
) -> str:
    return (
        f"{names[0]} (candidate) against {names[1]} (baseline), opponents {opponents[0]} and "
        f"{opponents[1]}; δ = {test.delta:g} points per hand, α = {test.alpha:g}, "
        f"β = {test.beta:g}; up to {cap} deals, each 4 matches of {hands} hands"
    )


def deal_line(deal: DealResult, state: State, test: Hypotheses) -> str:
    """The deal's difference and the test after it: the running mean, its 95% interval, the
    evidence of a difference against its bound, and both Wald ratios against theirs."""
    return (
        f"deal {deal.deal + 1:>4}  Δ {deal.difference:+7.1f}  mean {state.mean:+7.1f}  "
        f"95% [{state.low:+7.1f}, {state.high:+7.1f}]  evidence {state.evidence:+6.2f} "
        f"(stops at {test.upper:+.2f})  Wald better {state.llr_better:+7.2f}, "
        f"worse {state.llr_worse:+7.2f} (no difference at {test.lower:+.2f})"
    )


def verdict_line(report: GauntletReport) -> str:
    s = report.state
    return (
        f"verdict: {s.verdict.text}: Δ = {s.mean:+.1f} points per hand, 95% interval "
        f"[{s.low:+.1f}, {s.high:+.1f}], after {s.deals} deals ({report.matches} matches)"
    )


def hypothesis_option(name: str, bounds: tuple[float, float], text: str) -> Callable[[F], F]:
    """The option setting one of :class:`Hypotheses`' fields, within the bounds it accepts."""
    return click.option(
        f"--{name}", type=click.FloatRange(*bounds), default=getattr(Hypotheses, name),
        show_default=True, help=text,
    )  # fmt: skip


@click.command("gauntlet")
@click.argument("candidate")
@click.argument("baseline")
@click.option(
    "--opponents", default=None,
    help="Two comma-separated house levels, module:Class specs or URLs "
    "[default: normal,normal; easy,easy when CANDIDATE or BASELINE is house Normal].",
)  # fmt: skip
@hypothesis_option("delta", DELTA_RANGE, "The least difference worth knowing, in points per hand.")
@hypothesis_option(
    "alpha", ALPHA_RANGE,
    "The error rate of calling a bot that is not better 'better' (or not worse 'worse').",
)  # fmt: skip
@hypothesis_option("beta", BETA_RANGE, "The error rate of missing a difference of delta.")
@click.option(
    "--max-deals", type=click.IntRange(*DEALS_RANGE), default=DEFAULT_MAX_DEALS,
    show_default=True, help="The cap on deals (each played as 4 matches).",
)  # fmt: skip
@click.option(
    "--hands", type=click.IntRange(min=1), default=DEFAULT_HANDS, show_default=True,
    help="Hands per match.",
)  # fmt: skip
@click.option("--seed", default="gauntlet", show_default=True, help="Seed of the deals.")
@secret_option
@time_limit_option
def gauntlet_command(
    candidate: str,
    baseline: str,
    *,
    opponents: str | None,
    delta: float,
    alpha: float,
    beta: float,
    max_deals: int,
    hands: int,
    seed: str,
    secret: str | None,
    time_limit_ms: int,
) -> None:
    """Is CANDIDATE better than BASELINE? Duplicate deals until a sequential test knows (each a
    house level, module:Class or URL)."""
    chosen = None
    if opponents is not None:
        first, *rest = (o.strip() for o in opponents.split(","))
        if len(rest) != 1:
            raise click.BadParameter("name two opponents", param_hint="--opponents")
        chosen = (first, rest[0])
    try:
        gauntlet(
            candidate,
            baseline,
            chosen,
            test=Hypotheses(delta, alpha, beta),
            max_deals=max_deals,
            hands=hands,
            seed=seed,
            out=sys.stdout,
            secret=secret,
            time_limit_ms=time_limit_ms,
        )
    except BAD_SPEC as e:
        raise click.ClickException(str(e)) from e

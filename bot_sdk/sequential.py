"""Is a candidate better than a baseline? A sequential test on duplicate deals that stops as soon
as the answer is known.

**The observation.** A gauntlet seats the candidate and the baseline across from each other,
the same two opponents beside them, and plays each deal in its four seat rotations. Over the
four, each of the two holds every seat's cards once, with the same kind of neighbour on each
side, so what the cards give and take is the same for both. One deal gives one number, the
**paired difference** ``Δ = (candidate's points − baseline's points) ÷ hands`` over its four
rotations, in points per hand (:func:`paired_difference`). The rotations of one deal share
their cards, so they are never counted as four observations; the deals are independent draws
from the gauntlet's secret, so the deals' differences are independent and identically
distributed, and a bot against a copy of itself gives differences centred on 0 (swapping the
two maps rotation ``r`` onto rotation ``r + 2``).

**The hypotheses**, in points per hand, with the owner's ``δ`` (the least difference worth
knowing), ``α`` and ``β``: "better" tests H0: Δ ≤ 0 against H1: Δ ≥ δ; "worse" tests H0: Δ ≥ 0
against H1: Δ ≤ −δ. Each is Wald's sequential probability ratio test for a normal mean, with
the variance unknown (the generalised SPRT that fishtest uses for chess engines): after ``n``
deals with mean ``x̄`` and variance ``s²`` (divided by ``n``), each hypothesis is given the
variance that fits it best, ``s² + (x̄ − μ)²`` about its own mean ``μ``, and the
log-likelihood ratio of H1 (``μ = δ``) to H0 (``μ = 0``) is
``(n/2)·ln((s² + x̄²) / (s² + (x̄ − δ)²))`` (and with ``−δ`` for "worse"). While ``δ`` is small
against the spread this is about ``n·(δ·x̄ − δ²/2) / s²``, Wald's ratio for a known variance;
that simpler form with ``s²`` put in for the variance is not safe: a few deals that happen to
agree make ``s²`` small and the ratio large, and with it a bot was called better than a copy
of itself about twice as often as ``α`` (simulated normal differences, ``δ`` a quarter to half
their standard deviation, verdicts from 5 deals).

**Stopping.** From :data:`MIN_DEALS` deals on, after every deal:

- "better" when the first ratio reaches ``ln((1 − β) / α)``, "worse" when the second does;
- "no difference" (of ``δ`` or more, either way) when both have fallen to ``ln(β / (1 − α))``;
- "no difference shown within the cap" when ``max_deals`` deals are in and neither stopped.

So a candidate no better than its baseline is called "better" with probability at most about
``α`` (Wald's bounds; the overshoot of the last deal makes it a little less), and one that is
``δ`` better is missed with probability at most about ``β``. The interval shown with ``Δ`` is
the usual 95% one, ``x̄ ± 1.96·s/√n``; it is not widened for having stopped early, so read it
as a summary, and the verdict as the test.

>>> test = Hypotheses(delta=10.0, alpha=0.05, beta=0.05)
>>> deals = [22.0, 18.5, 30.0, 12.0, 25.5, 19.0, 27.0, 16.0, 21.0, 24.0]
>>> state = evaluate(deals, test, max_deals=200)
>>> state.verdict, state.deals, round(state.mean, 2)
(<Verdict.BETTER: 'better'>, 10, 21.5)
>>> evaluate([0.0] * 10, test, max_deals=200).verdict
<Verdict.NO_DIFFERENCE: 'no_difference'>
>>> evaluate([3.0, -4.0], test, max_deals=200).verdict
<Verdict.RUNNING: 'running'>
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot_sdk.house import HOUSE_BOTS

T = TypeVar("T")

MIN_DEALS = 10
"""No verdict before this many deals: the variance needs some to be estimated well enough (at 5,
a bot against a copy of itself was called better up to 1.3 times as often as ``α``)."""
VARIANCE_FLOOR = 1e-6
"""The least variance used, in (points per hand)²: two bots that scored exactly alike on every
deal have none, and the test then says "no difference" instead of dividing by zero."""
Z95 = 1.96

ALPHA_RANGE = (0.001, 0.2)
BETA_RANGE = (0.01, 0.5)
DELTA_RANGE = (1.0, 100.0)
"""Points per hand."""
DEALS_RANGE = (MIN_DEALS, 1000)


class Verdict(enum.StrEnum):
    RUNNING = "running"
    """Neither test has stopped and the cap is not reached."""
    BETTER = "better"
    WORSE = "worse"
    NO_DIFFERENCE = "no_difference"
    """Both tests stopped on H0: the difference, if any, is smaller than ``δ``."""
    CAP = "cap"
    """The cap on deals came first: no difference shown within it."""

    @property
    def is_final(self) -> bool:
        return self is not Verdict.RUNNING

    @property
    def text(self) -> str:
        return VERDICT_TEXT[self]


VERDICT_TEXT = {
    Verdict.RUNNING: "still running",
    Verdict.BETTER: "better",
    Verdict.WORSE: "worse",
    Verdict.NO_DIFFERENCE: "no difference of δ or more",
    Verdict.CAP: "no difference shown within the cap",
}


class HypothesesError(ValueError):
    """``δ``, ``α`` or ``β`` outside the bounds a gauntlet accepts."""


@dataclass(frozen=True)
class Hypotheses:
    """The least difference worth knowing, ``delta`` (points per hand), and the error rates:
    ``alpha``, of calling a bot that is not better "better" (or not worse "worse"), and
    ``beta``, of missing a difference of ``delta``."""

    delta: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name, value, (low, high) in (
            ("delta", self.delta, DELTA_RANGE),
            ("alpha", self.alpha, ALPHA_RANGE),
            ("beta", self.beta, BETA_RANGE),
        ):
            if not low <= value <= high:
                raise HypothesesError(f"{name} must be between {low:g} and {high:g}, not {value:g}")

    @property
    def upper(self) -> float:
        """The log-likelihood ratio at which a test accepts its H1."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        """The log-likelihood ratio at which a test accepts its H0."""
        return math.log(self.beta / (1 - self.alpha))


@dataclass(frozen=True)
class State:
    """The test after ``deals`` deals: the mean difference and its 95% interval (points per
    hand), both log-likelihood ratios, and the verdict."""

    deals: int
    mean: float
    low: float
    high: float
    llr_better: float
    llr_worse: float
    verdict: Verdict


def table(candidate: T, baseline: T, opponents: tuple[T, T]) -> tuple[T, T, T, T]:
    """A gauntlet's table in seat order: the candidate and the baseline across from each other,
    an opponent between them on each side. Its rotation ``r`` (0 to 3) seats everyone ``r``
    seats on: ``table[-r:] + table[:-r]`` would be the same table turned the other way, so both
    the arena and the practice runner use ``seats[r:] + seats[:r]``.

    >>> table("new", "old", ("normal-1", "normal-2"))
    ('new', 'normal-1', 'old', 'normal-2')
    """
    return (candidate, opponents[0], baseline, opponents[1])


def default_opponents(candidate: str, baseline: str) -> tuple[str, str]:
    """The house levels that fill a gauntlet's other two seats when the owner names none: two
    Normal, or two Easy when the candidate or the baseline is itself house Normal (so that the
    opponents are never a copy of one of the two bots compared). A house bot may be named by
    its level (any case), its participant id ``house:<level>`` or its name ``house-<level>``;
    any other name is a bot of its own.

    >>> default_opponents("my_bot:V2", "my_bot:V1")
    ('normal', 'normal')
    >>> default_opponents("house:hard", "house:normal")
    ('easy', 'easy')
    >>> default_opponents("Normal", "easy")
    ('easy', 'easy')
    """
    if "normal" in (_house_level(candidate), _house_level(baseline)):
        return ("easy", "easy")
    return ("normal", "normal")


def _house_level(name: str) -> str | None:
    """The house level ``name`` names, or ``None`` for any other bot.

    >>> _house_level("house:Hard"), _house_level("house-easy"), _house_level("normal")
    ('hard', 'easy', 'normal')
    >>> _house_level("bot_123") is None
    True
    """
    level = name.lower().removeprefix("house:").removeprefix("house-")
    return level if level in HOUSE_BOTS else None


def paired_difference(candidate_points: int, baseline_points: int, hands: int) -> float:
    """One deal's observation: the candidate's points less the baseline's over the deal's four
    rotations, divided by ``hands``, the hands those rotations played (the same for both)."""
    if hands <= 0:
        raise ValueError(f"a deal of {hands} hands")
    return (candidate_points - baseline_points) / hands


def evaluate(differences: Sequence[float], test: Hypotheses, *, max_deals: int) -> State:
    """The test after the deals' ``differences``, in the order they were played."""
    n = len(differences)
    if n == 0:
        return State(0, 0.0, 0.0, 0.0, 0.0, 0.0, Verdict.RUNNING)
    mean = statistics.fmean(differences)
    spread = max(statistics.pvariance(differences), VARIANCE_FLOOR)
    better = _llr(n, mean, spread, test.delta)
    worse = _llr(n, mean, spread, -test.delta)
    variance = max(statistics.variance(differences) if n > 1 else 0.0, VARIANCE_FLOOR)
    half = Z95 * math.sqrt(variance / n) if n > 1 else math.inf
    verdict = Verdict.RUNNING
    if n >= MIN_DEALS:
        if better >= test.upper:
            verdict = Verdict.BETTER
        elif worse >= test.upper:
            verdict = Verdict.WORSE
        elif better <= test.lower and worse <= test.lower:
            verdict = Verdict.NO_DIFFERENCE
    if verdict is Verdict.RUNNING and n >= max_deals:
        verdict = Verdict.CAP
    return State(n, mean, mean - half, mean + half, better, worse, verdict)


def _llr(n: int, mean: float, spread: float, alternative: float) -> float:
    """The generalised log-likelihood ratio of a mean ``alternative`` to a mean of 0, each with
    the variance that fits it best (``spread`` is the differences' variance divided by ``n``)."""
    return n / 2 * math.log((spread + mean**2) / (spread + (mean - alternative) ** 2))


def trajectory(differences: Sequence[float], test: Hypotheses, *, max_deals: int) -> list[State]:
    """The test after each deal in turn (what a progress chart draws), up to its verdict."""
    states = []
    for n in range(1, len(differences) + 1):
        states.append(evaluate(differences[:n], test, max_deals=max_deals))
        if states[-1].verdict.is_final:
            break
    return states

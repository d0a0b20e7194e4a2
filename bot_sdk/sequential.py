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
knowing), ``α`` and ``β``: "better" is H1: Δ ≥ δ against H0: Δ ≤ 0, "worse" the mirror.

**Evidence of a difference** is Robbins' mixture ratio: the likelihood of the deals under a
difference spread around 0 as a normal of standard deviation ``δ``, over their likelihood
under no difference, ``−½·ln(1 + n·δ²/s²) + n²·δ²·x̄² / (2·s²·(s² + n·δ²))`` in logs, after
``n`` deals of mean ``x̄`` and sample variance ``s²``. Under no difference this ratio is a
martingale, so the chance that it ever reaches ``1/(2α)`` is at most ``2α`` (Ville's
inequality), shared between the two directions by symmetry: a bot that is not better is
called "better" with probability about ``α`` at most, however long the gauntlet runs and
however many times it looks. It grows with the difference, so a large one is known after a few
deals; Wald's ratio of ``δ`` to 0 (below), with the variance fitted to each hypothesis, tends
to 0 as ``x̄`` grows far beyond ``δ`` (both hypotheses fit equally badly), so on its own it
would wait longest for the largest differences.

**Evidence of no difference** is Wald's: the generalised log-likelihood ratio of Δ = δ to
Δ = 0, each hypothesis given the variance that fits it best (fishtest's generalised SPRT),
``(n/2)·ln((v + x̄²) / (v + (x̄ − δ)²))`` with ``v`` the variance divided by ``n``, and the same
with ``−δ``. When both have fallen to ``ln(β / (1 − α))`` the deals favour no difference over
a difference of ``δ`` either way, and a candidate ``δ`` better is missed with probability about
``β`` at most.

**Stopping.** From :data:`MIN_DEALS` deals on, after every deal:

- "better" (or "worse", by the sign of ``x̄``) when the evidence of a difference reaches
  ``ln(1/(2α))`` (2.30 at α = 0.05);
- "no difference" (of ``δ`` or more, either way) when both Wald ratios have fallen to
  ``ln(β / (1 − α))`` (−2.94 at the defaults);
- "no difference shown within the cap" when ``max_deals`` deals are in and neither stopped.

The variance is estimated from the deals, so these bounds are close, not exact: fewer deals
than :data:`MIN_DEALS` estimate it too poorly. docs/BENCHMARKS.md measures the rates on real
games. The interval shown with ``Δ`` is the usual 95% one, ``x̄ ± 1.96·s/√n``; it is not
widened for having stopped early, so read it as a summary, and the verdict as the test.

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
from collections.abc import Iterator, Sequence
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


VERDICT_TEXT: dict[str, str] = {
    Verdict.RUNNING: "still running",
    Verdict.BETTER: "better",
    Verdict.WORSE: "worse",
    Verdict.NO_DIFFERENCE: "no difference of δ or more",
    Verdict.CAP: "no difference shown within the cap",
}


class HypothesesError(ValueError):
    """``δ``, ``α`` or ``β`` outside the bounds a gauntlet accepts: which one (``field``), and
    what is wrong with it (``detail``)."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field} {detail}")
        self.field = field
        self.detail = detail


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
                raise HypothesesError(name, f"must be between {low:g} and {high:g}, not {value:g}")

    @property
    def upper(self) -> float:
        """The evidence of a difference (a log mixture ratio) at which the test says "better"
        or "worse"."""
        return math.log(1 / (2 * self.alpha))

    @property
    def lower(self) -> float:
        """The Wald ratio (of Δ = ±δ to Δ = 0) at or below which, both ways, the test says "no
        difference"."""
        return math.log(self.beta / (1 - self.alpha))


@dataclass(frozen=True)
class State:
    """The test after ``deals`` deals: the mean difference and its 95% interval (points per
    hand), the evidence of a difference, both Wald ratios (of Δ = δ and of Δ = −δ to Δ = 0),
    and the verdict."""

    deals: int
    mean: float
    low: float
    high: float
    evidence: float
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
    """The house level that fills both of a gauntlet's other seats when the owner names none:
    the first of Normal, Easy and Hard that is neither the candidate nor the baseline (so that
    the opponents are never a copy of one of the two bots compared). A house bot may be named
    by its level (any case), its participant id ``house:<level>`` or its name
    ``house-<level>``; any other name is a bot of its own.

    >>> default_opponents("my_bot:V2", "my_bot:V1")
    ('normal', 'normal')
    >>> default_opponents("house:hard", "house:normal")
    ('easy', 'easy')
    >>> default_opponents("Normal", "easy")
    ('hard', 'hard')
    """
    taken = {_house_level(candidate), _house_level(baseline)}
    level = next(level for level in ("normal", "easy", "hard") if level not in taken)
    return (level, level)


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
    last = State(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, Verdict.RUNNING)
    for n, mean, variance in _running(differences):
        last = _state(n, mean, variance, test, max_deals)
    return last


def trajectory(differences: Sequence[float], test: Hypotheses, *, max_deals: int) -> list[State]:
    """The test after each deal in turn (what a progress chart draws), up to its verdict; its
    last state is :func:`evaluate`'s of the same deals, to the last bit."""
    states = []
    for n, mean, variance in _running(differences):
        states.append(_state(n, mean, variance, test, max_deals))
        if states[-1].verdict.is_final:
            break
    return states


def _running(differences: Sequence[float]) -> Iterator[tuple[int, float, float | None]]:
    """After each deal: the deals so far, their mean and their sample variance (None for one
    deal), updated one deal at a time (Welford's method: exact enough, and linear)."""
    mean = spread = 0.0
    for n, x in enumerate(differences, start=1):
        step = x - mean
        mean += step / n
        spread += step * (x - mean)
        yield n, mean, spread / (n - 1) if n > 1 else None


def _state(n: int, mean: float, variance: float | None, test: Hypotheses, max_deals: int) -> State:
    if variance is None:  # no variance yet: no evidence either way, and no interval
        return State(n, mean, -math.inf, math.inf, 0.0, 0.0, 0.0, Verdict.RUNNING)
    variance = max(variance, VARIANCE_FLOOR)
    evidence = _mixture(n, mean, variance, test.delta)
    spread = max(variance * (n - 1) / n, VARIANCE_FLOOR)  # the variance divided by n
    better = _llr(n, mean, spread, test.delta)
    worse = _llr(n, mean, spread, -test.delta)
    half = Z95 * math.sqrt(variance / n)
    verdict = Verdict.RUNNING
    if n >= MIN_DEALS:
        if evidence >= test.upper:
            verdict = Verdict.BETTER if mean > 0 else Verdict.WORSE
        elif better <= test.lower and worse <= test.lower:
            verdict = Verdict.NO_DIFFERENCE
    if verdict is Verdict.RUNNING and n >= max_deals:
        verdict = Verdict.CAP
    return State(n, mean, mean - half, mean + half, evidence, better, worse, verdict)


def _mixture(n: int, mean: float, variance: float, scale: float) -> float:
    """The log of Robbins' mixture ratio: a difference drawn from ``N(0, scale²)`` against none,
    for ``n`` deals of ``mean`` with ``variance``."""
    spread = n * scale * scale
    return -0.5 * math.log1p(spread / variance) + (
        n * spread * mean * mean / (2 * variance * (variance + spread))
    )


def _llr(n: int, mean: float, spread: float, alternative: float) -> float:
    """The generalised log-likelihood ratio of a mean ``alternative`` to a mean of 0, each with
    the variance that fits it best (``spread`` is the differences' variance divided by ``n``)."""
    return n / 2 * math.log((spread + mean**2) / (spread + (mean - alternative) ** 2))

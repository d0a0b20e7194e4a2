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
the variance estimated from the deals so far (the generalised SPRT that fishtest uses for
chess engines): after ``n`` deals with mean ``x̄`` and sample variance ``s²``, the
log-likelihood ratio of H1 to H0 is ``n·(δ·x̄ − δ²/2) / s²`` (and with ``−δ`` for "worse").

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
>>> state = evaluate([22.0, 18.5, 30.0, 12.0, 25.5, 19.0, 27.0, 16.0], test, max_deals=200)
>>> state.verdict, state.deals, round(state.mean, 2)
(<Verdict.BETTER: 'better'>, 8, 21.25)
>>> evaluate([0.0] * 8, test, max_deals=200).verdict
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

T = TypeVar("T")

MIN_DEALS = 5
"""No verdict before this many deals: the variance needs a few to be estimated at all."""
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
    """The opponents a gauntlet seats when none are chosen: the first house bot of Normal,
    Easy and Hard that is neither the candidate nor the baseline, on both sides.

    >>> default_opponents("bot_new", "bot_old")
    ('house:normal', 'house:normal')
    >>> default_opponents("house:normal", "house:easy")
    ('house:hard', 'house:hard')
    """
    house = ("house:normal", "house:easy", "house:hard")
    opponent = next(h for h in house if h not in (candidate, baseline))
    return (opponent, opponent)


def paired_difference(candidate_points: int, baseline_points: int, hands: int) -> float:
    """One deal's observation: the candidate's points less the baseline's over the deal's four
    rotations, divided by ``hands``, the hands those rotations played (the same for both)."""
    if hands <= 0:
        raise ValueError(f"a deal of {hands} hands")
    return (candidate_points - baseline_points) / hands


def evaluate(differences: Sequence[float], test: Hypotheses, *, max_deals: int) -> State:
    """The test after the deals' ``differences``, in the order they were played."""
    last = State(0, 0.0, 0.0, 0.0, 0.0, 0.0, Verdict.RUNNING)
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
        return State(n, mean, -math.inf, math.inf, 0.0, 0.0, Verdict.RUNNING)
    variance = max(variance, VARIANCE_FLOOR)
    delta = test.delta
    better = n * (delta * mean - delta * delta / 2) / variance
    worse = n * (-delta * mean - delta * delta / 2) / variance
    half = Z95 * math.sqrt(variance / n)
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

"""The pages' band charts, scaled into an SVG viewBox that a template draws. Pure: numbers in,
coordinates out.

- The rating-history chart (the bot page): one version's μ after each rated match as a line,
  with its uncertainty band from μ − 3σ to μ + 3σ (the band's lower edge is the conservative
  rating, the ladder's order).
- The gauntlet chart (the gauntlet page): Δ, the mean difference, after each deal, with its
  95% interval as the band.

The vertical scale runs from the lowest lower edge to the highest upper edge (and, for a
gauntlet, takes in 0 and ±δ); the points are spread evenly left to right, oldest first.

>>> from arena.records import RatingPoint
>>> chart = rating_chart([RatingPoint("m1", 0.0, 16.0, ""), RatingPoint("m2", 4.0, 8.0, "")])
>>> (chart.low, chart.high)
(-48.0, 48.0)
>>> [(round(p.x), round(p.y)) for p in chart.points]
[(48, 112), (588, 104)]
>>> chart.settled.match_id  # the first match after which the rating is no longer provisional
'm2'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from arena.records import PROVISIONAL_SIGMA, RatingPoint
from bot_sdk.sequential import State

WIDTH = 600
HEIGHT = 240
LEFT = 48
"""Room left of the plot for the vertical axis's labels."""
RIGHT = 12
TOP = 12
BOTTOM = 28
"""Room below the plot for the horizontal axis's labels."""
LABEL_ABOVE = 4
"""How far above a guide its label's baseline is."""
LABEL_BELOW = 12
"""How far below a guide its label's baseline is, when it goes below (a line of text lower)."""
SINGLE_HALF_WIDTH = 8.0
"""Half the width of the band drawn for a history of one point (else it has no width)."""


@dataclass(frozen=True)
class Mark:
    """Where one point of a chart and its band's edges are drawn."""

    x: float
    y: float
    upper_y: float
    lower_y: float


@dataclass(frozen=True)
class Point(Mark):
    """One rated match: μ at ``y``, μ + 3σ at ``upper_y``, μ − 3σ (the conservative rating) at
    ``lower_y``, and the figures shown."""

    mu: float
    sigma: float
    match_id: str
    provisional: bool

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class DealMark(Mark):
    """A gauntlet after one deal: Δ at ``y``, its 95% interval's ends at the edges."""

    deal: int
    mean: float
    low: float
    high: float


M = TypeVar("M", bound=Mark)


@dataclass(frozen=True)
class Chart(Generic[M]):
    width: int
    height: int
    points: tuple[M, ...]
    low: float
    """The value at the bottom of the plot (the lowest μ − 3σ)."""
    high: float
    """The value at the top of the plot (the highest μ + 3σ)."""
    threshold: float = PROVISIONAL_SIGMA
    """σ above this is provisional (a rating chart)."""

    @property
    def left(self) -> float:
        return LEFT

    @property
    def right(self) -> float:
        return self.width - RIGHT

    @property
    def top(self) -> float:
        return TOP

    @property
    def bottom(self) -> float:
        return self.height - BOTTOM

    def y_of(self, value: float) -> float:
        """The height ``value`` is drawn at."""
        span = (self.high - self.low) or 1.0
        return self.top + (self.high - value) / span * (self.bottom - self.top)

    @property
    def line(self) -> str:
        """μ's polyline: its ``points`` attribute."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)

    @property
    def lower_line(self) -> str:
        """μ − 3σ's polyline (the band's lower edge, the ladder's order)."""
        return " ".join(f"{x:.1f},{p.lower_y:.1f}" for x, p in self._edge_points())

    @property
    def band(self) -> str:
        """The band's path: along μ + 3σ left to right, back along μ − 3σ, closed."""
        edges = self._edge_points()
        upper = [f"{x:.1f},{p.upper_y:.1f}" for x, p in edges]
        lower = [f"{x:.1f},{p.lower_y:.1f}" for x, p in reversed(edges)]
        return "M" + " L".join([*upper, *lower]) + " Z"

    def _edge_points(self) -> list[tuple[float, M]]:
        if len(self.points) == 1:
            only = self.points[0]
            return [(only.x - SINGLE_HALF_WIDTH, only), (only.x + SINGLE_HALF_WIDTH, only)]
        return [(p.x, p) for p in self.points]

    @property
    def settled(self) -> M | None:
        """The first point that is not provisional (σ at or below the threshold), if any: a
        rating chart's."""
        return next((p for p in self.points if not getattr(p, "provisional", False)), None)

    def guide_y(self, value: float) -> float | None:
        """The height of a horizontal guide at ``value`` (house Normal's 0), if it is in range."""
        return self.y_of(value) if self.low <= value <= self.high else None

    def guide_label_y(self, value: float) -> float | None:
        """Where the label of the guide at ``value`` goes, at the right end: just above the
        guide, or just below it when the line ends above it (so that the two do not cross)
        and there is room below."""
        guide = self.guide_y(value)
        if guide is None:
            return None
        below = guide + LABEL_BELOW
        ends_above = bool(self.points) and self.points[-1].y < guide
        return below if ends_above and below <= self.bottom else guide - LABEL_ABOVE


def _spread(chart: Chart[M], count: int) -> list[float]:
    """The x of each of ``count`` points, evenly from left to right (one: in the middle)."""
    if count == 1:
        return [(chart.left + chart.right) / 2]
    step = (chart.right - chart.left) / (count - 1)
    return [chart.left + i * step for i in range(count)]


def rating_chart(
    history: Sequence[RatingPoint], *, threshold: float = PROVISIONAL_SIGMA
) -> Chart[Point] | None:
    """The chart of a version's rating after each of its rated matches, oldest first; None
    when there are none."""
    if not history:
        return None
    low = min(p.mu - 3 * p.sigma for p in history)
    high = max(p.mu + 3 * p.sigma for p in history)
    frame: Chart[Point] = Chart(WIDTH, HEIGHT, (), low, high, threshold)
    points = tuple(
        Point(
            x=x,
            y=frame.y_of(p.mu),
            upper_y=frame.y_of(p.mu + 3 * p.sigma),
            lower_y=frame.y_of(p.mu - 3 * p.sigma),
            mu=p.mu,
            sigma=p.sigma,
            match_id=p.match_id,
            provisional=p.sigma > threshold,
        )
        for x, p in zip(_spread(frame, len(history)), history, strict=True)
    )
    return replace(frame, points=points)


def gauntlet_chart(
    states: Sequence[State], deals: Sequence[int], delta: float
) -> Chart[DealMark] | None:
    """The chart of a gauntlet's Δ after each counted deal (``deals``: their numbers, a void
    deal's left out) with its 95% interval (none before the second deal: drawn at Δ itself);
    None before the first deal."""
    if not states:
        return None
    ends = [(s.low, s.high) if math.isfinite(s.high) else (s.mean, s.mean) for s in states]
    low = min([-delta, *(lo for lo, _ in ends)])
    high = max([delta, *(hi for _, hi in ends)])
    frame: Chart[DealMark] = Chart(WIDTH, HEIGHT, (), low, high)
    marks = tuple(
        DealMark(
            x=x,
            y=frame.y_of(s.mean),
            upper_y=frame.y_of(hi),
            lower_y=frame.y_of(lo),
            deal=n,
            mean=s.mean,
            low=lo,
            high=hi,
        )
        for x, n, s, (lo, hi) in zip(_spread(frame, len(states)), deals, states, ends, strict=True)
    )
    return replace(frame, points=marks)

"""The rating-history chart: one version's μ after each rated match as a line, with its
uncertainty band from μ − 3σ to μ + 3σ (the band's lower edge is the conservative rating, the
ladder's order), scaled into an SVG viewBox that the bot page's template draws. Pure: numbers
in, coordinates out.

The vertical scale runs from the lowest lower edge to the highest upper edge; the points are
spread evenly left to right, one per rated match, oldest first.

>>> from arena.records import RatingPoint
>>> chart = rating_chart([RatingPoint("m1", 25.0, 8.0, ""), RatingPoint("m2", 27.0, 4.0, "")])
>>> (chart.low, chart.high)
(1.0, 49.0)
>>> [(round(p.x), round(p.y)) for p in chart.points]
[(48, 112), (588, 104)]
>>> chart.settled.match_id  # the first match after which the rating is no longer provisional
'm2'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.records import PROVISIONAL_SIGMA, RatingPoint

WIDTH = 600
HEIGHT = 240
LEFT = 48
"""Room left of the plot for the vertical axis's labels."""
RIGHT = 12
TOP = 12
BOTTOM = 28
"""Room below the plot for the horizontal axis's labels."""
SINGLE_HALF_WIDTH = 8.0
"""Half the width of the band drawn for a history of one point (else it has no width)."""


@dataclass(frozen=True)
class Point:
    """One rated match: where μ and the band's edges are drawn, and the figures shown."""

    x: float
    y: float
    """μ's height."""
    upper_y: float
    """μ + 3σ's height."""
    lower_y: float
    """μ − 3σ's height: the conservative rating."""
    mu: float
    sigma: float
    match_id: str
    provisional: bool

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    points: tuple[Point, ...]
    low: float
    """The value at the bottom of the plot (the lowest μ − 3σ)."""
    high: float
    """The value at the top of the plot (the highest μ + 3σ)."""
    threshold: float
    """σ above this is provisional."""

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

    def _edge_points(self) -> list[tuple[float, Point]]:
        if len(self.points) == 1:
            only = self.points[0]
            return [(only.x - SINGLE_HALF_WIDTH, only), (only.x + SINGLE_HALF_WIDTH, only)]
        return [(p.x, p) for p in self.points]

    @property
    def settled(self) -> Point | None:
        """The first point that is not provisional (σ at or below the threshold), if any."""
        return next((p for p in self.points if not p.provisional), None)

    def guide_y(self, value: float) -> float | None:
        """The height of a horizontal guide at ``value`` (the anchor's 25), if it is in range."""
        return self.y_of(value) if self.low <= value <= self.high else None


def rating_chart(
    history: Sequence[RatingPoint], *, threshold: float = PROVISIONAL_SIGMA
) -> Chart | None:
    """The chart of a version's rating after each of its rated matches, oldest first; None
    when there are none."""
    if not history:
        return None
    low = min(p.mu - 3 * p.sigma for p in history)
    high = max(p.mu + 3 * p.sigma for p in history)
    chart = Chart(WIDTH, HEIGHT, (), low, high, threshold)
    if len(history) == 1:
        xs = [(chart.left + chart.right) / 2]
    else:
        step = (chart.right - chart.left) / (len(history) - 1)
        xs = [chart.left + i * step for i in range(len(history))]
    points = tuple(
        Point(
            x=x,
            y=chart.y_of(p.mu),
            upper_y=chart.y_of(p.mu + 3 * p.sigma),
            lower_y=chart.y_of(p.mu - 3 * p.sigma),
            mu=p.mu,
            sigma=p.sigma,
            match_id=p.match_id,
            provisional=p.sigma > threshold,
        )
        for x, p in zip(xs, history, strict=True)
    )
    return Chart(WIDTH, HEIGHT, points, low, high, threshold)

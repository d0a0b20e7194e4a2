"""The rating-history chart: points scaled into an SVG viewBox, drawn by the bot page's template."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 600
HEIGHT = 200
PAD = 36


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    rating: float
    match_id: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    points: tuple[Point, ...]
    low: float
    high: float

    @property
    def path(self) -> str:
        """The polyline's ``points`` attribute."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)

    @property
    def bottom(self) -> float:
        return self.height - PAD / 2

    @property
    def top(self) -> float:
        return PAD / 2


def rating_chart(ratings: Sequence[tuple[str, float]]) -> Chart | None:
    """The chart of ``(match_id, rating)`` pairs, oldest first; None when there are none."""
    if not ratings:
        return None
    values = [r for _, r in ratings]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (WIDTH - 2 * PAD) / max(1, len(ratings) - 1)
    inner = HEIGHT - PAD
    points = tuple(
        Point(PAD + i * step, PAD / 2 + (high - r) / span * inner, r, match_id)
        for i, (match_id, r) in enumerate(ratings)
    )
    return Chart(WIDTH, HEIGHT, points, low, high)

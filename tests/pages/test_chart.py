"""The rating chart's scaling: μ's line and the μ ± 3σ band put into the SVG viewBox."""

from __future__ import annotations

import re

import pytest

from arena.records import RatingPoint
from service.pages import chart
from service.pages.chart import rating_chart


def history(*mus_sigmas: tuple[float, float]) -> list[RatingPoint]:
    return [RatingPoint(f"m{n}", mu, sigma, "") for n, (mu, sigma) in enumerate(mus_sigmas)]


def pairs(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in re.findall(r"(-?[\d.]+),(-?[\d.]+)", text)]


def flat(points: list[tuple[float, float]]) -> list[float]:
    return [c for point in points for c in point]


def test_no_history_no_chart() -> None:
    assert rating_chart([]) is None


def test_the_band_spans_the_scale_and_the_points_the_width() -> None:
    found = rating_chart(history((25.0, 8.0), (27.0, 4.0), (30.0, 2.0)))
    assert found is not None
    # the scale runs from the lowest μ − 3σ to the highest μ + 3σ
    assert (found.low, found.high) == (1.0, 49.0)
    assert (found.width, found.height) == (chart.WIDTH, chart.HEIGHT)
    top, bottom = chart.TOP, chart.HEIGHT - chart.BOTTOM
    assert (found.top, found.bottom) == (top, bottom)
    assert found.y_of(49.0) == top and found.y_of(1.0) == bottom
    assert found.y_of(25.0) == pytest.approx((top + bottom) / 2)
    # evenly spread from the left edge of the plot to its right edge, oldest first
    xs = [p.x for p in found.points]
    assert xs == [
        chart.LEFT,
        (chart.LEFT + chart.WIDTH - chart.RIGHT) / 2,
        chart.WIDTH - chart.RIGHT,
    ]
    for p in found.points:
        assert p.y == pytest.approx(found.y_of(p.mu))
        assert p.upper_y == pytest.approx(found.y_of(p.mu + 3 * p.sigma))
        assert p.lower_y == pytest.approx(found.y_of(p.mu - 3 * p.sigma))
        assert top <= p.upper_y < p.y < p.lower_y <= bottom  # higher values are drawn higher
    assert found.points[0].upper_y == top and found.points[0].lower_y == bottom
    assert [p.conservative for p in found.points] == [1.0, 15.0, 24.0]


def test_the_paths_are_the_points_coordinates() -> None:
    found = rating_chart(history((25.0, 8.0), (27.0, 4.0), (30.0, 2.0)))
    assert found is not None
    line = [(p.x, p.y) for p in found.points]
    assert flat(pairs(found.line)) == pytest.approx(flat(line), abs=0.05)
    lower_edge = [(p.x, p.lower_y) for p in found.points]
    assert flat(pairs(found.lower_line)) == pytest.approx(flat(lower_edge), abs=0.05)
    # the band: along the upper edge left to right, back along the lower edge, closed
    assert found.band.startswith("M") and found.band.endswith(" Z")
    upper = [(p.x, p.upper_y) for p in found.points]
    lower = [(p.x, p.lower_y) for p in reversed(found.points)]
    assert flat(pairs(found.band)) == pytest.approx(flat(upper + lower), abs=0.05)


def test_provisional_points_and_where_the_rating_settles() -> None:
    # points per hand relative to house Normal: a new bot starts at σ 40
    found = rating_chart(history((0.0, 40.0), (-3.0, 12.0), (-5.0, 10.0), (-6.0, 8.0)))
    assert found is not None
    assert [p.provisional for p in found.points] == [True, True, False, False]
    assert found.settled is found.points[2]  # σ at the threshold is no longer provisional
    assert found.threshold == 10.0
    stricter = rating_chart(history((0.0, 40.0), (-3.0, 12.0)), threshold=12.0)
    assert stricter is not None and stricter.settled is stricter.points[1]
    never = rating_chart(history((0.0, 40.0), (-2.0, 20.0)))
    assert never is not None and never.settled is None


def test_a_single_point_is_centred_with_a_band_of_some_width() -> None:
    found = rating_chart(history((25.0, 1.0)))
    assert found is not None
    (only,) = found.points
    assert only.x == (chart.LEFT + chart.WIDTH - chart.RIGHT) / 2
    corners = pairs(found.band)
    left, right = only.x - chart.SINGLE_HALF_WIDTH, only.x + chart.SINGLE_HALF_WIDTH
    assert [x for x, _ in corners] == pytest.approx([left, right, right, left])
    assert [y for _, y in corners] == pytest.approx(
        [found.top, found.top, found.bottom, found.bottom]
    )


def test_a_flat_history_still_scales() -> None:
    found = rating_chart(history((25.0, 0.0), (25.0, 0.0)))  # no span: drawn at the top
    assert found is not None
    assert {p.y for p in found.points} == {found.top}


def test_the_anchors_guide_only_when_in_range() -> None:
    found = rating_chart(history((30.0, 1.0), (32.0, 1.0)))
    assert found is not None
    assert found.guide_y(25.0) is None
    assert found.guide_y(31.0) == pytest.approx(found.y_of(31.0))


def test_the_guides_label_is_on_the_side_away_from_where_the_line_ends() -> None:
    rising = rating_chart(history((0.0, 5.0), (8.0, 2.0)))  # ends above 0
    assert rising is not None
    guide, label = rising.guide_y(0.0), rising.guide_label_y(0.0)
    assert guide is not None and label is not None and label > guide  # below the guide
    falling = rating_chart(history((0.0, 5.0), (-8.0, 2.0)))  # ends below 0
    assert falling is not None
    guide, label = falling.guide_y(0.0), falling.guide_label_y(0.0)
    assert guide is not None and label is not None and label < guide  # above it
    low = rating_chart(history((20.0, 1.0), (24.0, 1.0)))  # 0 out of range: no guide, no label
    assert low is not None and low.guide_label_y(0.0) is None
    edge = rating_chart(history((3.0, 1.0), (9.0, 1.0)))  # 0 at the very bottom: no room below
    assert edge is not None
    guide, label = edge.guide_y(0.0), edge.guide_label_y(0.0)
    assert guide is not None and label is not None and label < guide

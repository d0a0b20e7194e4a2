"""The re-rating benchmark records rated matches in a Redis of its own, re-rates them twice and
prints both timings."""

from __future__ import annotations

import pytest

from benchmarks import rerating


def test_it_re_rates_every_recorded_match_twice(capsys: pytest.CaptureFixture[str]) -> None:
    rerating.main(["--matches", "3"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("3 rated matches recorded")
    assert [line.split(":")[0] for line in out[1:]] == [
        "re-rating ratings of another scale",
        "re-rating ratings already on the current scale",
    ]

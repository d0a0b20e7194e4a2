"""The request sizes benchmark runs and prints both versions side by side (tiny sizes: this
checks that it works; the sizes themselves are held by tests/bot_sdk/test_protocol_versions.py)."""

from __future__ import annotations

import re

import pytest

from benchmarks import request_sizes


def test_it_prints_every_row_of_each_length_with_the_ratio_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    request_sizes.main(["--matches", "1", "--hands", "1,3"])
    lines = capsys.readouterr().out.splitlines()
    assert "gongzhu-bot/1" in lines[1] and "gongzhu-bot/2" in lines[1]
    rows = {name: values for name, *values in (re.split(r"\s{2,}", line) for line in lines[2:])}
    assert len(rows) == 2 * 6
    ratio, one, two = rows["3-hand match: request in hand 3, mean"]
    assert float(ratio) == pytest.approx(
        float(two.replace(",", "")) / float(one.replace(",", "")), abs=0.01
    )
    assert float(ratio) < 0.6  # hand 3 of gongzhu-bot/1 carries two earlier results

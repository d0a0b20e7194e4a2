"""The new-version benchmark runs end to end and prints a row for each change and start (a
few matches: this checks that it works, not how soon a version is placed)."""

from __future__ import annotations

import pytest

from benchmarks import new_version
from benchmarks.ladder import Entrant, field


def test_it_prints_a_row_for_each_change_and_start(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--seeds", "1", "--settle", "8", "--after", "8", "--wider", "20", "30", "--jobs", "1"]
    new_version.main(args)
    lines = capsys.readouterr().out.splitlines()
    for change in new_version.CHANGES:
        for start in ("seeded, σ at least 20", "seeded, σ at least 30", "fresh"):
            assert any(line.startswith(f"| {change} | {start} | 1 |") for line in lines)


def test_a_bots_true_places_tie_with_bots_of_equal_strength() -> None:
    order = field(16)
    assert new_version.true_places(order, "bot_p47") == (8, 8)
    better = [Entrant("bot_p100", 0.0) if e.bot_id == "bot_p100" else e for e in order]
    assert new_version.true_places(better, "bot_p100") == (1, 2)  # house Normal's equal


def test_settled_at_is_the_match_after_which_it_held_to_the_end() -> None:
    assert new_version.settled_at([(False, True, 1), (True, True, 2), (True, False, 3)], 0) == 1
    assert new_version.settled_at([(True, True, 1)], 0) == 0
    assert new_version.settled_at([(True, True, 1), (True, False, 2)], 1) is None

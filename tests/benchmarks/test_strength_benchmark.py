"""The strength benchmark times each house bot's play decisions, not only Hard's."""

from __future__ import annotations

from benchmarks import strength


def test_every_bot_of_a_pair_is_timed() -> None:
    settings = strength.Settings(budget_s=0.5, max_samples=None, rivalry=0.0, margin=0.0)
    result = strength.run_pair(("normal", "easy"), 2, "t", settings, jobs=1)
    names = [name for deal in result.deals for name, _, _ in deal.times]
    assert set(names) == {"normal", "easy"}
    assert all(wall >= 0 and cpu >= 0 for d in result.deals for _, wall, cpu in d.times)
    lines = strength.timing(result)
    assert [line.split("'s time")[0].strip() for line in lines] == ["Normal", "Easy"]

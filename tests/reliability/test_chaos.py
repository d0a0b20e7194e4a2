"""The chaos run (tests/reliability/chaos.py) as a test: ``pytest -m chaos tests/reliability``.
Deselected from the default run by ``-m "not chaos"`` in pyproject.toml: it takes minutes."""

from __future__ import annotations

import pytest

from tests.reliability.chaos import KILLS, chaos_run
from tests.reliability.figures import record


@pytest.mark.chaos
def test_a_tournament_survives_random_kills_with_exact_counts() -> None:
    run = chaos_run()
    figures = run.figures()
    record("chaos", **figures)
    print(figures)
    accounting = run.accounting
    assert accounting.planned == accounting.recorded == run.replays_verified == 40
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    assert 0 < len(run.kills) <= KILLS
    assert all(k.recorded_s is not None for k in run.kills if k.interrupted)

"""The matchmaking benchmark prints a row per ladder size, and refuses to time doubts that
differ from their definition."""

from __future__ import annotations

import pytest

from benchmarks import matchmaking


def test_a_row_per_size() -> None:
    rows = matchmaking.lines([8, 30], rounds=1)
    assert len(rows) == 4 and rows[2].startswith("| 8 |") and rows[3].startswith("| 30 |")


def test_doubts_that_differ_from_their_definition_stop_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matchmaking, "doubts", lambda members: {m.bot_id: 0.0 for m in members})
    with pytest.raises(SystemExit, match="differ"):
        matchmaking.lines([8], rounds=1)

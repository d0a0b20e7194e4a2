"""The environments' benchmark still runs and prints its figures (tiny sizes: this checks that
it works, not how fast anything is)."""

from __future__ import annotations

import pytest

from benchmarks import environments


def test_environments_prints_steps_per_second_of_each_contestant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    environments.main(["--rounds", "1", "--seconds", "0.2"])
    rows = {line[:27].strip(): line[27:].split() for line in capsys.readouterr().out.splitlines()}
    for contestant in environments.CONTESTANTS:
        steps, hands, decisions, per_hand = (
            float(x.replace(",", "")) for x in rows[contestant.name][:4]
        )
        assert steps > 0 and hands > 0 and decisions > 0
        assert per_hand >= 52 if contestant.worker != "gymnasium" else per_hand >= 13
    assert rows["referee play_random"][-3:] == ["+0%", "/", "+0%"]
    if environments.has_open_spiel():
        assert rows["open_spiel rl_environment"][4] == "1.00x"
        assert rows["PettingZoo AEC"][4].endswith("x")
    else:
        assert rows["PettingZoo AEC"][4] == "n/a"

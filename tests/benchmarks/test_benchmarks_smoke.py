"""The benchmark scripts still run and print their figures (tiny sizes: this checks that they
work, not how fast anything is)."""

from __future__ import annotations

import pytest

from benchmarks import arena, engine, flood, lateness, memory, pull, web


def test_arena_throughput_prints_in_process_and_http_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    arena.main(["--part", "throughput", "--rounds", "1", "--matches", "4", "--http-matches", "2"])
    out = capsys.readouterr().out
    assert "| matches, house bots in-process |" in out
    assert "| matches, HTTP bots on loopback |" in out
    assert "Referee's share of a match, HTTP bots" in out
    assert "cores busy" in out
    assert "faults 0" in out


def test_engine_prints_hands_per_second_of_each_contestant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine.main(["--rounds", "2", "--seconds", "0.2"])
    rows = {line[:28].strip(): line.split() for line in capsys.readouterr().out.splitlines()}
    for name in ("gongzhu pure Python", "gongzhu mypyc", "gongzhu mypyc play_random"):
        assert float(rows[name][-4].replace(",", "")) > 0  # the median hands per second
    if engine.has_open_spiel():
        assert rows["gongzhu mypyc"][-1].endswith("x")
        assert rows["open_spiel python"][-1] == "1.00x"
    else:
        assert rows["gongzhu mypyc"][-1] == "n/a"


def test_web_prints_every_endpoint_at_both_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    # the built-in load generator, so this runs where wrk is not installed too
    sizes = "--bots 8 --group 5 --small 6 --matches 12 --verify 3 --rounds 1 --single 2"
    web.main([*sizes.split(), "--seconds", "0.3", "--connections", "4", "--tool", "python"])
    out = capsys.readouterr().out
    assert "stored 12 matches" in out
    for name in web.ENDPOINTS:
        row = next(line for line in out.splitlines() if line.startswith(f"| {name} |"))
        assert row.endswith("| 0 |"), row  # no failed request
    assert "4 stored logs (the loaded one and others picked at random) checked" in out


def test_flood_prints_each_route_without_and_with_the_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    routes = ["replay JSON", "divergence JSON"]
    sizes = "--bots 4 --group 4 --matches 4 --seconds 0.3 --connections 2"
    flood.main([*sizes.split(), "--routes", *routes])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {route}" for route in routes]
    assert all(row.count("×**") == 2 for row in rows[1:]), rows


def test_memory_samples_the_worker_through_a_tournament(
    capsys: pytest.CaptureFixture[str],
) -> None:
    memory.main(["--matches", "5", "--checkpoints", "2"])
    out = capsys.readouterr().out
    assert "Worker memory over a 5-match tournament" in out
    assert "Growth from" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 3  # the header, then 0 matches and each checkpoint


def test_pull_holds_500_idle_pull_bots_and_plays_beside_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The web service as the Procfile runs it holds 500 idle pull bots' streams, all counted
    connected, while 4 more play a match (every decision ok, else the benchmark stops)."""
    pull.main(
        ["--rounds", "1", "--per-round", "4", "--idle", "500", "--active", "4", "--hands", "1"]
    )
    out = capsys.readouterr().out
    for transport in ("push", "pull (websocket)", "pull (stream)"):
        assert f"| {transport} | 4 |" in out
    assert "- connected (`/ready`): 504; 1 matches of 1 hands at once" in out
    assert "pull ÷ push p50" in out


def test_lateness_prints_a_row_per_count_of_busy_threads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lateness.main(["--threads", "0", "1", "--seconds", "0.3"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| 0", "| 1"]

"""The README's run command, end to end: its own Redis in a fresh data directory, the web
service, workers and cron under its supervision, the demo tournament, the standings it prints
and serves, and a clean stop on Ctrl-C (tests/e2e/test_supervision.py: crashes and SIGTERM)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import requests

from arena.redis_server import free_port
from tests.e2e.run_support import alive, descendants, processes_of

DEMO_TIMEOUT_S = 180
PRIVATE_FILES = [
    "arena.json", "demo-bots.json", "operator-token", "redis-password", "secret.key",
    "replay-key.pem", "redis/redis.conf",
]  # fmt: skip
"""The files of the data directory that hold tokens or secrets: each is 0600."""


def test_the_run_command_plays_the_demo_and_serves_its_standings(tmp_path: Path) -> None:
    port, redis_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "GONGZHU_"))}
    command = [sys.executable, "-m", "service", "run", "--data-dir", str(tmp_path / "data"),
               "--port", str(port), "--redis-port", str(redis_port), "--hands", "1"]  # fmt: skip
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    running: list[int] = []
    try:
        deadline = time.monotonic() + DEMO_TIMEOUT_S
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if "Ctrl-C stops it" in line:
                break
        output = "\n".join(lines)
        assert "Ctrl-C stops it" in output, output
        assert "Redis: its own" in output

        printed = re.findall(r"^\s+(\d)\s+(\S+)\s+(\d+)\s+(\d+)\s+([+-][\d.]+)$", output, re.M)
        assert len(printed) == 5, output
        assert {name for _, name, *_ in printed} >= {"house:normal", "house:easy", "demo-easy"}
        tournament_id = re.search(r"/tournaments/(\S+)", output)
        assert tournament_id, output
        base = f"http://127.0.0.1:{port}"
        served = requests.get(f"{base}/api/tournaments/{tournament_id[1]}/standings", timeout=10)
        rows = served.json()["standings"]
        assert [row["rank"] for row in rows] == [int(rank) for rank, *_ in printed]
        assert [row["matches"] for row in rows] == [int(m) for _, _, m, *_ in printed]
        page = requests.get(f"{base}/tournaments/{tournament_id[1]}", timeout=10)
        assert page.status_code == 200 and "demo-easy" in page.text
        replay = re.search(r"A replay:\s+\S+/matches/(\S+)", output)
        assert replay
        check = requests.post(f"{base}/api/matches/{replay[1]}/verify", timeout=30).json()
        assert check["ok"], check
        assert f"Play a match:    {base}/play" in output
        assert requests.get(f"{base}/play", timeout=10).status_code == 200
        password = (tmp_path / "data" / "redis-password").read_text().strip()
        assert password not in output  # the URL it prints does not show it
        with pytest.raises(redis.AuthenticationError):  # another local user, without it
            redis.Redis(port=redis_port).ping()
        assert redis.Redis(port=redis_port, password=password).ping()
        data = tmp_path / "data"
        assert f"Operator token: in {data / 'operator-token'}" in output
        for name in PRIVATE_FILES:
            mode = stat.S_IMODE((data / name).stat().st_mode)
            assert mode == 0o600, f"{name} is {oct(mode)}"
        _the_other_commands_find_this_arena(env, data, base)
        running = descendants(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    assert process.returncode == 128 + signal.SIGINT
    left = [pid for pid in {*running, *processes_of(tmp_path / "data")} if alive(pid)]
    assert len(running) >= 7 and left == [], "Ctrl-C left processes of the arena running"
    aof = [p.name for p in (tmp_path / "data" / "redis").iterdir()]
    assert any(name.startswith("appendonly") for name in aof), aof


def _gongzhu(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "service", *args]
    return subprocess.run(
        command, check=False, env=env, capture_output=True, text=True, timeout=120
    )


def _the_other_commands_find_this_arena(env: dict[str, str], data: Path, base: str) -> None:
    """With only GONGZHU_DATA_DIR (no GONGZHU_URL, no REDIS_URL), the client commands reach
    this arena's web service on its port and a worker this arena's Redis, password and all."""
    here = {**env, "GONGZHU_DATA_DIR": str(data)}
    ladder = _gongzhu(here, "standings")
    assert ladder.returncode == 0, ladder.stderr
    bots = requests.get(f"{base}/api/bots", timeout=10).json()["items"]
    assert bots and all(bot["id"] in ladder.stdout for bot in bots), ladder.stdout
    listed = _gongzhu(here, "tournaments", "list")
    assert listed.returncode == 0 and "done" in listed.stdout, listed.stderr
    # an operator command: the token comes from the data directory's token file
    create = ["tournaments", "create", "check", "--participant", bots[0]["id"], "--hands", "1"]
    made = _gongzhu(here, *create)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["status"] == "created"
    burst = [sys.executable, "-m", "workers", "worker", "--burst"]
    worker = subprocess.run(
        burst, check=False, env=here, capture_output=True, text=True, timeout=120
    )
    assert worker.returncode == 0, worker.stderr


def test_without_an_arena_the_commands_say_so(tmp_path: Path) -> None:
    """No settings file and no variables: every command stops with the reason, guessing no
    port (nothing is tried on 6379 or 8000)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "GONGZHU_"))}
    env["GONGZHU_DATA_DIR"] = str(tmp_path / "none")
    for command in (["standings"], ["tournaments", "list"], ["worker", "--burst"], ["cron"],
                    ["web"]):  # fmt: skip
        result = _gongzhu(env, *command)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert "no arena is configured" in result.stderr, (command, result.stderr)
        assert str(tmp_path / "none" / "arena.json") in result.stderr
        assert "Traceback" not in result.stderr


def test_run_on_a_taken_port_fails_at_once_with_the_reason(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "GONGZHU_"))}
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        started = time.monotonic()
        result = _gongzhu(env, "run", "--data-dir", str(tmp_path / "data"), "--port", str(port))
        took = time.monotonic() - started
    assert result.returncode == 1, result.stdout
    assert f"port {port}" in result.stderr and "another program holds" in result.stderr
    assert "Serving" not in result.stdout
    assert not (tmp_path / "data").exists()  # nothing was started, nothing made
    assert took < 20, took

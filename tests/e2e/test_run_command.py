"""The README's run command, end to end: its own Redis in a fresh data directory, the web
service, workers and cron under honcho, the demo tournament, the standings it prints and serves,
and a clean stop on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import requests

from workers.redis_server import free_port

DEMO_TIMEOUT_S = 180


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
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    assert process.returncode is not None
    assert not _alive(process.pid), "Ctrl-C left processes of the arena running"
    aof = [p.name for p in (tmp_path / "data" / "redis").iterdir()]
    assert any(name.startswith("appendonly") for name in aof), aof


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True

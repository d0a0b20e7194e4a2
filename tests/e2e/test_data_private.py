"""Everything in the data directory is its owner's only, under the README's run command: after a
tournament (Redis's append-only files and log, the archive's blobs, the logs, the settings and
keys), no file or directory is readable, writable or searchable by group or others; and a data
directory an older version left open is closed at the start, which the command says."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import requests

from arena.redis_server import free_port
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from tests.workers.pull_support import PullBot, connect, register_pull

TIMEOUT_S = 120
OPEN = 0o077
"""Group's and others' permissions."""


def _opened_by_an_older_version(data: Path) -> list[Path]:
    """A data directory as an older version left it: directories 0755, files 0644."""
    (data / "redis").mkdir(parents=True)
    (data / "logs").mkdir()
    log = data / "logs" / "arena.log"
    log.write_text("an older run's output\n")
    for path in (data, data / "redis", data / "logs"):
        path.chmod(0o755)
    log.chmod(0o644)
    return [data, data / "redis", data / "logs", log]


def test_after_a_tournament_nothing_in_the_data_directory_is_open_to_others(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    opened = _opened_by_an_older_version(data)
    port, redis_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "GONGZHU_"))}
    command = [sys.executable, "-m", "service", "run", "--no-demo", "--data-dir", str(data),
               "--port", str(port), "--redis-port", str(redis_port)]  # fmt: skip
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, process)
        operator = {"Authorization": f"Bearer {(data / 'operator-token').read_text().strip()}"}
        with ExitStack() as stack:  # a pull bot: the run command calls no loopback endpoint
            bot = register_pull(base, "private-bot")
            connect(stack, bot, make_app(LowestCard, bot.secret))
            _play_a_tournament(base, operator, bot)
        open_now = [
            f"{path.relative_to(data)} {oct(stat.S_IMODE(path.lstat().st_mode))}"
            for path in _everything(data)
            if path.lstat().st_mode & OPEN
        ]
        assert not open_now, open_now
        assert any((data / "archive").rglob("*")), "the tournament archived no log"
        assert any(p.name.startswith("appendonly") for p in (data / "redis").rglob("*"))
    finally:
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    said = next((line for line in output.splitlines() if "readable by their owner" in line), "")
    assert f"Made {len(opened)} files and directories in {data}" in said, output
    assert "logs/arena.log" in said, said


def _wait_ready(base: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        try:
            if requests.get(f"{base}/ready", timeout=5).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or busy starting
            pass
        time.sleep(0.3)
    raise AssertionError("the arena did not get ready")


def _play_a_tournament(base: str, operator: dict[str, str], bot: PullBot) -> None:
    """``bot`` and two house bots, one hand a match, played to the end and each replay read
    (the log archived, then cached in Redis)."""
    deadline = time.monotonic() + TIMEOUT_S
    mine = f"{base}/api/bots/{bot.id}"
    while requests.get(mine, headers=bot.auth, timeout=10).json()["status"] != "active":
        assert time.monotonic() < deadline, "the pull bot did not verify itself"
        time.sleep(0.2)
    made = requests.post(
        f"{base}/api/tournaments",
        json={
            "name": "private",
            "participants": [bot.id, "house:easy", "house:normal"],
            "format": {"matches_per_table": 1, "hands": 1},
        },
        headers=operator,
        timeout=10,
    )
    assert made.status_code == 201, made.text
    tid = made.json()["id"]
    assert requests.post(f"{base}/api/tournaments/{tid}/start", headers=operator, timeout=10).ok
    while (shown := requests.get(f"{base}/api/tournaments/{tid}", timeout=10).json())[
        "status"
    ] not in ("done", "done_with_failures"):
        assert time.monotonic() < deadline, shown
        time.sleep(0.3)
    assert shown["status"] == "done", shown
    matches = requests.get(f"{base}/api/matches?tournament={tid}", timeout=10).json()["items"]
    for match in matches:
        replay = requests.get(f"{base}/api/matches/{match['id']}/replay", timeout=10)
        assert replay.status_code == 200, replay.text


def _everything(root: Path) -> list[Path]:
    found = [root]
    for parent, directories, files in os.walk(root):
        found += [Path(parent, name) for name in directories + files]
    return found

"""``python -m bot_sdk serve``: loading a bot, refusing to run unsigned by accident, serving."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bot_sdk.cli import load_bot, main
from bot_sdk.client import BotUnreachableError, RemoteBot
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import BotInfo, ProtocolVersion
from tests.bot_sdk.bot_sdk_support import play_obs

ROOT = Path(__file__).resolve().parents[2]


def test_load_a_bot_from_a_module_or_a_file(tmp_path: Path) -> None:
    assert load_bot("bot_sdk.examples.lowest_card:LowestCard") is LowestCard
    bot_file = tmp_path / "my_first_bot.py"
    bot_file.write_text(
        "from bot_sdk import Bot\n\n"
        "class Mine(Bot):\n"
        "    def play(self, obs):\n"
        "        return obs.legal.highest()\n\n"
        "shared = Mine()\n"
    )
    loaded = load_bot(f"{bot_file}:Mine")
    assert isinstance(loaded, type) and loaded.__name__ == "Mine"
    assert type(load_bot(f"{bot_file}:shared")).__name__ == "Mine"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("bot_sdk.examples.lowest_card", "write module:Class"),
        ("bot_sdk.examples.lowest_card:Missing", "no bot class or instance named 'Missing'"),
        ("bot_sdk.examples.lowest_card:__doc__", "no bot class or instance named '__doc__'"),
        ("no/such/file.py:Bot", "no Python file no/such/file.py"),
    ],
)
def test_bad_targets_are_explained(target: str, message: str) -> None:
    with pytest.raises(click.BadParameter, match=message):
        load_bot(target)


def test_serving_without_a_secret_is_refused_unless_insecure() -> None:
    result = CliRunner().invoke(
        main,
        ["serve", "bot_sdk.examples.lowest_card:LowestCard", "--secret-env", "NO_SUCH_SECRET_VAR"],
        env={"NO_SUCH_SECRET_VAR": ""},
    )
    assert result.exit_code == 2
    assert "set NO_SUCH_SECRET_VAR to the bot's signing secret" in result.output
    assert "--insecure" in result.output


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_command_serves_a_bot() -> None:
    port = free_port()
    env = {**os.environ, "MY_BOT_SECRET": "cli-secret"}
    command = [sys.executable, "-m", "bot_sdk", "serve", "bot_sdk.examples.lowest_card:LowestCard",
               "--port", str(port), "--secret-env", "MY_BOT_SECRET"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        with RemoteBot(f"http://127.0.0.1:{port}/", "cli-secret", timeout_s=2) as remote:
            deadline = time.monotonic() + 15
            while True:
                try:
                    assert remote.hello() == BotInfo("lowest-card", "1.0", ProtocolVersion.V2)
                    break
                except BotUnreachableError:
                    assert process.poll() is None, process.communicate()[0]
                    assert time.monotonic() < deadline, "the server did not start"
                    time.sleep(0.05)
            assert remote.play(play_obs()) == play_obs().legal.lowest()
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]
    assert f"serving lowest-card 1.0 on http://127.0.0.1:{port} (signatures verified)" in output

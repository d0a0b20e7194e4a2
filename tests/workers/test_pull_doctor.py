"""The doctor on pull bots: through the arena's API and ``gongzhu doctor --bot``, a connected
SDK bot passes every check, one that answers what it should refuse fails the check that says
so, and one that is not connected is told to connect."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import requests
from click.testing import CliRunner

from arena.config import Config
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from service.app import create_app
from service.cli import main
from tests.pages.pages_support import serving
from tests.workers.crashes import wait_for
from tests.workers.pull_support import PullBot, connect, register_pull


@pytest.fixture
def web(config: Config) -> Iterator[str]:
    fast = dataclasses.replace(config, stream_heartbeat_s=0.5, handshake_timeout_s=1.0)
    with serving(create_app(fast)) as base:
        yield base


def _doctor(bot: PullBot) -> requests.Response:
    return requests.post(f"{bot.base}/api/bots/{bot.id}/doctor", headers=bot.auth, timeout=60)


def _live(store: Store, bot: PullBot) -> bool:
    return bot.id in store.mailbox.connected([bot.id])


def test_a_connected_sdk_pull_bot_passes_every_check(
    web: str, store: Store, stack: ExitStack
) -> None:
    bot = register_pull(web, "healthy")
    connect(stack, bot, make_app(LowestCard, bot.secret))
    wait_for(lambda: _live(store, bot), 10, "the bot to connect")
    report = _doctor(bot).json()
    assert report["ok"], report
    names = [check["name"] for check in report["checks"]]
    assert names == [
        "hello",
        "bad signature",
        "stale timestamp",
        "decisions",
        "repeated decision",
        "concurrent seats",
        "latency",
    ]
    assert "left unanswered" in report["checks"][1]["detail"]


def test_a_pull_bot_answering_unsigned_requests_fails_the_signature_checks(
    web: str, store: Store, stack: ExitStack
) -> None:
    bot = register_pull(web, "credulous")
    connect(stack, bot, make_app(LowestCard, None, verify_signatures=False))
    wait_for(lambda: _live(store, bot), 10, "the bot to connect")
    report = _doctor(bot).json()
    assert not report["ok"]
    failed = {check["name"]: check["detail"] for check in report["checks"] if not check["ok"]}
    assert set(failed) == {"bad signature", "stale timestamp"}
    assert "leave a request whose signature does not verify unanswered" in failed["bad signature"]
    # the same report card in the terminal, from the arena's doctor
    result = CliRunner().invoke(
        main, ["doctor", "--bot", bot.id, "--token", bot.token, "--arena", web]
    )
    assert result.exit_code == 1, result.output
    assert f"gongzhu doctor: pull bot {bot.id}" in result.output
    assert "bad signature      FAIL" in result.output
    assert result.output.rstrip().endswith("2 of 7 failed")


def test_a_pull_bot_not_connected_is_told_to_connect(web: str) -> None:
    bot = register_pull(web, "asleep")
    report = _doctor(bot).json()
    assert not report["ok"] and [c["name"] for c in report["checks"]] == ["hello"]
    assert "not connected" in report["checks"][0]["detail"]

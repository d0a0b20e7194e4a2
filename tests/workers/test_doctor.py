"""The doctor catches each way a bot written outside the SDK can be wrong, each a small
loopback server, and passes a good one; ``gongzhu doctor`` exits 1 on a failed check; the API
runs the same check for a bot's owner."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner

from arena.config import Config
from arena.doctor import examine
from service import create_app
from service.cli import main
from tests.outside_bot import Flaws, OutsideBot
from tests.service.service_support import bearer

SECRET = "doctor-secret"
LIMIT_MS = 300
"""The time limit of the slow bot's probe (it answers 100 ms later than this)."""
ROOMY_MS = 5000
"""The time limit of every other probe: a loaded machine's delays never reach it, so only the
flaw under test fails."""


Serve = Callable[..., OutsideBot]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts an :class:`OutsideBot` with the flaws given, signing with :data:`SECRET`."""
    started: list[OutsideBot] = []

    def start(flaws: Flaws | None = None) -> OutsideBot:
        bot = OutsideBot(secret=SECRET, flaws=flaws or Flaws())
        threading.Thread(target=bot.serve_forever, daemon=True).start()
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.shutdown()
        bot.server_close()


def failed(bot: OutsideBot, limit_ms: int) -> dict[str, str]:
    report = examine(bot.url, [SECRET], time_limit_ms=limit_ms, allow_private=True)
    return {check.name: check.detail for check in report.checks if not check.ok}


def test_a_good_bot_passes_every_check(serve: Serve) -> None:
    report = examine(serve().url, [SECRET], time_limit_ms=ROOMY_MS, allow_private=True)
    assert report.ok, report.text()
    names = [check.name for check in report.checks]
    assert names == [
        "hello",
        "bad signature",
        "stale timestamp",
        "decisions",
        "repeated decision",
        "concurrent seats",
        "latency",
    ]
    decisions = next(c for c in report.checks if c.name == "decisions").detail
    assert " pass, " in decisions and " expose, " in decisions and " play " in decisions
    latency = report.to_json()["latency_ms"]
    assert latency is not None and latency["max"] <= ROOMY_MS


@pytest.mark.parametrize(
    ("flaws", "fails", "says"),
    [
        (Flaws(accepts_bad_signatures=True), {"bad signature", "stale timestamp"}, "HTTP 200"),
        (Flaws(ignores_timestamps=True), {"stale timestamp"}, "10 minutes old"),
        (Flaws(answers_repeats_anew=True), {"repeated decision"}, "different answers"),
        (
            Flaws(delay_s=LIMIT_MS / 1000 + 0.1),
            {"decisions", "repeated decision", "concurrent seats", "latency"},
            "no complete answer within 300 ms",
        ),
        (Flaws(plays_illegally=True), {"decisions"}, "illegal: you do not hold"),
    ],
    ids=["bad-signatures", "stale-timestamps", "repeats", "slow", "illegal"],
)
def test_each_flaw_is_caught(serve: Serve, flaws: Flaws, fails: set[str], says: str) -> None:
    found = failed(serve(flaws), LIMIT_MS if flaws.delay_s else ROOMY_MS)
    assert set(found) == fails, found
    assert any(says in detail for detail in found.values()), found


def test_a_bot_that_is_down_fails_at_hello() -> None:
    bot = OutsideBot()
    url = bot.url
    bot.server_close()
    report = examine(url, [SECRET], allow_private=True, hello_timeout_s=1)
    assert not report.ok and [c.name for c in report.checks] == ["hello"]
    assert "connection refused" in report.checks[0].detail


def test_the_command_exits_1_on_a_failure_and_0_when_all_pass(serve: Serve) -> None:
    runner = CliRunner()
    args = ["doctor", "--secret", SECRET, "--time-limit-ms", str(ROOMY_MS), "--url"]
    good = runner.invoke(main, [*args, serve().url])
    assert good.exit_code == 0, good.output
    assert "all checks passed" in good.output
    bad = runner.invoke(main, [*args, serve(Flaws(ignores_timestamps=True)).url, "--json"])
    assert bad.exit_code == 1, bad.output
    assert '"ok": false' in bad.output and "stale timestamp" in bad.output
    not_a_url = runner.invoke(main, [*args, "bots.example/gongzhu"])
    assert not_a_url.exit_code == 2 and "is not an http:// or https:// URL" in not_a_url.output


def test_the_owner_asks_the_arena_for_the_report(config: Config, serve: Serve) -> None:
    limited = dataclasses.replace(config, endpoint_check_limit="2 per minute")
    client = create_app(limited).test_client()
    bot = serve()
    body = {"name": "careful", "endpoint": bot.url, "contact": "me@x.org"}
    made = client.post("/api/bots", json=body).json
    bot.secret = made["signing_secret"]
    path = f"/api/bots/{made['bot']['id']}/doctor"
    assert client.post(path).status_code == 401
    report = client.post(path, headers=bearer(made["token"]))
    assert report.status_code == 200, report.json
    assert report.json["ok"] is True and len(report.json["checks"]) == 7
    assert report.json["latency_ms"]["p50"] <= report.json["latency_ms"]["max"]
    assert client.post(path, headers=bearer(made["token"])).status_code == 200
    again = client.post(path, headers=bearer(made["token"]))
    assert again.status_code == 429 and again.json["error"] == "rate_limited"

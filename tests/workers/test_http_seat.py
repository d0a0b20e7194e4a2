"""HttpSeat against real bot servers on loopback: a healthy SDK bot, and each kind of fault."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status
from bot_sdk.server import make_app
from replays.log import TimeControl
from replays.verify import verify
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.workers_support import (
    answering,
    dripping,
    illegal_card,
    lowest_card,
    play_one,
    raw_server,
    seat0,
)

FAST = TimeControl(300, 200, 1)
"""500 ms in all for a decision; the first fault forfeits (the rest is auto-played)."""


def test_a_healthy_bot_is_asked_signed_with_decisions_on_one_kept_alive_connection() -> None:
    ports: set[str] = set()
    secret = "s3cret"
    sdk = make_app(LowestCard, secret)

    def app(environ: dict[str, Any], start: Any) -> Any:
        if environ["CONTENT_LENGTH"] and int(environ["CONTENT_LENGTH"]) > 1000:  # decisions
            ports.add(environ["REMOTE_PORT"])
        return sdk(environ, start)

    with running(app) as url:
        log = play_one(url, TimeControl(1000, 2000, 5))
    records = seat0(log)
    assert len(records) == 13
    assert all(r.status is Status.OK and r.request_sha256 for r in records)
    assert verify(log).ok, verify(log).discrepancy
    assert len(ports) == 1


def test_a_wrong_secret_is_an_error_fault() -> None:
    with running(make_app(LowestCard, "another")) as url:
        first = seat0(play_one(url, FAST))[0]
    assert first.status is Status.ERROR
    assert first.fault.startswith("HTTP 401")


def _first_fault(app_or_url: Any) -> Any:
    log = play_one(app_or_url, FAST)
    assert verify(log).ok, verify(log).discrepancy
    assert log.forfeited == (0,)
    first = seat0(log)[0]
    assert first.status is not Status.OK
    return first


def _slow(request: dict[str, Any]) -> bytes:
    time.sleep(1.0)
    return b'{"card": "2C"}'


@pytest.mark.parametrize(
    ("app", "status", "fault"),
    [
        (answering(_slow), Status.TIMEOUT, "no complete answer within 500 ms"),
        (answering(lambda r: b'{"card": "' + b"x" * 70_000 + b'"}'), Status.INVALID, "64 KiB"),
        (answering(lambda r: b"\xff\xfe garbage"), Status.INVALID, "not UTF-8"),
        (answering(lambda r: b"<html>oops</html>"), Status.INVALID, "JSON"),
        (
            answering(lambda r: b"Traceback: boom", "500 Internal Server Error"),
            Status.ERROR,
            "HTTP 500: Traceback: boom",
        ),
        (answering(illegal_card), Status.ILLEGAL, "do not hold"),
        (
            answering(lambda r: b"", "302 Found", Location="http://elsewhere.example/final"),
            Status.ERROR,
            "redirecting to http://elsewhere.example/final",
        ),
    ],
    ids=["slow", "huge", "garbage", "not-json", "http-500", "illegal", "redirect"],
)
def test_each_fault_has_its_status_and_the_fallback_is_played(
    app: Any, status: Status, fault: str
) -> None:
    with running(app) as url:
        first = _first_fault(url)
    assert first.status is status
    assert fault in first.fault
    if status is Status.TIMEOUT:
        assert 500 <= first.latency_ms < 900


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_dripping_bot_is_stopped_at_the_total_deadline(headers_too: bool) -> None:
    with raw_server(dripping(headers_too=headers_too)) as url:
        started = time.monotonic()
        first = _first_fault(url)
        elapsed = time.monotonic() - started
    assert first.status is Status.TIMEOUT
    # cut at the 500 ms total deadline: a timeout per read would never cut it (a byte every
    # 50 ms, 100,000 of them). The margin is for a loaded machine: a clean-clone CI run of the
    # suite (three processes on two cores) once cut it at 1,038 ms
    assert 500 <= first.latency_ms < 1500
    assert elapsed < 3  # one timed-out decision, then the rest is auto-played


def test_a_refused_connection_is_an_error_fault() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first = _first_fault(f"http://127.0.0.1:{port}/bot")
    assert first.status is Status.ERROR
    assert "connection refused" in first.fault


def test_a_private_address_is_refused_at_connect_time() -> None:
    with running(make_app(LowestCard, None, verify_signatures=False)) as url:
        log = play_one(url, FAST, allow_private=False)
    first = seat0(log)[0]
    assert first.status is Status.ERROR
    assert "resolves to [hidden], a private, loopback" in first.fault
    assert "127.0.0.1" not in first.fault  # a match's fault is public: the endpoint is not


def test_a_failed_notification_is_not_a_fault() -> None:
    with running(answering(lowest_card, notice_status="500 Internal Server Error")) as url:
        log = play_one(url, FAST)
    assert log.faults == (0, 0, 0, 0)

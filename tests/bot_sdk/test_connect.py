"""The pull transport (``python -m bot_sdk connect``) against a fake arena on loopback, over
both channels (the WebSocket and the NDJSON stream) where they behave alike: requests answered,
signatures, notices, reconnects and redelivery, verification, refusals, back-off, concurrency and
stopping; then what only the WebSocket does (answers on the socket, ``refused`` messages,
empty keep-alives, refusals that are not the arena's)."""

from __future__ import annotations

import logging
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from bot_sdk import Bot
from bot_sdk.cli import main
from bot_sdk.connect import CHANNELS, ArenaRefusedError, Channel, PullClient, backoff_delay
from bot_sdk.dispatch import BotSource
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Message, answer_of, decision_request, hello_request, read_decision
from bot_sdk.server import BotApp, make_app
from referee import Card, Observation, Rules
from tests.bot_sdk.bot_sdk_support import (
    VARIANT_PROFILES,
    RecordingBot,
    SlowBot,
    play_obs,
    record_match,
)
from tests.bot_sdk.fake_arena import (
    BOT_ID,
    BREAK,
    SECRET,
    STALL,
    TOKEN,
    WAIT_S,
    FakeArena,
    Refusal,
)

ROOT = Path(__file__).resolve().parents[2]
LOWEST_CARD = "bot_sdk.examples.lowest_card:LowestCard"
LOWEST_HELLO = {"name": "lowest-card", "protocol": "gongzhu-bot/2", "version": "1.0"}


@pytest.fixture(params=CHANNELS)
def channel(request: pytest.FixtureRequest) -> Channel:
    """Each test using it runs once per channel."""
    value: Channel = request.param
    return value


@pytest.fixture
def arena(channel: Channel) -> Iterator[FakeArena]:
    with FakeArena(channel=channel).running() as running:
        yield running


@pytest.fixture
def ws_arena() -> Iterator[FakeArena]:
    """For what only the WebSocket does."""
    with FakeArena(channel="websocket").running() as running:
        yield running


def via(arena: FakeArena) -> str:
    """How the answers reach the arena on the channel the arena's clients use."""
    return "websocket" if arena.channel == "websocket" else "post"


@dataclass
class Running:
    client: PullClient
    thread: threading.Thread
    errors: list[BaseException] = field(default_factory=list)
    expected_end: bool = False

    def finished(self, timeout: float = WAIT_S) -> BaseException | None:
        """Wait for ``run()`` to end by itself; what it raised."""
        self.expected_end = True
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the client is still running"
        return self.errors[0] if self.errors else None


def pull_client(
    arena: FakeArena,
    bot: BotSource = LowestCard,
    *,
    app: BotApp | None = None,
    insecure: bool = False,
    **options: Any,
) -> PullClient:
    app = app or make_app(bot, None if insecure else SECRET, verify_signatures=not insecure)
    settings: dict[str, Any] = {"token": TOKEN, "backoff_base_s": 0.05, "backoff_cap_s": 0.2,
                                "drain_s": 1.0, "channel": arena.channel}  # fmt: skip
    return PullClient(app, arena=arena.url, bot_id=BOT_ID, **settings | options)


@contextmanager
def connected(arena: FakeArena, bot: BotSource = LowestCard, **options: Any) -> Iterator[Running]:
    """A client running in a thread, stopped at the end."""
    client = pull_client(arena, bot, **options)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            client.run()
        except BaseException as exc:
            errors.append(exc)

    running = Running(client, threading.Thread(target=run, daemon=True), errors)
    running.thread.start()
    try:
        yield running
    finally:
        client.stop()
        running.thread.join(WAIT_S)
        assert not running.thread.is_alive()
    assert running.expected_end or not errors, f"run() raised {errors}"


def ask(
    obs: Observation, *, match_id: str = "m", decision_id: str = "m:1:0", limit_ms: int = 1000
) -> Message:
    return decision_request(
        obs, match_id=match_id, decision_id=decision_id, time_limit_ms=limit_ms, time_bank_ms=30_000
    )


def logged(caplog: pytest.LogCaptureFixture, text: str, level: int = logging.WARNING) -> int:
    return sum(1 for r in caplog.records if r.levelno >= level and text in r.getMessage())


def wait_until(condition: Callable[[], object], timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return bool(condition())


# -- answers ----------------------------------------------------------------------------------


def test_a_real_match_is_answered_and_its_notices_are_not(
    arena: FakeArena,
) -> None:
    RecordingBot.instances.clear()
    notices: list[str] = []
    # a whole match on one connection: keep-alives far enough apart (the bot takes the
    # connection for dead after three missed) that a busy machine does not break it
    arena.heartbeat_s = 1.0
    with connected(arena, RecordingBot):
        assert arena.ask(hello_request()) == {**LOWEST_HELLO, "name": "recording", "version": "1"}
        decisions = 0
        for message in record_match(VARIANT_PROFILES["pass_3"], seed=5):
            if message["type"] == "decision":
                expected = answer_of(LowestCard().decide(read_decision(message)))
                assert arena.ask(message) == expected  # RecordingBot plays like LowestCard
                decisions += 1
            else:
                notices.append(arena.offer(message))
        # The notices ran: each seat's bot saw its last hand_end, then match_end.
        assert wait_until(
            lambda: sum(b.seen[-1:] == ["match_end 2"] for b in RecordingBot.instances) == 4
        )
    assert decisions > 100
    assert len(notices) == 4 * 2 + 4 and not [a for a in arena.answers if a.id in notices]
    assert len(arena.answers) == decisions + 1
    assert {a.via for a in arena.answers} == {via(arena)}
    assert arena.ws_other == []  # the bot sends nothing but answers
    if arena.channel == "websocket":
        assert len({a.port for a in arena.answers}) == 1  # all on the one socket
    else:
        # A few kept-alive connections carried all the answers (a second one opens when an
        # answer is POSTed before the last one's connection is back in the pool).
        assert len({a.port for a in arena.answers}) < 5


def test_a_decision_is_answered_in_time_counted_from_when_its_line_was_read(
    arena: FakeArena,
) -> None:
    SlowBot.release.clear()
    try:
        with connected(arena, SlowBot):
            started = time.monotonic()
            answer = arena.ask(ask(play_obs(), limit_ms=300))
            elapsed = time.monotonic() - started
    finally:
        SlowBot.release.set()
    assert answer["card"] == "3C" and answer["note"].startswith("fallback: ")
    assert 0.15 <= elapsed < 0.6  # the 200 ms left after the margin, and little more


@pytest.mark.parametrize(
    ("secret", "age_s", "why"),
    [("not-the-secret", 0, "bad signature"), (SECRET, 3600, "stale"), (None, 0, "missing")],
)
def test_a_request_whose_signature_does_not_verify_is_dropped(
    arena: FakeArena, caplog: pytest.LogCaptureFixture, secret: str | None, age_s: int, why: str
) -> None:
    with connected(arena):
        bad = arena.offer(hello_request(), secret=secret, timestamp=int(time.time()) - age_s)
        assert arena.ask(hello_request()) == LOWEST_HELLO  # the stream goes on
        assert wait_until(lambda: logged(caplog, f"request {bad} not answered (unauthorized)"))
    assert logged(caplog, why)
    assert arena.answers_to(bad) == [] and arena.ws_other == []


def test_insecure_answers_unsigned_requests(arena: FakeArena) -> None:
    with connected(arena, insecure=True):
        assert arena.answer(arena.offer(hello_request(), secret=None)) == LOWEST_HELLO


def test_malformed_requests_and_junk_lines_are_logged_and_skipped(
    arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="bot_sdk.connect")
    with connected(arena):
        malformed = arena.offer(b'{"type": "decision"}', reply=True)
        arena.send("this is not JSON")
        arena.send("[1, 2]")
        arena.send({"type": "telemetry", "load": 0.5})  # a future line type
        arena.send({"type": "request", "id": "req-x", "reply": True, "headers": {}})  # no body
        assert arena.ask(hello_request()) == LOWEST_HELLO
        assert wait_until(lambda: logged(caplog, f"request {malformed} not answered (bad_request)"))
    assert arena.connections == 1
    assert arena.answers_to(malformed) == [] and arena.answers_to("req-x") == []
    assert logged(caplog, "not JSON") and logged(caplog, "not an object")
    assert logged(caplog, "without a string id")
    assert logged(caplog, "ignored a message of type 'telemetry'", logging.DEBUG)


def test_an_answer_the_arena_refuses_is_logged_with_its_message(
    arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    with connected(arena):
        request_id = "req-1"  # the arena's first id
        arena.refused_answers[request_id] = (409, "too late: the arena answered the fallback")
        assert arena.offer(ask(play_obs())) == request_id
        assert wait_until(lambda: logged(caplog, "too late: the arena answered the fallback"))
        assert arena.ask(hello_request()) == LOWEST_HELLO  # nothing crashed
    assert logged(caplog, f"request {request_id}: the arena did not take the answer (409 conflict)")
    assert [a.via for a in arena.answers_to(request_id)] == [via(arena)]
    assert arena.ws_other == []  # a refusal is not answered


class FailsInSeatZero(Bot):
    """Plays its lowest card, but raises in seat 0 (the SDK answers its fallback there)."""

    name = "fails-in-seat-zero"

    def play(self, obs: Observation) -> Card:
        if obs.seat == 0:
            raise RuntimeError("seat 0 is cursed")
        return obs.legal.lowest()


def test_each_match_is_logged_when_it_starts_and_when_it_ends_with_what_went_wrong(
    arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot_sdk.connect")
    rules = Rules.with_variants("pass_3", fixed_hands=1)
    messages = list(record_match(rules, seed=4, match_id="t_1-t1-d1-r1"))
    decisions = [m for m in messages if m["type"] == "decision"]
    plays = {s: sum(m["seat"] == s for m in decisions) for s in range(4)}
    fallbacks = sum(m["seat"] == 0 and m["trick_number"] > 0 for m in decisions)
    seat_1 = next(m for m in decisions if m["seat"] == 1)
    with connected(arena, FailsInSeatZero):
        for seat in range(4):
            hello = hello_request(match_id="t_1-t1-d1-r1", seat=seat, rules=rules)
            assert arena.ask(hello)["name"] == "fails-in-seat-zero"
        wrong = [arena.offer(seat_1, secret="not-the-secret") for _ in range(2)]
        for message in messages:
            if message["type"] == "decision":
                arena.ask(message)
            else:
                arena.offer(message)
        assert wait_until(lambda: logged(caplog, "match t_1-t1-d1-r1 over", logging.INFO) == 4)
    lines = [r.getMessage() for r in caplog.records if r.name == "bot_sdk.connect"]
    for seat in range(4):
        assert (
            f"match t_1-t1-d1-r1: seat {seat}, rules: pass_3; 1000 ms a decision, 30000 ms bank"
            in lines
        )
    outcome = messages[-1]["outcome"]
    ends = {
        int(line.split()[4]): line for line in lines if line.startswith("match t_1-t1-d1-r1 over")
    }
    for seat, line in ends.items():
        assert line.startswith(
            f"match t_1-t1-d1-r1 over: seat {seat} placed {outcome['places'][seat]} of 4 with "
            f"{outcome['totals'][seat]} (fixed_hands, 1 hand(s)); {plays[seat]} decision(s) "
            "answered"
        )
    assert ends[0].endswith(f", {fallbacks} with the bot's fallback")
    assert ends[1].endswith(", 2 request(s) left unanswered (faults in the arena)")
    assert ends[2].endswith(", no fallback, nothing left unanswered")
    assert all(f"request {w} not answered (unauthorized)" in " ".join(lines) for w in wrong)
    hint = "set GONGZHU_BOT_SECRET (or the variables --secret-env names) to it"
    assert sum(hint in line for line in lines) == 1  # said once, not for every request
    assert "gongzhu bots rotate-secret bot_1 --token TOKEN" in " ".join(lines)
    assert SECRET not in " ".join(lines)


# -- concurrency ------------------------------------------------------------------------------


class LateHandEnds(BotApp):
    """Takes its time over each hand_end before the bot is told."""

    def handle(
        self, headers: Mapping[str, str], body: bytes, received_at: float
    ) -> tuple[HTTPStatus, Message | None]:
        if b'"type":"hand_end"' in body:
            time.sleep(0.2)
        return super().handle(headers, body, received_at)


def test_a_seats_requests_reach_the_bot_in_the_streams_order(arena: FakeArena) -> None:
    RecordingBot.instances.clear()
    app = LateHandEnds(make_app(RecordingBot, SECRET).dispatcher, SECRET, clock=time.time,
                       tolerance_s=300)  # fmt: skip
    notices = [m for m in record_match(Rules(fixed_hands=1), seed=2) if m["type"] != "decision"]
    assert [m["type"] for m in notices] == ["hand_end"] * 4 + ["match_end"] * 4
    with connected(arena, app=app):
        for notice in notices:
            arena.offer(notice)
        assert wait_until(lambda: sum(len(b.seen) == 2 for b in RecordingBot.instances) == 4)
    assert sorted(b.seen for b in RecordingBot.instances if b.seen) == [
        [f"hand_end 1 seat {seat}", "match_end 1"] for seat in range(4)
    ]


class SlowFirst(Bot):
    """Its first decision thinks until released; every other one is instant."""

    name = "slow-first"
    entered: ClassVar[threading.Event] = threading.Event()
    release: ClassVar[threading.Event] = threading.Event()

    def play(self, obs: Observation) -> Card:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(5)
        return obs.legal.lowest()


def test_a_slow_decision_does_not_hold_up_the_next_request(arena: FakeArena) -> None:
    SlowFirst.entered.clear()
    SlowFirst.release.clear()
    with connected(arena, SlowFirst):
        slow = arena.offer(ask(play_obs(), match_id="a", decision_id="a:1:0", limit_ms=10_000))
        assert SlowFirst.entered.wait(WAIT_S)
        fast = arena.offer(ask(play_obs(), match_id="b", decision_id="b:1:0"))
        assert arena.answer(fast) == {"card": "3C"}
        assert arena.answers_to(slow) == []
        SlowFirst.release.set()
        assert arena.answer(slow) == {"card": "3C"}


class Pondering(Bot):
    """Thinks a little over each decision, so that many are in hand at once."""

    name = "pondering"

    def play(self, obs: Observation) -> Card:
        time.sleep(0.02)
        return obs.legal.lowest()


def test_many_answers_sent_at_once_all_arrive_whole(arena: FakeArena) -> None:
    with connected(arena, Pondering):
        ids = [
            arena.offer(ask(play_obs(), match_id=f"m{n}", decision_id=f"m{n}:1:0"))
            for n in range(40)
        ]
        assert arena.wait_for(lambda: len(arena.answers) == 40)
    assert [arena.answer(i) for i in ids] == [{"card": "3C"}] * 40
    assert {a.via for a in arena.answers} == {via(arena)} and arena.ws_other == []


# -- reconnects -------------------------------------------------------------------------------


class Fickle(Bot):
    """Plays another legal card at each call: only the dispatcher's cache can make a decision
    sent twice get the same answer."""

    name = "fickle"

    def __init__(self) -> None:
        self.calls = 0

    def play(self, obs: Observation) -> Card:
        self.calls += 1
        cards = sorted(obs.legal)
        return cards[self.calls % len(cards)]


def test_a_broken_stream_is_reconnected_at_once_and_the_request_sent_again_is_answered_again(
    arena: FakeArena,
) -> None:
    bot = Fickle()
    # A long back-off: only an immediate first reconnect is quick enough for this test.
    with connected(arena, bot, backoff_base_s=10):
        request_id = "req-1"
        arena.lost.add(request_id)  # its answer is "lost": the arena still waits for one
        assert arena.offer(ask(play_obs())) == request_id
        assert arena.wait_for(lambda: len(arena.answers_to(request_id)) == 1)
        arena.send(BREAK)
        assert arena.wait_for(lambda: len(arena.answers_to(request_id)) == 2)
        assert arena.connections == 2
    first, again = arena.answers_to(request_id)
    assert again.body == first.body
    assert bot.calls == 1


def test_a_silent_stream_is_taken_for_dead_after_three_heartbeats(arena: FakeArena) -> None:
    arena.heartbeat_s = 0.1
    # The client assumes 10 s heartbeats until the welcome says 0.1 s.
    with connected(arena, heartbeat_s=10):
        assert arena.ask(hello_request()) == LOWEST_HELLO
        arena.send(STALL)
        started = time.monotonic()
        assert arena.wait_for(lambda: arena.connections == 2)
        assert time.monotonic() - started < 2
        assert arena.ask(hello_request()) == LOWEST_HELLO


def test_keep_alives_keep_a_quiet_connection_open(
    arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    arena.heartbeat_s = 0.2  # not shorter: a loaded machine can hold a process back 0.15 s
    with connected(arena):
        assert arena.ask(hello_request()) == LOWEST_HELLO
        time.sleep(1.2)  # six keep-alives, and nothing else: twice three heartbeats
        assert arena.ask(hello_request()) == LOWEST_HELLO
    assert arena.connections == 1
    assert not logged(caplog, "ignored")  # a keep-alive is not a message to complain about


def test_bye_shutdown_reconnects(arena: FakeArena) -> None:
    with connected(arena):
        assert arena.wait_for(lambda: arena.connections == 1)
        arena.send({"type": "bye", "reason": "shutdown", "message": "the arena restarts"})
        assert arena.wait_for(lambda: arena.connections == 2)
        assert arena.ask(hello_request()) == LOWEST_HELLO


@pytest.mark.parametrize("reason", ["replaced", "retired"])
def test_bye_replaced_or_retired_stops_the_client_with_the_arenas_message(
    arena: FakeArena, reason: str
) -> None:
    with connected(arena) as running:
        assert arena.wait_for(lambda: arena.connections == 1)
        arena.send({"type": "bye", "reason": reason, "message": "another connection took over"})
        error = running.finished()
    assert isinstance(error, ArenaRefusedError)
    assert str(error) == f"the arena closed the connection ({reason}): another connection took over"
    assert arena.connections == 1 and len(arena.attempts) == 1


def test_the_back_off_doubles_up_to_its_cap_after_an_immediate_first_retry() -> None:
    rng = random.Random(7)
    for failures, full in [(1, 0), (2, 1), (3, 2), (4, 4), (5, 8), (6, 16), (7, 30), (60, 30)]:
        delays = [backoff_delay(failures, base_s=1, cap_s=30, rng=rng) for _ in range(50)]
        assert all(full / 2 <= d <= full for d in delays), (failures, delays)
        assert full == 0 or max(delays) - min(delays) > full / 10  # jittered


@pytest.mark.parametrize(("stable_after_s", "waits"), [(60, True), (0, False)])
def test_the_back_off_starts_again_after_a_connection_that_lasted(
    arena: FakeArena, stable_after_s: float, waits: bool
) -> None:
    arena.byes_after_welcome = 2
    with connected(arena, backoff_base_s=0.5, backoff_cap_s=0.5, stable_after_s=stable_after_s):
        assert arena.wait_for(lambda: arena.connections == 3)
    first, second, third = arena.attempts[:3]
    assert second - first < 0.2  # the first reconnect is at once
    assert (third - second >= 0.25) is waits  # the second waits, unless the first lasted


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (401, "unauthorized", "unknown or revoked token"),
        (403, "forbidden", "this token belongs to bot_2"),
        (404, "not_found", "no bot bot_1"),
        (409, "conflict", "bot_1 is a push bot: the arena POSTs to its endpoint"),
    ],
)
def test_a_permanent_refusal_stops_the_client_with_the_arenas_message(
    arena: FakeArena, status: int, error: str, message: str
) -> None:
    arena.refusals.append(Refusal(status, error, message))
    with connected(arena) as running:
        refused = running.finished()
    assert isinstance(refused, ArenaRefusedError)
    assert refused.status == status and refused.reason == error
    assert f"({status} {error}): {message}" in str(refused)
    assert len(arena.attempts) == 1


def test_a_wrong_token_is_refused_for_good(arena: FakeArena) -> None:
    with connected(arena, token="gzt_wrong") as running:
        refused = running.finished()
    assert isinstance(refused, ArenaRefusedError) and refused.status == 401
    assert "unknown or revoked token (check the bot's token" in str(refused)


def test_429_waits_for_retry_after(arena: FakeArena) -> None:
    arena.refusals.append(Refusal(429, "too_many_requests", "slow down", {"Retry-After": "1"}))
    with connected(arena, backoff_base_s=0.01):
        assert arena.wait_for(lambda: arena.connections == 1)
    first, second = arena.attempts[:2]
    assert 0.95 <= second - first < 2


def test_503_without_retry_after_backs_off_and_retries(arena: FakeArena) -> None:
    arena.refusals += [Refusal(503, "unavailable", "the arena is starting")] * 2
    with connected(arena, backoff_base_s=0.2, backoff_cap_s=0.2):
        assert arena.wait_for(lambda: arena.connections == 1)
        assert arena.ask(hello_request()) == LOWEST_HELLO
    first, second, third = arena.attempts[:3]
    assert second - first >= 0.1 and third - second >= 0.1  # never at once after a 503


# -- verification -----------------------------------------------------------------------------


def test_a_pending_bot_asks_the_arena_to_verify_it_over_its_connection(
    caplog: pytest.LogCaptureFixture, channel: Channel
) -> None:
    caplog.set_level(logging.INFO, logger="bot_sdk.connect")
    with FakeArena(status="pending", channel=channel).running() as arena, connected(arena):
        assert wait_until(lambda: logged(caplog, "verified: the bot is active", logging.INFO))
    assert arena.verify_calls == 1 and arena.status == "active"
    (hello,) = arena.answers
    assert hello.message == LOWEST_HELLO and hello.via == via(arena)


def test_an_active_bot_is_not_verified_again(arena: FakeArena) -> None:
    with connected(arena):
        assert arena.ask(hello_request()) == LOWEST_HELLO
    assert arena.verify_calls == 0


# -- stopping ---------------------------------------------------------------------------------


def test_stop_returns_at_once_between_keep_alives(arena: FakeArena) -> None:
    arena.heartbeat_s = 5
    with connected(arena) as running:
        assert arena.ask(hello_request()) == LOWEST_HELLO
        started = time.monotonic()
        running.client.stop()
        assert running.finished(timeout=1) is None
    assert time.monotonic() - started < 1
    assert arena.connections == 1


def test_stop_still_sends_the_answers_in_hand(arena: FakeArena) -> None:
    SlowFirst.entered.clear()
    SlowFirst.release.clear()
    with connected(arena, SlowFirst) as running:
        slow = arena.offer(ask(play_obs(), limit_ms=10_000))
        assert SlowFirst.entered.wait(WAIT_S)
        running.client.stop()
        threading.Timer(0.2, SlowFirst.release.set).start()
        assert running.finished() is None
        assert arena.wait_for(lambda: bool(arena.answers_to(slow)))
    assert [(a.message, a.via) for a in arena.answers_to(slow)] == [({"card": "3C"}, via(arena))]


def test_an_unknown_channel_is_refused() -> None:
    with pytest.raises(ValueError, match="channel must be one of websocket, stream"):
        PullClient(make_app(LowestCard, SECRET), arena="http://127.0.0.1:9", bot_id=BOT_ID,
                   token=TOKEN, channel="pigeon")  # type: ignore[arg-type]  # fmt: skip


# -- only on the WebSocket --------------------------------------------------------------------


def test_a_refused_message_is_logged_and_not_answered(
    ws_arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    arena = ws_arena
    with connected(arena):
        assert arena.ask(hello_request()) == LOWEST_HELLO
        arena.send({"type": "refused", "id": "req-9", "status": 413, "error": "too_large",
                    "message": "an answer is at most 64 KiB"})  # fmt: skip
        expected = (
            "request req-9: the arena did not take the answer (413 too_large): an answer is at "
            "most 64 KiB"
        )
        assert wait_until(lambda: logged(caplog, expected))
        assert arena.ask(hello_request()) == LOWEST_HELLO
    assert arena.connections == 1 and arena.ws_other == []


def test_an_empty_message_is_a_keep_alive(
    ws_arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    """The test sends the empty messages, not the fake's timer; once they stop, the silence
    ends the connection after three heartbeats."""
    caplog.set_level(logging.DEBUG, logger="bot_sdk.connect")
    arena = ws_arena
    arena.heartbeat_s, arena.keep_alives = 0.1, False
    with connected(arena):
        assert arena.wait_for(lambda: arena.connections == 1)
        for _ in range(10):  # 0.6 s: twice the silence that ends a connection
            arena.send(b"")  # an empty text message
            time.sleep(0.06)
        assert arena.connections == 1
        assert not logged(caplog, "ignored", logging.DEBUG)
        started = time.monotonic()
        assert arena.wait_for(lambda: arena.connections == 2)  # silence, then
        assert 0.2 <= time.monotonic() - started < 1


class _ByteByByte:
    """A socket whose sendall writes a few bytes at a time, letting other threads in between:
    sends that are not serialised interleave their frames."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def sendall(self, data: bytes) -> None:
        for start in range(0, len(data), 3):
            self._sock.sendall(data[start : start + 3])
            time.sleep(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def test_answers_sent_from_many_threads_at_once_do_not_interleave(
    ws_arena: FakeArena, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = ws_arena
    create_connection = socket.create_connection
    monkeypatch.setattr(
        socket, "create_connection", lambda *a, **k: _ByteByByte(create_connection(*a, **k))
    )
    with connected(arena, Pondering):
        ids = [
            arena.offer(ask(play_obs(), match_id=f"m{n}", decision_id=f"m{n}:1:0"))
            for n in range(40)
        ]
        assert arena.wait_for(lambda: len(arena.answers) == 40 or bool(arena.ws_other))
    assert arena.ws_other == [] and arena.connections == 1
    assert [arena.answer(i) for i in ids] == [{"card": "3C"}] * 40


def test_a_refusal_that_is_not_the_arenas_suggests_the_stream(ws_arena: FakeArena) -> None:
    arena = ws_arena
    page = b"<html><body>WebSockets are not allowed here</body></html>"
    arena.refusals.append(Refusal(403, "", "", raw=page))
    with connected(arena) as running:
        refused = running.finished()
    assert isinstance(refused, ArenaRefusedError) and refused.status == 403
    assert str(refused) == (
        f"the arena refused the connection (403): {page.decode()} (not the arena's answer: a "
        "proxy or firewall that blocks WebSockets? try --channel stream)"
    )


def test_a_web_page_instead_of_a_websocket_is_logged_and_retried(
    ws_arena: FakeArena, caplog: pytest.LogCaptureFixture
) -> None:
    arena = ws_arena
    arena.refusals.append(Refusal(200, "", "", raw=b"<html>a blog</html>"))
    with connected(arena, backoff_base_s=0.2):
        assert arena.ask(hello_request()) == LOWEST_HELLO
    assert logged(caplog, "answered 200, not a WebSocket: is --arena the arena's address?")
    first, second = arena.attempts[:2]
    assert second - first >= 0.2  # not at once


# -- the command ------------------------------------------------------------------------------


def test_connect_needs_a_token() -> None:
    result = CliRunner().invoke(
        main,
        ["connect", LOWEST_CARD, "--arena", "http://127.0.0.1:9",
         "--bot-id", BOT_ID],
        env={"GONGZHU_BOT_SECRET": SECRET, "GONGZHU_BOT_TOKEN": ""},
    )  # fmt: skip
    assert result.exit_code == 2
    assert "set GONGZHU_BOT_TOKEN (or --token) to the bot's API token" in result.output


def test_connect_exits_non_zero_with_the_arenas_message(arena: FakeArena) -> None:
    env = {**os.environ, "GONGZHU_BOT_SECRET": SECRET, "GONGZHU_BOT_TOKEN": "gzt_wrong"}
    command = [sys.executable, "-m", "bot_sdk", "connect", LOWEST_CARD,
               "--arena", arena.url, "--bot-id", BOT_ID, "--channel", arena.channel]  # fmt: skip
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=20, check=False
    )
    assert result.returncode == 1
    assert (
        "the arena refused the connection (401 unauthorized): unknown or revoked" in result.stderr
    )


def test_the_command_connects_answers_and_stops_on_sigterm(arena: FakeArena) -> None:
    env = {**os.environ, "GONGZHU_BOT_SECRET": SECRET, "GONGZHU_BOT_TOKEN": TOKEN}
    command = [sys.executable, "-m", "bot_sdk", "connect", LOWEST_CARD,
               "--arena", arena.url, "--bot-id", BOT_ID]  # fmt: skip
    if arena.channel == "stream":
        command += ["--channel", "stream"]  # the WebSocket is the default
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert arena.wait_for(lambda: arena.connections == 1, timeout=15)
        assert arena.ask(hello_request()) == LOWEST_HELLO
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=5)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, output
    assert f"connected to {arena.url} over {arena.channel}" in output
    assert "lowest-card 1.0, status active" in output
    assert "stopped" in output
    assert [a.via for a in arena.answers] == [via(arena)]


def test_serve_and_connect_share_their_bot_options() -> None:
    def names(command: str) -> set[str]:
        return {p.name for p in main.commands[command].params if p.name}  # type: ignore[attr-defined]

    shared = {"secret_envs", "insecure", "margin_ms", "no_fallback", "log_level"}
    assert shared <= names("serve") & names("connect")

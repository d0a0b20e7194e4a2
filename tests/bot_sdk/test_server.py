"""The bot server on a real loopback port: answers, signatures, validation, deadlines,
crashes and retries."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from bot_sdk import Bot, FunctionBot
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import (
    MalformedAnswerError,
    Message,
    decision_request,
    encode,
    hand_end_notice,
    hello_request,
    match_end_notice,
)
from bot_sdk.schemas import validate
from bot_sdk.server import MAX_BODY_BYTES, make_app
from bot_sdk.signing import sign
from referee import (
    Card,
    Game,
    HandResult,
    Observation,
    RandomPlayer,
    Rules,
    card_name,
)
from tests.bot_sdk.bot_sdk_support import RecordingBot, SlowBot, play_obs, running

SECRET = "test-secret"


def post(
    url: str,
    message: Any,
    *,
    secret: str | None = SECRET,
    timestamp: int | None = None,
    session: requests.Session | None = None,
) -> requests.Response:
    body = message if isinstance(message, bytes) else encode(message)
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers |= sign(secret, body, int(time.time()) if timestamp is None else timestamp)
    return (session or requests).post(url, data=body, headers=headers, timeout=10)


def ask(obs: Observation, *, decision_id: str = "m:1:0", time_limit_ms: int = 1000) -> Message:
    return decision_request(
        obs,
        match_id="m",
        decision_id=decision_id,
        time_limit_ms=time_limit_ms,
        time_bank_ms=30_000,
    )


@pytest.fixture
def lowest_card_url() -> Iterator[str]:
    with running(make_app(LowestCard, SECRET)) as url:
        yield url


# -- answers ---------------------------------------------------------------------------------


def test_hello(lowest_card_url: str) -> None:
    request = hello_request(match_id="m", seat=1, rules=Rules())
    response = post(lowest_card_url, request)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {"protocol": "gongzhu-bot/2", "name": "lowest-card", "version": "1.0"}
    validate("hello_answer", response.json())
    del request["protocols"]  # an arena that speaks gongzhu-bot/1 only
    response = post(lowest_card_url, request)
    assert response.json() == {"protocol": "gongzhu-bot/1", "name": "lowest-card", "version": "1.0"}


def test_expose_pass_and_play_are_answered(lowest_card_url: str) -> None:
    with requests.Session() as session:  # one keep-alive connection for all three
        expose = post(lowest_card_url, ask(Game(seed=1).observation(3)), session=session)
        assert expose.status_code == 200 and expose.json() == {"expose": []}
        pass_obs = Game(Rules.with_variants("pass_3"), seed=2).observation(1)
        passed = post(lowest_card_url, ask(pass_obs, decision_id="m:1:1"), session=session)
        highest = [card_name(c) for c in sorted(pass_obs.hand)[-3:]]
        assert passed.status_code == 200 and passed.json() == {"pass": highest}
        played = post(lowest_card_url, ask(play_obs(), decision_id="m:1:2"), session=session)
        assert played.status_code == 200 and played.json() == {"card": "3C"}
    for kind, response in (("expose", expose), ("pass", passed), ("play", played)):
        validate(f"{kind}_answer", response.json())


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secret", "age_s", "message"),
    [
        (None, 0, "missing X-Gongzhu-Timestamp header"),
        ("not-the-secret", 0, "bad signature"),
        (SECRET, 3600, "stale timestamp"),
    ],
)
def test_unsigned_or_badly_signed_requests_get_401(
    lowest_card_url: str, secret: str | None, age_s: int, message: str
) -> None:
    response = post(
        lowest_card_url, hello_request(), secret=secret, timestamp=int(time.time()) - age_s
    )
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert message in response.json()["message"]


def test_the_server_clock_is_injectable() -> None:
    app = make_app(LowestCard, SECRET, clock=lambda: 1_000_000)
    with running(app) as url:
        assert post(url, hello_request(), timestamp=1_000_000 - 200).status_code == 200
        assert post(url, hello_request()).status_code == 401


def test_rotation_accepts_both_secrets() -> None:
    with running(make_app(LowestCard, ["new-secret", "old-secret"])) as url:
        for secret in ("new-secret", "old-secret"):
            assert post(url, hello_request(), secret=secret).status_code == 200
        assert post(url, hello_request(), secret="older-secret").status_code == 401


def test_a_name_the_arena_would_refuse_fails_at_start() -> None:
    nameless = FunctionBot(play=lambda obs: obs.legal.lowest(), name="")
    with pytest.raises(MalformedAnswerError, match='"name" must be a string of 1 to 64'):
        make_app(nameless, SECRET)


def test_signatures_can_be_switched_off_for_local_testing() -> None:
    with running(make_app(LowestCard, None, verify_signatures=False)) as url:
        assert post(url, hello_request(), secret=None).status_code == 200
    with pytest.raises(ValueError, match="signing secret"):
        make_app(LowestCard, None)


def invalid_rules(message: Message) -> Message:
    message["observation"]["rules"]["variants"] = ["no_exposure", "sequential_exposure"]
    return message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "a request is a JSON object, not list"),
        ({"protocol": "gongzhu-bot/0", "type": "hello"}, "this bot speaks gongzhu-bot/1"),
        ({"protocol": "gongzhu-bot/1", "type": "bye"}, "unknown request type 'bye'"),
        ({**hello_request(), "seat": 7}, "seat: 7 is greater than the maximum of 3"),
        (invalid_rules(ask(play_obs())), "cannot be combined"),
    ],
)
def test_malformed_requests_get_400(lowest_card_url: str, body: Any, message: str) -> None:
    response = post(lowest_card_url, body)
    assert response.status_code == 400
    assert response.json()["error"] == "bad_request"
    assert message in response.json()["message"]


def test_only_post_is_served(lowest_card_url: str) -> None:
    response = requests.get(lowest_card_url, timeout=10)
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json()["error"] == "method_not_allowed"


def test_huge_bodies_get_413(lowest_card_url: str) -> None:
    response = post(lowest_card_url, b" " * (MAX_BODY_BYTES + 1))
    assert response.status_code == 413 and response.json()["error"] == "too_large"


# -- deadlines and failures ------------------------------------------------------------------


@pytest.fixture
def slow_bot() -> Iterator[type[SlowBot]]:
    SlowBot.release.clear()
    SlowBot.calls.clear()
    yield SlowBot
    SlowBot.release.set()


def test_a_slow_bot_is_answered_with_the_fallback_within_the_deadline(
    slow_bot: type[SlowBot], caplog: pytest.LogCaptureFixture
) -> None:
    with running(make_app(slow_bot, SECRET, margin_ms=200)) as url:
        started = time.monotonic()
        response = post(url, ask(play_obs(), time_limit_ms=600))
        elapsed = time.monotonic() - started
    note = "fallback: the bot did not answer within 400 ms"
    assert response.status_code == 200 and response.json() == {"card": "3C", "note": note}
    assert 0.35 < elapsed < 0.6  # the bot's budget is 600 - 200 ms; the limit is 600 ms
    assert "did not answer within 400 ms; answered the fallback" in caplog.text


def test_the_timeout_fallback_can_be_switched_off(slow_bot: type[SlowBot]) -> None:
    with running(make_app(slow_bot, SECRET, fallback_on_timeout=False)) as url:
        threading.Timer(0.3, slow_bot.release.set).start()
        started = time.monotonic()
        response = post(url, ask(play_obs(), time_limit_ms=100))
        assert time.monotonic() - started >= 0.3
    assert response.json() == {"card": "AS"}  # the bot's own, late answer


class CrashingBot(Bot):
    name = "crashing"

    def play(self, obs: Observation) -> Card:
        raise ZeroDivisionError("the bot divided by zero")


class IllegalBot(Bot):
    name = "illegal"

    def play(self, obs: Observation) -> Card:
        return next(c for c in range(52) if c not in obs.hand)


@pytest.mark.parametrize(
    ("bot", "logged", "note"),
    [
        (
            CrashingBot,
            "ZeroDivisionError: the bot divided by zero",
            "fallback: the bot raised ZeroDivisionError: the bot divided by zero",
        ),
        (
            IllegalBot,
            "IllegalAnswerError",
            "fallback: the bot's move was refused: you do not hold 2C",
        ),
    ],
)
def test_a_failing_bot_is_answered_with_the_fallback_and_a_note_saying_why(
    bot: type[Bot], logged: str, note: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR), running(make_app(bot, SECRET)) as url:
        response = post(url, ask(play_obs()))
    assert response.status_code == 200 and response.json()["card"] == "3C"
    assert response.json()["note"].startswith(note)
    assert "the bot failed; answered the fallback" in caplog.text
    assert logged in caplog.text  # with the traceback


def test_the_error_fallback_can_be_switched_off() -> None:
    with running(make_app(CrashingBot, SECRET, fallback_on_error=False)) as url:
        response = post(url, ask(play_obs()))
    assert response.status_code == 500
    assert response.json() == {
        "error": "bot_error",
        "message": "ZeroDivisionError: the bot divided by zero",
    }


# -- retries, instances, notifications -------------------------------------------------------


class RandomBot(Bot):
    name = "random"

    def play(self, obs: Observation) -> Card:
        return random.choice(list(obs.legal))


def test_a_retried_decision_gets_the_same_answer() -> None:
    obs = play_obs()
    with running(make_app(RandomBot, SECRET)) as url:
        answers = {post(url, ask(obs, decision_id="m:1:5")).content for _ in range(8)}
        fresh = {post(url, ask(obs, decision_id=f"m:1:{i}")).content for i in range(6, 30)}
    assert len(answers) == 1
    assert len(fresh) > 1  # the bot is random: only the id makes the answers equal


def test_a_retry_during_the_first_attempt_waits_for_the_same_call(
    slow_bot: type[SlowBot],
) -> None:
    responses: list[bytes] = []
    with running(make_app(slow_bot, SECRET)) as url:
        threads = [
            threading.Thread(target=lambda: responses.append(post(url, ask(play_obs())).content))
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        slow_bot.release.set()
        for thread in threads:
            thread.join(5)
    assert responses == [b'{"card":"AS"}'] * 3
    assert slow_bot.calls == [2]  # the bot was asked once


def finished_game() -> Game:
    game = Game(Rules(fixed_hands=1), seed=3)
    players = [RandomPlayer(s) for s in range(4)]
    while not game.is_over():
        for decision in game.pending:
            game.push(players[decision.seat].decide(decision))
    return game


def test_notifications_reach_the_seats_own_instance() -> None:
    RecordingBot.instances.clear()
    game = finished_game()
    assert game.outcome is not None
    with running(make_app(RecordingBot, SECRET)) as url:
        assert post(url, hello_request()).status_code == 200  # answered by a prototype
        assert post(url, ask(play_obs())).status_code == 200  # match m, seat 2
        other = decision_request(
            play_obs(), match_id="n", decision_id="n:1:0", time_limit_ms=1000, time_bank_ms=0
        )
        assert post(url, other).status_code == 200  # match n, seat 2
        view = game.observation(2)
        notice = hand_end_notice(game.results[0], view, match_id="m")
        response = post(url, notice)
        assert response.status_code == 204 and response.content == b""
        assert post(url, match_end_notice(game.outcome, match_id="m", seat=2)).status_code == 204
        assert post(url, ask(play_obs(), decision_id="m:2:0")).status_code == 200
    prototype, m_seat_2, n_seat_2, m_seat_2_again = RecordingBot.instances
    assert prototype.seen == []
    assert m_seat_2.seen == ["play 1", "hand_end 1 seat 2", "match_end 1"]
    assert n_seat_2.seen == ["play 1"]
    assert m_seat_2_again.seen == ["play 1"]  # match_end released the old instance


def test_a_shared_instance_serves_every_match() -> None:
    RecordingBot.instances.clear()
    bot = RecordingBot()
    with running(make_app(bot, SECRET)) as url:
        post(url, ask(play_obs()))
        post(url, decision_request(play_obs(), match_id="n", decision_id="n:1:0",
                                   time_limit_ms=1000, time_bank_ms=0))  # fmt: skip
    assert RecordingBot.instances == [bot] and bot.seen == ["play 1", "play 1"]


class BrokenNotificationsBot(LowestCard):
    def hand_end(self, result: HandResult, observation: Observation) -> None:
        raise RuntimeError("hand_end broke")


def test_a_failing_notification_is_logged_and_still_204(caplog: pytest.LogCaptureFixture) -> None:
    game = finished_game()
    with running(make_app(BrokenNotificationsBot, SECRET)) as url:
        response = post(url, hand_end_notice(game.results[0], game.observation(0), match_id="m"))
    assert response.status_code == 204
    assert "the bot's hand_end failed" in caplog.text and "hand_end broke" in caplog.text

"""RemoteBot: a whole match of the referee played against a served bot, and its failures."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from wsgiref.types import StartResponse, WSGIEnvironment

import pytest
import requests

from bot_sdk.client import (
    BotHTTPError,
    BotTimeoutError,
    BotUnreachableError,
    RemoteBot,
)
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import BotInfo, Fault, MalformedAnswerError, ProtocolVersion, WrongKindError
from bot_sdk.server import BotApp, make_app
from referee import CardSet, Game, Outcome, Play, RandomPlayer, Rules
from tests.bot_sdk.bot_sdk_support import RecordingBot, SlowBot, is_last_play, play_obs, running

SECRET = "client-secret"


@pytest.fixture
def lowest_card_url() -> Iterator[str]:
    with running(make_app(LowestCard, SECRET)) as url:
        yield url


def test_a_whole_match_against_a_served_bot() -> None:
    """Seat 1 is a RemoteBot; the others are the same bot class in process. The remote seat must
    play exactly as the local one would, every notification must arrive, and the match ends."""
    RecordingBot.instances.clear()
    rules = Rules.with_variants("pass_3", "target_500")
    with running(make_app(RecordingBot, SECRET)) as url, RemoteBot(url, SECRET) as remote:
        assert remote.hello(rules=rules) == BotInfo("recording", "1", ProtocolVersion.V2)
        local = LowestCard()
        game = Game(rules, seed=8)
        decisions = 0
        while not game.is_over():
            for decision in game.pending:
                obs = game.observation(decision.seat)
                final = game.observation(1) if is_last_play(game) else None
                if decision.seat == 1:
                    move = remote.decide(obs)
                    assert move == local.decide(obs)
                    decisions += 1
                else:
                    move = local.decide(obs)
                game.push(move)
                if final is not None:
                    remote.hand_end(game.results[-1], final)
        assert isinstance(game.outcome, Outcome)
        remote.match_end(game.outcome)
    _, seat_1 = RecordingBot.instances
    hands = game.outcome.hands_played
    assert hands >= 2 and decisions > 13 * hands
    assert seat_1.seen.count("match_end " + str(hands)) == 1
    assert [s for s in seat_1.seen if s.startswith("hand_end")] == [
        f"hand_end {n} seat 1" for n in range(1, hands + 1)
    ]


def test_play_expose_and_pass_cards_are_the_bot_interface(lowest_card_url: str) -> None:
    with RemoteBot(lowest_card_url, SECRET) as remote:
        assert remote.play(play_obs()) == play_obs().legal.lowest()
        assert remote.expose(Game(seed=1).observation(3)) == CardSet()
        pass_obs = Game(Rules.with_variants("pass_3"), seed=2).observation(0)
        assert remote.pass_cards(pass_obs) == CardSet.of(sorted(pass_obs.hand)[-3:])
        with pytest.raises(ValueError, match="must play now, not expose"):
            remote.expose(play_obs())


def test_decision_ids_are_unique_within_a_match(lowest_card_url: str) -> None:
    sent: list[bytes] = []
    session = requests.Session()
    session.hooks["response"].append(lambda response, **_: sent.append(response.request.body))
    with RemoteBot(lowest_card_url, SECRET, match_id="m-1", session=session) as remote:
        for _ in range(3):
            remote.decide(play_obs())
    ids = [json.loads(body)["decision_id"] for body in sent]
    assert ids == ["m-1:1:0", "m-1:1:1", "m-1:1:2"]


def test_a_wrong_secret_is_an_http_fault(lowest_card_url: str) -> None:
    with RemoteBot(lowest_card_url, "wrong") as remote, pytest.raises(BotHTTPError) as caught:
        remote.hello()
    assert caught.value.status == 401 and caught.value.fault is Fault.HTTP_STATUS
    assert "bad signature" in str(caught.value)


def test_an_unreachable_bot_is_a_connection_fault() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free once closed: nothing listens there
    with RemoteBot(f"http://127.0.0.1:{port}/", SECRET) as remote:
        with pytest.raises(BotUnreachableError) as caught:
            remote.decide(play_obs())
        assert caught.value.fault is Fault.CONNECTION


def test_a_slow_bot_is_a_timeout_fault() -> None:
    SlowBot.release.clear()
    try:
        app = make_app(SlowBot, SECRET, fallback_on_timeout=False)
        with running(app) as url, RemoteBot(url, SECRET, timeout_s=0.2) as remote:
            started = time.monotonic()
            with pytest.raises(BotTimeoutError, match=r"did not answer within 0\.2 s") as caught:
                remote.decide(play_obs())
            assert time.monotonic() - started < 1
            assert caught.value.fault is Fault.TIMEOUT
            SlowBot.release.set()
    finally:
        SlowBot.release.set()


def fixed_answer(body: bytes) -> Callable[[WSGIEnvironment, StartResponse], Iterable[bytes]]:
    """A bot endpoint that answers every request with ``body``."""

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]

    return app


@pytest.mark.parametrize(
    ("body", "error"),
    [(b'{"expose": []}', WrongKindError), (b"<html>oops</html>", MalformedAnswerError)],
)
def test_bad_answers_raise_the_protocol_errors(body: bytes, error: type[Exception]) -> None:
    with (
        running(fixed_answer(body)) as url,
        RemoteBot(url, None) as remote,
        pytest.raises(error),
    ):
        remote.decide(play_obs())


def test_notifications_never_raise(caplog: pytest.LogCaptureFixture) -> None:
    game = Game(Rules(fixed_hands=1), seed=3)
    players = [RandomPlayer(s) for s in range(4)]
    while not game.is_over():
        for decision in game.pending:
            game.push(players[decision.seat].decide(decision))
    assert game.outcome is not None
    with caplog.at_level(logging.WARNING), RemoteBot("http://127.0.0.1:9/", SECRET) as remote:
        remote.match_end(game.outcome)  # the seat is not known yet: nothing to send
        remote.hand_end(game.results[0], game.observation(0))
        remote.match_end(game.outcome)
    assert "its seat was never known" in caplog.text
    assert caplog.text.count("notice to http://127.0.0.1:9/ failed") == 2


def test_an_unsigned_client_for_a_local_insecure_bot() -> None:
    app: BotApp = make_app(LowestCard, None, verify_signatures=False)
    with running(app) as url, RemoteBot(url, None) as remote:
        assert remote.decide(play_obs()) == Play(2, play_obs().legal.lowest())

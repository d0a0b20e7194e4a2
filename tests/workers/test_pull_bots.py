"""Pull bots against the real web app on loopback and a real Redis: what the stream sends, how
answers are taken, refused as late or refused to another bot's token, reconnection and
replacement, and who counts as connected. (Matches and tournaments with pull bots on real
workers: tests/workers/test_pull_tournaments.py.)"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import simple_websocket

from arena.config import Config
from arena.pull_transport import PullTransport
from arena.store import Store
from arena.transport import DeadlineError, UnreachableError
from bot_sdk.connect import PullClient
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import encode, hello_request
from bot_sdk.server import make_app
from bot_sdk.signing import verify
from service.app import create_app
from tests.pages.pages_support import serving
from tests.service.service_support import bearer
from tests.workers.crashes import wait_for
from tests.workers.pull_support import PullBot, RawStream, register_pull, stream

HELLO_ANSWER = b'{"name":"pully","protocol":"gongzhu-bot/1","version":"2.0"}'


@pytest.fixture
def web(config: Config) -> Iterator[str]:
    fast = dataclasses.replace(config, stream_heartbeat_s=0.3, handshake_timeout_s=3.0)
    with serving(create_app(fast)) as base:
        yield base


class Asking:
    """A request posted to a pull bot in a thread, as a worker asks: its outcome when done."""

    def __init__(self, store: Store, bot: PullBot, body: bytes, seconds: float) -> None:
        self.transport = PullTransport(store.mailbox, bot.id, store.signing_secrets(bot.id))
        self.outcome: Any = None
        self.took_s = 0.0
        self._thread = threading.Thread(target=self._ask, args=(body, seconds), daemon=True)
        self._thread.start()

    def _ask(self, body: bytes, seconds: float) -> None:
        start = time.monotonic()
        try:
            self.outcome = self.transport.post(body, seconds)
        except (DeadlineError, UnreachableError) as error:
            self.outcome = error
        self.took_s = time.monotonic() - start

    def result(self) -> Any:
        self._thread.join(10)
        assert not self._thread.is_alive()
        return self.outcome


def test_a_pull_bot_is_sent_the_push_body_signed_and_its_answer_is_used(
    web: str, store: Store
) -> None:
    bot = register_pull(web, "pully")
    body = encode(hello_request())
    with stream(bot) as opened:
        asking = Asking(store, bot, body, 3.0)
        event = opened.next()
        assert event["reply"] is True
        assert event["body"].encode() == body  # byte for byte what a push bot is POSTed
        verify(bot.secret, event["headers"], event["body"].encode(), now=time.time())
        assert bot.answer(event["id"], HELLO_ANSWER).status_code == 204
        assert asking.result() == (200, None, HELLO_ANSWER)
        exchange = asking.transport.exchange  # measured: the line sent, the answer taken
        assert exchange.sent_ns is not None and exchange.received_ns is not None
        assert exchange.sent_ns <= exchange.received_ns
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
        assert (exchange.bytes_sent, exchange.bytes_received) == (len(line), len(HELLO_ANSWER))
        assert exchange.connection is exchange.connect_ns is exchange.tls_ns is None  # not ours
        assert exchange.retried is None
        again = bot.answer(event["id"], HELLO_ANSWER)  # the first answer is final
        assert again.status_code == 409
        assert "answered already" in again.json()["message"]


def test_an_answer_after_the_deadline_is_refused_and_the_asker_has_timed_out(
    web: str, store: Store
) -> None:
    bot = register_pull(web, "late")
    with stream(bot) as opened:
        asking = Asking(store, bot, encode(hello_request()), 0.4)
        event = opened.next()
        outcome = asking.result()
        assert isinstance(outcome, DeadlineError) and "was connected" in str(outcome)
        assert 0.35 < asking.took_s < 1.0  # the deadline is the asker's, not the bot's
        exchange = asking.transport.exchange
        assert exchange.sent_ns is not None and exchange.received_ns is None
        late = bot.answer(event["id"], HELLO_ANSWER)
    assert late.status_code == 409
    assert "deadline passed" in late.json()["message"]


def test_a_request_waiting_is_sent_again_after_a_reconnect_with_the_same_id(
    web: str, store: Store
) -> None:
    bot = register_pull(web, "flaky")
    asking = Asking(store, bot, encode(hello_request()), 5.0)  # offered while not connected
    with stream(bot) as first:
        sent = first.next()
    with stream(bot) as second:  # the first connection dropped without answering
        again = second.next()
        assert (again["id"], again["body"]) == (sent["id"], sent["body"])
        assert bot.answer(again["id"], HELLO_ANSWER).status_code == 204
    assert asking.result() == (200, None, HELLO_ANSWER)


def test_a_bot_that_never_connects_is_unreachable_saying_so(web: str, store: Store) -> None:
    bot = register_pull(web, "absent")
    outcome = Asking(store, bot, encode(hello_request()), 0.3).result()
    assert isinstance(outcome, UnreachableError) and "not connected" in str(outcome)


def test_a_newer_connection_replaces_the_older_one(web: str) -> None:
    bot = register_pull(web, "twice")
    with stream(bot) as first, stream(bot):
        bye = first.next("bye")
        assert bye["reason"] == "replaced"


def test_a_token_never_receives_or_answers_another_bots_requests(web: str, store: Store) -> None:
    mine, theirs = register_pull(web, "mine"), register_pull(web, "theirs")
    wrong = RawStream(theirs, token=mine.token)
    assert wrong.response.status_code == 403
    with stream(mine) as opened, stream(theirs) as their_stream:
        asking = Asking(store, theirs, encode(hello_request()), 2.0)
        event = their_stream.next()
        # mine's stream gets nothing of theirs: only keep-alives while theirs is asked
        with pytest.raises(queue.Empty):
            opened.next(timeout=1.0)
        assert opened.keepalives >= 2
        # mine's token cannot answer through theirs, nor name their request on its own path
        stolen = requests.post(
            f"{web}/api/bots/{theirs.id}/answers/{event['id']}",
            data=HELLO_ANSWER,
            headers={**mine.auth, "Content-Type": "application/json"},
            timeout=5,
        )
        assert stolen.status_code == 403
        assert mine.answer(event["id"], HELLO_ANSWER).status_code == 404
        assert theirs.answer(event["id"], HELLO_ANSWER).status_code == 204
        assert asking.result() == (200, None, HELLO_ANSWER)


def test_only_a_live_pull_bot_may_stream(web: str, store: Store) -> None:
    push = requests.post(
        f"{web}/api/bots",
        json={"name": "pushy", "contact": "t@example.com", "endpoint": "http://127.0.0.1:9/"},
        timeout=5,
    ).json()
    refused = RawStream(PullBot(web, push["bot"]["id"], push["token"], ""))
    assert refused.response.status_code == 409
    assert "push bot" in refused.response.json()["message"]
    bot = register_pull(web, "leaving")
    with stream(bot) as opened:
        retired = requests.post(f"{web}/api/bots/{bot.id}/retire", headers=bot.auth, timeout=5)
        assert retired.status_code == 200
        assert opened.next("bye")["reason"] == "retired"
    assert RawStream(bot).response.status_code == 409


def test_registration_names_the_transport_it_needs(web: str) -> None:
    def refused(body: dict[str, Any]) -> str:
        response = requests.post(
            f"{web}/api/bots", json={"contact": "t@example.com", **body}, timeout=5
        )
        assert response.status_code == 422, response.text
        return json.dumps(response.json())

    assert "has no endpoint" in refused(
        {"name": "a", "transport": "pull", "endpoint": "http://127.0.0.1:9/"}
    )
    assert "connects out" in refused({"name": "b"})
    assert "push" in refused({"name": "c", "transport": "carrier-pigeon"})


def test_the_bot_counts_as_connected_while_its_stream_is_open(web: str) -> None:
    bot = register_pull(web, "present")

    def shown() -> Any:
        return requests.get(f"{web}/api/bots/{bot.id}", headers=bot.auth, timeout=5).json()

    assert shown()["connected"] is False and shown()["transport"] == "pull"
    with stream(bot):
        assert shown()["connected"] is True
        assert requests.get(f"{web}/ready", timeout=5).json()["pull_bots_connected"] == 1
        page = requests.get(f"{web}/bots/{bot.id}", timeout=5).text
        assert 'id="connection">connected<' in page
    wait_for(lambda: shown()["connected"] is False, 5, "the bot to count as disconnected")
    assert requests.get(f"{web}/ready", timeout=5).json()["pull_bots_connected"] == 0


def test_verification_is_the_hello_through_the_stream(web: str) -> None:
    bot = register_pull(web, "verified")
    verify_path = f"{web}/api/bots/{bot.id}/verify-endpoint"
    absent = requests.post(verify_path, headers=bot.auth, json={}, timeout=10)
    assert absent.status_code == 422
    assert "not connected" in absent.json()["message"]
    with stream(bot) as opened:

        def answer_hello() -> None:
            event = opened.next()
            assert json.loads(event["body"])["type"] == "hello"
            bot.answer(event["id"], HELLO_ANSWER)

        threading.Thread(target=answer_hello, daemon=True).start()
        verified = requests.post(verify_path, headers=bot.auth, json={}, timeout=10)
    assert verified.status_code == 200, verified.text
    assert (verified.json()["status"], verified.json()["version"]) == ("active", "2.0")


def test_a_pull_bot_run_with_another_secret_is_told_which_secret_and_what_to_do(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot_sdk.connect")
    quick = dataclasses.replace(config, handshake_timeout_s=0.5)
    with serving(create_app(quick)) as web:
        bot = register_pull(web, "forgetful")
        app = make_app(LowestCard, "the-secret-of-another-bot")
        client = PullClient(app, arena=web, bot_id=bot.id, token=bot.token)
        running = threading.Thread(target=client.run, daemon=True)
        running.start()
        try:
            wait_for(lambda: bool(_said(caplog, "verification failed")), 10, "its verification")
        finally:
            client.stop()
            running.join(10)
    refused = _said(caplog, "verification failed (422 handshake_failed)")
    assert f"pull bot {bot.id} did not answer the hello within 0.5 s" in refused
    assert "A pull bot leaves a request whose signature does not verify unanswered" in refused
    assert f"The arena signs with bot {bot.id}'s signing secret, shown once" in refused
    assert f"`gongzhu bots rotate-secret {bot.id} --token TOKEN`" in refused
    unanswered = _said(caplog, "not answered (unauthorized)")
    assert "set GONGZHU_BOT_SECRET (or the variables --secret-env names) to it" in unanswered
    everything = " ".join(r.getMessage() for r in caplog.records)
    assert bot.secret not in everything and "the-secret-of-another-bot" not in everything


def _said(caplog: pytest.LogCaptureFixture, text: str) -> str:
    """The first message logged that holds ``text`` ("" if none)."""
    return next((r.getMessage() for r in caplog.records if text in r.getMessage()), "")


def _socket(bot: PullBot, token: str | None = None) -> Any:
    url = bot.base.replace("http://", "ws://") + f"/api/bots/{bot.id}/ws"
    return simple_websocket.Client.connect(url, headers=bearer(token or bot.token))


def _message(socket: Any, timeout: float = 5.0) -> dict[str, Any]:
    """The next message that is not a keep-alive (an empty message)."""
    while True:
        raw = socket.receive(timeout)
        assert raw is not None, "no message in time"
        if raw:
            found: dict[str, Any] = json.loads(raw)
            return found


def test_over_a_websocket_the_same_request_comes_and_the_answer_goes_back(
    web: str, store: Store
) -> None:
    bot = register_pull(web, "socketed")
    socket = _socket(bot)
    try:
        assert _message(socket)["type"] == "welcome"
        body = encode(hello_request())
        asking = Asking(store, bot, body, 3.0)
        event = _message(socket)
        assert event["type"] == "request" and event["body"].encode() == body
        verify(bot.secret, event["headers"], event["body"].encode(), now=time.time())
        answer = {"type": "answer", "id": event["id"], "body": HELLO_ANSWER.decode()}
        socket.send(json.dumps(answer))
        assert asking.result() == (200, None, HELLO_ANSWER)
        socket.send(json.dumps(answer))  # a second answer is refused, on the socket
        refused = _message(socket)
        assert (refused["type"], refused["id"], refused["status"]) == ("refused", event["id"], 409)
        socket.send("not an answer")
        assert _message(socket)["status"] == 400
        assert socket.receive(2) == ""  # the keep-alive, an empty message
    finally:
        _close(socket)


def _close(socket: Any) -> None:
    with contextlib.suppress(simple_websocket.ConnectionClosed):  # closed by the arena already
        socket.close()


def test_a_websocket_is_refused_before_the_upgrade_for_another_bots_token(web: str) -> None:
    mine, theirs = register_pull(web, "ws-mine"), register_pull(web, "ws-theirs")
    with pytest.raises(simple_websocket.ConnectionError, match="403"):
        _socket(theirs, token=mine.token)
    with pytest.raises(simple_websocket.ConnectionError, match="401"):
        _socket(theirs, token="gzt_not-a-token")


def test_a_websocket_and_a_stream_of_one_bot_replace_each_other(web: str) -> None:
    bot = register_pull(web, "both")
    socket = _socket(bot)
    try:
        assert _message(socket)["type"] == "welcome"
        with stream(bot):
            bye = _message(socket)
        assert bye == {
            "type": "bye",
            "reason": "replaced",
            "message": "a newer connection of this bot took over",
        }
    finally:
        _close(socket)


def test_a_bot_reconnecting_in_a_tight_loop_is_answered_429(config: Config) -> None:
    limited = dataclasses.replace(
        config, stream_heartbeat_s=0.3, stream_connect_limit="3 per minute"
    )
    with serving(create_app(limited)) as base:
        bot = register_pull(base, "looping")
        for _ in range(3):
            with stream(bot):
                pass
        refused = RawStream(bot)
        assert refused.response.status_code == 429
        assert refused.response.json()["error"] == "rate_limited"
        assert int(refused.response.headers["Retry-After"]) > 0

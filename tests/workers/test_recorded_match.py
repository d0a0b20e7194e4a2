"""What a match against bots over HTTP records stays the same, byte for byte: a golden log.

Four ``HttpSeat`` seats (two speaking ``gongzhu-bot/1``, two ``gongzhu-bot/2``) play a
two-hand match with passing and exposures against one scripted bot server on loopback. Each
seat's answers go round a script of every shape the arena reads: plain, with a long note,
chunked, after ``100 Continue``, closing the connection (``Connection: close``, HTTP/1.0),
malformed, of the wrong kind (with a note too), illegal, HTTP 500, a redirect, not UTF-8. The
log is compared with ``fixtures/recorded_match.json``, written by the arena at ``5eb77e3``,
before its per-decision work was made cheaper (this script, run in that revision's tree): every
request's hash, answer, note, fault, status, bank, connection (new or kept alive) and byte
count. Only the instants and durations the clock measured (``latency_ms``, ``sent_us``,
``received_us``, ``connect_us``, ``tls_us``) are set to 0 before comparing, since no two runs
measure the same; the time limits are generous, so no bank is charged.

    .venv/bin/python -m tests.workers.test_recorded_match   # writes the fixture: once, never
                                                            # to make the test pass
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.config import Config
from arena.http_seat import HttpSeat
from arena.match_loop import play_match
from arena.matches import _greet
from arena.transport import BotTransport
from bot_sdk.protocol import ProtocolVersion, hello_answer
from referee import Game, Rules
from replays.deals import DealSource
from replays.log import MatchLog, SeatInfo, TimeControl
from replays.verify import verify
from tests.workers.workers_support import read_request

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "recorded_match.json"
RULES = Rules.with_variants("pass_3", "qd_bonus", fixed_hands=2)
TIME_CONTROL = TimeControl(20_000, 60_000, 1000)
"""Generous: no answer is late, no bank is charged, no seat forfeits."""
PROTOCOLS = {
    0: ProtocolVersion.V1,
    1: ProtocolVersion.V2,
    2: ProtocolVersion.V1,
    3: ProtocolVersion.V2,
}
MEASURED = ("latency_ms", "sent_us", "received_us", "connect_us", "tls_us")
"""What the clock measured: set to 0 (where there is one) before comparing."""


def _head(status: str, *fields: str) -> bytes:
    return (f"{status}\r\n" + "".join(f"{f}\r\n" for f in fields) + "\r\n").encode()


def _sized(body: bytes, status: str = "HTTP/1.1 200 OK", *fields: str) -> bytes:
    return (
        _head(status, "Content-Type: application/json", f"Content-Length: {len(body)}", *fields)
        + body
    )


def _good(request: dict[str, Any]) -> dict[str, Any]:
    decision = request["observation"]["decision"]
    if decision["kind"] == "play":
        return {"card": decision["choices"][0]}
    if decision["kind"] == "expose":
        return {"expose": decision["choices"][-1:]}
    return {"pass": decision["choices"][: decision["count"]]}


def _not_held(request: dict[str, Any]) -> bytes:
    hand = set(request["observation"]["hand"])
    card = next(f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA" if f"{r}{s}" not in hand)
    return json.dumps({"card": card}).encode()


def _wrong_kind(request: dict[str, Any]) -> bytes:
    return b'{"pass": []}' if request["kind"] == "play" else b'{"card": "2C"}'


def _chunked(body: bytes) -> bytes:
    half = len(body) // 2
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
    return _head("HTTP/1.1 200 OK", "Transfer-Encoding: chunked") + chunks + b"0\r\n\r\n"


Answer = Callable[[dict[str, Any]], tuple[bytes, bool]]
"""The bytes a request is answered with, and whether the server then closes the connection."""

SCRIPT: tuple[Answer, ...] = (
    lambda r: (_sized(json.dumps(_good(r)).encode()), False),
    lambda r: (_sized(json.dumps({**_good(r), "note": "é" + "n" * 300}).encode()), False),
    lambda r: (_chunked(json.dumps(_good(r)).encode()), False),
    lambda r: (_head("HTTP/1.1 100 Continue") + _sized(json.dumps(_good(r)).encode()), False),
    lambda r: (_sized(json.dumps(_good(r)).encode(), "HTTP/1.1 200 OK", "Connection: close"), True),
    lambda r: (_sized(b"<html>oops</html>"), False),
    lambda r: (_sized(_wrong_kind(r)), False),
    lambda r: (_sized(_wrong_kind(r)[:-1] + b', "note": "a note on a fault"}'), False),
    lambda r: (_sized(_not_held(r) if r["kind"] == "play" else b'{"pass": ["XX"]}'), False),
    lambda r: (_sized(b"Traceback: boom", "HTTP/1.1 500 Internal Server Error"), False),
    lambda r: (_sized(b"", "HTTP/1.1 302 Found", "Location: http://elsewhere.example/bot"), False),
    lambda r: (_sized(b"\xff\xfe garbage"), False),
    lambda r: (_sized(json.dumps(_good(r)).encode(), "HTTP/1.0 200 OK"), True),
    lambda r: (_sized(json.dumps({**_good(r), "note": 7}).encode()), False),
)


class ScriptedBot:
    """Answers each seat's ``n``-th decision with ``SCRIPT[n % len(SCRIPT)]``, every hello with
    the seat's protocol version and every notification with 204."""

    def __init__(self) -> None:
        self.asked = [0, 0, 0, 0]

    def __call__(self, conn: socket.socket) -> None:
        while True:  # the arena sends a request only once the answer before it came
            try:
                body = read_request(conn)
            except ConnectionError:  # the arena closed the connection
                return
            answer, close = self._answer(json.loads(body))
            conn.sendall(answer)
            if close:
                return

    def _answer(self, request: dict[str, Any]) -> tuple[bytes, bool]:
        if request["type"] == "hello":
            chosen = PROTOCOLS[request["seat"]]
            return _sized(json.dumps(hello_answer("scripted", "1.0", chosen)).encode()), False
        if request["type"] != "decision":
            return _head("HTTP/1.1 204 No Content"), False
        n = self.asked[request["seat"]]
        self.asked[request["seat"]] += 1
        answer: tuple[bytes, bool] = SCRIPT[n % len(SCRIPT)](request)
        return answer


def play_recorded() -> MatchLog:
    """The match of the golden log, played now."""
    with _serving(ScriptedBot()) as url:
        match_id = "recorded:table-1:match-1"
        seats = [
            HttpSeat(
                SeatInfo(s, f"bot-{s}", f"scripted-{s}"),
                BotTransport(url, ["s3cret"], allow_private=True),
            )
            for s in range(4)
        ]
        try:
            failures = _greet(
                seats, match_id, RULES, TIME_CONTROL, Config(), commitment=None, origin_ns=0
            )
            assert not failures
            return play_match(
                Game(RULES, seed="recorded"),
                seats,
                match_id=match_id,
                deals=DealSource.practice("recorded"),
                time_control=TIME_CONTROL,
                tournament_id="recorded",
                table_id="table-1",
                started_at="2026-12-06T12:00:00Z",
                finished_at=lambda: "2026-12-06T12:01:00Z",
                origin_ns=0,
            )
        finally:
            for seat in seats:
                seat.close()


@contextmanager
def _serving(bot: ScriptedBot) -> Iterator[str]:
    """``bot`` on a loopback port, each connection in its own thread; its decision URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # the listener closed: the match is over
                return
            threading.Thread(target=_handled, args=(bot, conn), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/bot"
    finally:
        listener.close()


def _handled(bot: ScriptedBot, conn: socket.socket) -> None:
    with conn:
        try:
            bot(conn)
        except OSError:
            return


def recorded_text(log: MatchLog) -> str:
    """The log's JSON with what the clock measured set to 0."""
    return (
        json.dumps(_unclocked(log.to_json()), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    )


def _unclocked(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: 0 if k in MEASURED and v is not None else _unclocked(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_unclocked(item) for item in data]
    return data


REDIRECTED = "redirecting to http://elsewhere.example/bot:"
"""The one thing recorded otherwise since the fixture, on purpose: a fault names no part of
the bot's endpoint (its path, ``/bot``, in the redirect's target) (docs/REPLAYS.md)."""


def test_a_match_over_http_records_what_it_always_recorded() -> None:
    log = play_recorded()
    assert verify(log).ok, verify(log).discrepancy
    statuses = {d.status.value for h in log.hands for d in h.decisions}
    assert statuses == {"ok", "invalid", "illegal", "error"}
    fixture = FIXTURE.read_text(encoding="utf-8")
    assert fixture.count(REDIRECTED) == 8  # two hands, four seats
    hidden = REDIRECTED.replace("/bot", "[hidden]")
    assert recorded_text(log) == fixture.replace(REDIRECTED, hidden)


if __name__ == "__main__":
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(recorded_text(play_recorded()), encoding="utf-8")

"""Hostile bots: each one its own HTTP server on loopback that answers ``hello`` and the
notifications like a good bot, and misbehaves on decisions in one way of its own.

Every hostile bot's moves, as far as they count, are the protocol's fallback moves: a bot that
faults is answered with the fallback, and the two that answer some decisions correctly (the
late one, the rule breaker when nothing illegal is at hand) answer the fallback move. So a
match replayed with an in-process :class:`FallbackBot` in the hostile seats must give every
seat the same scores.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bot_sdk import Bot
from bot_sdk.protocol import PROTOCOL, Status, answer_of, encode, fallback_move
from referee import AnyMove, CardSet, Observation

HUGE_ANSWER_BYTES = 50 * 1024 * 1024
"""What the flooding bot announces and tries to send: 50 MiB."""
LATE_BY_MS = 150
"""How far beyond the decision's limit the late bot answers, once per hand."""
DRIP_INTERVAL_S = 0.02
"""The dripping bot sends one byte this often: every read sees data long before any socket
timeout, only the whole answer is late."""
REDIRECT_TARGET = "http://169.254.169.254/latest/meta-data/"
_ALL_CARDS = CardSet((1 << 52) - 1)

Request = dict[str, Any]


class FallbackBot(Bot):
    """Always the protocol's fallback move: what the arena plays for a seat that faults."""

    name = "fallback"

    def decide(self, obs: Observation) -> AnyMove:
        return fallback_move(obs)


class Handler(BaseHTTPRequestHandler):
    """One connection to a hostile bot (kept alive, HTTP/1.1)."""

    protocol_version = "HTTP/1.1"
    server: HostileServer

    def do_POST(self) -> None:
        try:
            self._answer(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
        except OSError:  # the arena hung up on it: as it should
            self.close_connection = True

    def _answer(self, request: Request) -> None:
        if request["type"] == "hello":
            name = self.server.bot.name
            self.send(200, encode({"protocol": PROTOCOL, "name": name, "version": "1"}))
        elif request["type"] == "decision":
            self.server.count_decision()
            self.server.bot.misbehave(self, request)
        else:
            self.send(204, b"")

    def send(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the faults are what the test looks at."""


class HostileServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, bot: HostileBot) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.bot = bot
        self.stop = threading.Event()
        """Set when the test is over: a sleeping or dripping handler gives up."""
        self.decisions = 0
        self.most_bytes_sent = 0
        self._seen: set[tuple[str, int, int]] = set()
        self._lock = threading.Lock()

    def count_decision(self) -> None:
        with self._lock:
            self.decisions += 1

    def first_of_hand(self, request: Request) -> bool:
        """Whether ``request`` is its seat's first decision of the hand."""
        hand = (request["match_id"], request["seat"], request["hand_number"])
        with self._lock:
            first = hand not in self._seen
            self._seen.add(hand)
        return first

    def sent(self, size: int) -> None:
        with self._lock:
            self.most_bytes_sent = max(self.most_bytes_sent, size)


Misbehaviour = Callable[[Handler, Request], None]


@dataclass
class HostileBot:
    """A kind of hostile bot: how it answers a decision, and what the arena must record."""

    name: str
    misbehave: Misbehaviour
    status: Status
    """The status of its faults in the replay log (``OK``: it never faults)."""
    fault: str
    """A regular expression every one of its fault messages matches."""
    always_faults: bool = True
    """Every decision it is asked is a fault (so it forfeits after the fault limit)."""
    server: HostileServer | None = field(default=None, repr=False)

    def matches(self, fault: str | None) -> bool:
        return fault is not None and re.search(self.fault, fault) is not None


# -- the misbehaviours ----------------------------------------------------------------------


def _observation(request: Request) -> Observation:
    return Observation.from_json(request["observation"])


def _fallback(request: Request) -> bytes:
    return encode(answer_of(fallback_move(_observation(request))))


def _allowed_s(request: Request) -> float:
    return (request["time_limit_ms"] + request["time_bank_ms"]) / 1000


def sleeps(handler: Handler, request: Request) -> None:
    """Sleeps a second past the limit and the whole bank, then answers correctly."""
    if not handler.server.stop.wait(_allowed_s(request) + 1.0):
        handler.send(200, _fallback(request))


def drips(handler: Handler, request: Request) -> None:
    """A correct answer, status line and headers included, one byte at a time."""
    body = _fallback(request)
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
    for byte in (head + "\r\n\r\n").encode() + body:
        if handler.server.stop.wait(DRIP_INTERVAL_S):
            return
        handler.wfile.write(bytes([byte]))


def floods(handler: Handler, request: Request) -> None:
    """A well-formed 50 MiB JSON answer; records how much of it the arena let it send."""
    prefix, suffix = b'{"pad":"', b'","card":"2C"}'
    block = b"x" * 65536
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(HUGE_ANSWER_BYTES))
    handler.end_headers()
    handler.wfile.write(prefix)
    sent = len(prefix)
    while sent + len(block) + len(suffix) <= HUGE_ANSWER_BYTES:
        handler.wfile.write(block)
        sent += len(block)
        handler.server.sent(sent)
    handler.wfile.write(b"x" * (HUGE_ANSWER_BYTES - sent - len(suffix)) + suffix)
    handler.server.sent(HUGE_ANSWER_BYTES)


def not_json(handler: Handler, request: Request) -> None:
    handler.send(
        200, b"<html><body>Service Unavailable</body></html>", **{"Content-Type": "text/html"}
    )


def crashes(handler: Handler, request: Request) -> None:
    """A server error page naming where it was asked, as web servers' pages do."""
    where = f"http://{handler.headers['Host']}{handler.path}"
    handler.send(500, f"Traceback (most recent call last): ZeroDivisionError at {where}".encode())


def hangs_up(handler: Handler, request: Request) -> None:
    """Reads the request and closes the connection without a word."""
    handler.close_connection = True


def redirects(handler: Handler, request: Request) -> None:
    """Sends the arena to the cloud metadata address."""
    handler.send(302, b"", Location=REDIRECT_TARGET)


def _answer(handler: Handler, request: Request, cards: list[str]) -> None:
    """``cards`` as the answer field of the request's kind of decision."""
    kind = request["kind"]
    answer = {"card": cards[0]} if kind == "play" else {kind: cards}
    handler.send(200, encode(answer))


def plays_cards_it_lacks(handler: Handler, request: Request) -> None:
    """Cards of the right kind of answer that are not in its hand."""
    lacking = (_ALL_CARDS - _observation(request).hand).names()
    count = 3 if request["kind"] == "pass" else 1
    _answer(handler, request, lacking[:count])


def breaks_the_rules(handler: Handler, request: Request) -> None:
    """Cards of its hand that the rules forbid: a card not following suit, exposing a card that
    may not be exposed, passing two cards. The fallback move when its hand allows nothing
    illegal."""
    obs = _observation(request)
    assert obs.decision is not None
    forbidden = (obs.hand - obs.decision.choices).names()
    if request["kind"] == "pass":
        _answer(handler, request, obs.hand.names()[:2])
    elif forbidden:
        _answer(handler, request, forbidden[:1])
    else:
        handler.send(200, _fallback(request))


def answers_another_kind(handler: Handler, request: Request) -> None:
    """A well-formed answer to another kind of decision."""
    first = _observation(request).hand.names()[0]
    wrong = {"play": {"expose": []}, "expose": {"card": first}, "pass": {"card": first}}
    handler.send(200, encode(wrong[request["kind"]]))


def late_once_a_hand(handler: Handler, request: Request) -> None:
    """The fallback move, correct, but its seat's first decision of each hand
    :data:`LATE_BY_MS` past the limit (the time bank pays for it)."""
    late = handler.server.first_of_hand(request)
    if late and handler.server.stop.wait((request["time_limit_ms"] + LATE_BY_MS) / 1000):
        return
    handler.send(200, _fallback(request))


_TIMEOUT = r"^no complete answer within \d+ ms"


def hostile_bots() -> list[HostileBot]:
    """One of each kind, fresh (no server yet)."""
    return [
        HostileBot("sleeper", sleeps, Status.TIMEOUT, _TIMEOUT),
        HostileBot("dripper", drips, Status.TIMEOUT, _TIMEOUT),
        HostileBot("flooder", floods, Status.INVALID, r"^the answer is larger than 64 KiB"),
        HostileBot("not-json", not_json, Status.INVALID, r"^the answer is not UTF-8 JSON"),
        HostileBot("http-500", crashes, Status.ERROR, r"^HTTP 500: Traceback"),
        HostileBot("hang-up", hangs_up, Status.ERROR, r"^could not reach the bot's endpoint: "),
        HostileBot(
            "redirector",
            redirects,
            Status.ERROR,
            r"^HTTP 302 redirecting to http://\[hidden\]/latest/meta-data/: the arena does not",
        ),
        HostileBot(
            "card-it-lacks",
            plays_cards_it_lacks,
            Status.ILLEGAL,
            r"^(you do not hold \w\w;|you may not (pass|expose) )",
        ),
        HostileBot(
            "rule-breaker",
            breaks_the_rules,
            Status.ILLEGAL,
            r"^(\w\w does not follow|\w\w may not be played now|pass exactly 3 cards, not 2"
            r"|you may not expose )",
            always_faults=False,
        ),
        HostileBot(
            "wrong-kind",
            answers_another_kind,
            Status.INVALID,
            r'^this is an? (play|expose|pass) decision: answer \{"(card|expose|pass)"',
        ),
        HostileBot("late-once-a-hand", late_once_a_hand, Status.OK, r"^$", always_faults=False),
    ]


ENDPOINT_PATH = "/private-endpoint/"
"""The start of every hostile bot's path: an endpoint shown anywhere public is found by it."""


@contextmanager
def serving(bot: HostileBot) -> Iterator[str]:
    """Serve ``bot`` on a free loopback port; yield its URL (its path names it)."""
    server = HostileServer(bot)
    bot.server = server
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{ENDPOINT_PATH}{bot.name}"
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(5)

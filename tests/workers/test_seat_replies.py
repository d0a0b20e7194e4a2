"""What :class:`HttpSeat` makes of each kind of answer, with a scripted transport and clock: the
status, the fault message, the latency the time bank is charged, and the request's hash. (The
same faults from real servers on loopback: tests/workers/test_http_seat.py.)"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from arena.exchange import Exchange
from arena.http_seat import HttpSeat, round_trip_s
from arena.match_loop import Reply
from arena.transport import (
    NOTICE_TIMEOUT_S,
    BotTransport,
    DeadlineError,
    TooLargeError,
    TransportError,
    UnreachableError,
    hide_endpoint,
)
from bot_sdk.protocol import (
    BotInfo,
    DecisionRequest,
    Message,
    Status,
    body_sha256,
    decision_request,
    encode,
)
from referee import Play, Rules
from referee.cards import parse_card
from replays.log import SeatInfo
from tests.bot_sdk.bot_sdk_support import play_obs

OBS = play_obs()  # seat 2 leads, holding 3C 9C AC TD AD 3H 5H 9H 2S 5S 6S 9S AS
ASKED = {"match_id": "m1", "decision_id": "d1", "time_limit_ms": 300, "time_bank_ms": 1200}
REQUEST = DecisionRequest(OBS, **ASKED)  # type: ignore[arg-type]


ENDPOINT = "https://bot.example/play"


@dataclass
class Scripted:
    """A transport that answers ``outcome`` after ``seconds`` of the scripted clock, naming
    the bot as a match's transport does (its endpoint hidden)."""

    clock: list[float]
    outcome: tuple[int, str | None, bytes] | Exception
    seconds: float = 0.25
    posts: list[tuple[bytes, float]] = field(default_factory=list)
    shown: str = "the bot's endpoint"
    exchange: Exchange = field(default_factory=Exchange)

    def redact(self, text: str) -> str:
        return hide_endpoint(text, ENDPOINT)

    def post(self, body: bytes, seconds: float) -> tuple[int, str | None, bytes]:
        self.posts.append((body, seconds))
        self.clock[0] += self.seconds
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    def notify(self, body: bytes) -> None:
        self.posts.append((body, 0.0))

    def hello(self, request: Message, timeout_s: float) -> BotInfo:
        raise NotImplementedError

    def close(self) -> None:
        pass


def ask(outcome: tuple[int, str | None, bytes] | Exception, seconds: float = 0.25) -> Reply:
    seat, _ = seat_with(outcome, seconds)
    return seat.ask(REQUEST)


def seat_with(
    outcome: tuple[int, str | None, bytes] | Exception, seconds: float = 0.25
) -> tuple[HttpSeat, Scripted]:
    clock = [1000.0]
    transport = Scripted(clock, outcome, seconds)
    seat = HttpSeat(SeatInfo(2, "bot_x", "x", "1"), transport, clock=lambda: clock[0])
    return seat, transport


def test_a_good_answer_is_the_move_with_its_latency_and_request_hash() -> None:
    seat, transport = seat_with((200, None, b'{"card": "AS"}'), seconds=0.2504)
    reply = seat.ask(REQUEST)
    assert reply == Reply(
        Play(2, parse_card("AS")),
        Status.OK,
        250,
        '{"card": "AS"}',
        None,
        body_sha256(encode(decision_request(OBS, **ASKED))),
        exchange=transport.exchange,
    )
    [(body, seconds)] = transport.posts
    assert body == encode(decision_request(OBS, **ASKED))
    assert seconds == 1.5  # the limit and the bank, in seconds


def test_a_fault_carries_what_the_transport_measured_too() -> None:
    seat, transport = seat_with(DeadlineError())
    assert seat.ask(REQUEST).exchange is transport.exchange


@pytest.mark.parametrize("code", [200, 204, 299])
def test_every_2xx_status_is_an_answer(code: int) -> None:
    assert ask((code, None, b'{"card": "AS"}')).status is Status.OK


def test_latency_is_rounded_and_never_negative() -> None:
    assert ask((200, None, b'{"card": "AS"}'), seconds=0.0006).latency_ms == 1
    assert ask((200, None, b'{"card": "AS"}'), seconds=0.2506).latency_ms == 251
    assert ask((200, None, b'{"card": "AS"}'), seconds=-0.5).latency_ms == 0


@pytest.mark.parametrize(
    ("outcome", "status", "fault"),
    [
        (
            DeadlineError(),
            Status.TIMEOUT,
            "no complete answer within 1500 ms (the 300 ms limit and the 1200 ms left in the bank)",
        ),
        (
            TooLargeError(),
            Status.INVALID,
            'the answer is larger than 64 KiB: answer one small JSON object such as {"card": "QS"}',
        ),
        (
            TransportError("refused"),
            Status.ERROR,
            "could not reach the bot's endpoint: refused",
        ),
        (
            TransportError("Failed to resolve 'bot.example' ([Errno -3] Try again)"),
            Status.ERROR,
            "could not reach the bot's endpoint: Failed to resolve '[hidden]' ([Errno -3]",
        ),
        (
            UnreachableError("the bot is not connected"),
            Status.ERROR,
            "could not reach the bot's endpoint: the bot is not connected",
        ),
        (
            (302, "https://elsewhere.example/", b""),
            Status.ERROR,
            "HTTP 302 redirecting to https://elsewhere.example/: the arena does not follow "
            "redirects; register the final URL",
        ),
        (
            (301, "http://bot.example/play", b""),
            Status.ERROR,
            "HTTP 301 redirecting to http://[hidden]: the arena does not follow",
        ),
        (
            (404, None, b"<address>Apache Server at bot.example Port 443 (/play)</address>"),
            Status.ERROR,
            "HTTP 404: <address>Apache Server at [hidden] Port 443 ([hidden])</address>",
        ),
        (  # hidden before the excerpt is cut: a host cut in two would not be recognised
            (404, None, b"x" * 295 + b" at bot.example"),
            Status.ERROR,
            "HTTP 404: " + "x" * 295 + " at [\u2026",
        ),
        (
            (200, None, b"\xff" + b"x" * 294 + b" at bot.example"),
            Status.INVALID,
            "the answer is not UTF-8 JSON (it starts '\ufffd" + "x" * 294 + " at [\u2026')",
        ),
        (
            (200, None, b"\xff not JSON from 2001:db8::7 " + b"x" * 400),
            Status.INVALID,
            "the answer is not UTF-8 JSON (it starts '\ufffd not JSON from [hidden] xxx",
        ),
        ((300, None, b""), Status.ERROR, "HTTP 300 redirecting to ?"),
        ((399, None, b""), Status.ERROR, "HTTP 399 redirecting to ?"),
        ((199, None, b"early"), Status.ERROR, "HTTP 199: early"),
        ((400, None, b"bad request"), Status.ERROR, "HTTP 400: bad request"),
        ((503, None, b"busy"), Status.ERROR, "HTTP 503: busy"),
        ((200, None, b"\xff\xfe{}"), Status.INVALID, "the answer is not UTF-8 JSON"),
        ((200, None, b'{"card": "2H"}'), Status.ILLEGAL, "you do not hold 2H"),
        ((200, None, b'{"cards": []}'), Status.INVALID, 'the answer has no "card" field'),
    ],
)
def test_each_fault_has_its_status_message_and_latency(
    outcome: tuple[int, str | None, bytes] | Exception, status: Status, fault: str
) -> None:
    reply = ask(outcome)
    assert (reply.move, reply.status, reply.latency_ms) == (None, status, 250)
    assert reply.fault is not None and reply.fault.startswith(fault), reply.fault
    assert reply.request_sha256 == body_sha256(encode(decision_request(OBS, **ASKED)))


@pytest.mark.parametrize(
    ("error", "ending"),
    [
        (DeadlineError(), "left in the bank)"),
        (DeadlineError("the stream closed"), "bank): the stream closed"),
    ],
    ids=["silent", "with-why"],
)
def test_a_timeout_says_why_when_the_channel_knows(error: DeadlineError, ending: str) -> None:
    fault = ask(error).fault
    assert fault is not None and fault.endswith(ending), fault


@pytest.mark.parametrize(
    ("sent_ns", "received_ns", "seconds"),
    [
        (None, 5, 0.0),
        (5, None, 0.0),
        (1_000, 200_001_000, 0.2),
        (0, 500_000_000, 0.5),
        (0, 3_000_000_000, 0.5),
        (7_000, 2_000, 0.0),
    ],
    ids=["not-sent", "not-received", "round-trip", "at-the-cap", "capped", "clock-stepped"],
)
def test_the_evidence_grace_is_the_hello_s_round_trip_up_to_half_a_second(
    sent_ns: int | None, received_ns: int | None, seconds: float
) -> None:
    assert round_trip_s(Exchange(sent_ns=sent_ns, received_ns=received_ns)) == seconds


def test_after_the_hello_a_decision_is_read_for_one_round_trip_more() -> None:
    """The hello measured a round trip of 0.2 s: the 1.5 s a decision has (limit and bank)
    become 1.7 s of reading, the answer kept as evidence if it comes late."""
    seat, transport = seat_with((200, None, b'{"card": "AS"}'))

    def hello(request: Message, timeout_s: float) -> BotInfo:
        transport.exchange = Exchange(sent_ns=1_000, received_ns=200_001_000)
        return BotInfo("x", "1")

    transport.hello = hello  # type: ignore[method-assign]
    seat.hello(match_id="m1", rules=Rules(), time_limit_ms=300, time_bank_ms=1200, timeout_s=5.0)
    seat.ask(REQUEST)
    assert transport.posts[-1][1] == pytest.approx(1.7)


def test_a_refused_answer_is_kept_as_sent() -> None:
    assert ask((200, None, b'{"card": "2H"}')).answer == '{"card": "2H"}'
    assert ask((503, None, b"busy")).answer is None


@pytest.mark.parametrize(
    "outcome",
    [(500, None, b"boom"), DeadlineError(), TooLargeError(), TransportError("x")],
)
def test_a_notification_is_fire_and_forget_within_two_seconds(
    outcome: tuple[int, str | None, bytes] | Exception,
) -> None:
    scripted = Scripted([0.0], outcome)
    transport = BotTransport("https://bot.example/play", ["s"])
    transport.post = scripted.post  # type: ignore[method-assign]
    transport.notify(encode({"type": "hand_end"}))  # raises nothing, whatever happens
    assert scripted.posts == [(encode({"type": "hand_end"}), NOTICE_TIMEOUT_S)]
    assert NOTICE_TIMEOUT_S == 2.0


def test_a_seat_connects_to_no_private_address_unless_allowed() -> None:
    seat = HttpSeat(SeatInfo(2, "bot_x", "x", "1"), BotTransport("http://127.0.0.1:9/bot", ["s"]))
    try:
        reply = seat.ask(REQUEST)
    finally:
        seat.close()
    assert reply.status is Status.ERROR
    assert reply.fault is not None and "resolves to [hidden], a private, loopback" in reply.fault
    assert "127.0.0.1" not in reply.fault  # a match's faults are public: no endpoint

"""The timing evidence, measured where it happens, against real servers on loopback: a push
bot's new connection then its kept-alive one (connect and TLS time only when new), the bytes
each way as a TCP shim in between counted them, offsets within the match; and a slow network
(the shim holding the bot's answer back) seen in the decision's record: when the request went
out, what came in and when, and which deadline expired (the decision's limit, or the bank)."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from arena import bot_connection
from arena.exchange import Exchange, now_ns
from arena.http_seat import HttpSeat
from arena.match_loop import decide
from arena.transport import BotTransport, DeadlineError
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status, hello_request
from bot_sdk.server import make_app
from referee import Game, Rules
from replays.faults import FaultBook
from replays.log import Connection, Deadline, DecisionRecord, SeatInfo, TimeControl
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.test_transport import HELLO, TlsPair, answers, bot, response, tls

__all__ = ["tls"]  # the module's TLS fixture, used here
SECRET = "s3cret"


class Shim:
    """A TCP proxy on loopback in front of a bot: it counts the bytes each way and passes the
    first ``prompt`` bytes of each chunk of the bot's answer at once, the rest ``delay_s``
    later (a slow network)."""

    def __init__(self, port: int, *, delay_s: float = 0.0, prompt: int = 0) -> None:
        self.target, self.delay_s, self.prompt = port, delay_s, prompt
        self.to_bot = self.to_arena = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/bot"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                arena, _ = self.listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pipe, args=(arena, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, arena, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        try:
            while chunk := source.recv(65536):
                # counted before they are passed on: whoever has read them sees them counted
                if answers:
                    self.to_arena += len(chunk)
                    sink.sendall(chunk[: self.prompt])
                    time.sleep(self.delay_s)
                    sink.sendall(chunk[self.prompt :])
                else:
                    self.to_bot += len(chunk)
                    sink.sendall(chunk)
        except OSError:
            pass  # the arena shut the connection at its deadline
        finally:
            source.close()
            sink.close()


@contextmanager
def shimmed(port: int, **options: float) -> Iterator[Shim]:
    shim = Shim(port, **options)  # type: ignore[arg-type]
    try:
        yield shim
    finally:
        shim.listener.close()


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/", maxsplit=1)[0])


# -- a push bot's connection ------------------------------------------------------------------


def test_a_new_connection_then_a_reused_one_with_the_bytes_each_way() -> None:
    raw = response(HELLO)
    with bot(answers(raw, raw)) as running_bot, shimmed(running_bot.port) as shim:
        transport = BotTransport(shim.url, [SECRET], allow_private=True)
        start = now_ns()
        try:
            transport.post(b'{"n":1}', 5.0)
            first, sent_then = transport.exchange, shim.to_bot
            transport.post(b'{"n":22}', 5.0)
            second = transport.exchange
        finally:
            transport.close()
        end = now_ns()
    assert (first.connection, second.connection) == (Connection.NEW, Connection.REUSED)
    assert first.connect_ns is not None and 0 < first.connect_ns <= end - start
    assert second.connect_ns is None
    assert first.tls_ns is None and second.tls_ns is None  # plain HTTP
    assert (first.retried, second.retried) == (False, False)
    assert first.bytes_sent == sent_then and second.bytes_sent == shim.to_bot - sent_then
    assert first.bytes_received == second.bytes_received == len(raw)
    assert shim.to_arena == 2 * len(raw)
    instants = [first.sent_ns, first.received_ns, second.sent_ns, second.received_ns]
    assert [start, *instants, end] == sorted([start, *instants, end])  # type: ignore[type-var]


def test_a_new_https_connection_has_its_tls_time_and_a_reused_one_none(tls: TlsPair) -> None:
    with bot(answers(response(HELLO), response(HELLO)), tls[0]) as running_bot:
        transport = BotTransport(
            running_bot.url.replace("http:", "https:"), [SECRET], allow_private=True, tls=tls[1]
        )
        try:
            start = now_ns()
            transport.post(b"{}", 5.0)
            took_ns = now_ns() - start
            first = transport.exchange
            transport.post(b"{}", 5.0)
            second = transport.exchange
        finally:
            transport.close()
    assert first.connection is Connection.NEW and first.tls_ns is not None and first.tls_ns > 0
    assert first.connect_ns is not None
    assert first.connect_ns + first.tls_ns <= took_ns  # parts of the call, one after the other
    assert second.connection is Connection.REUSED
    assert (second.connect_ns, second.tls_ns) == (None, None)


def test_the_connect_and_tls_times_are_each_their_own_part(
    tls: TlsPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection's clock read at its start (0), once connected (1 ms), once the handshake
    is done (3 ms), then on: 1 ms to connect, 2 ms to shake hands."""
    readings = itertools.chain([0, 1_000_000, 3_000_000], itertools.count(4_000_000, 1_000_000))
    monkeypatch.setattr(bot_connection, "now_ns", lambda: next(readings))
    with bot(answers(response(HELLO)), tls[0]) as running_bot:
        transport = BotTransport(
            running_bot.url.replace("http:", "https:"), [SECRET], allow_private=True, tls=tls[1]
        )
        try:
            transport.post(b"{}", 5.0)
        finally:
            transport.close()
    assert (transport.exchange.connect_ns, transport.exchange.tls_ns) == (1_000_000, 2_000_000)


def test_a_stale_connection_s_retry_is_recorded_as_such() -> None:
    def handle(conn: socket.socket, n: int) -> bool:
        if n == 2:
            return False  # the bot closed the kept-alive connection: no answer
        conn.sendall(response(HELLO))
        return True

    with bot(handle) as running_bot:
        transport = BotTransport(running_bot.url, [SECRET], allow_private=True)
        try:
            transport.post(b"first", 5.0)
            transport.post(b"second", 5.0)
        finally:
            transport.close()
    assert transport.exchange.retried is True
    assert transport.exchange.connection is Connection.NEW


def test_the_hello_opens_the_connection_its_decisions_reuse() -> None:
    with running(make_app(LowestCard, SECRET)) as url:
        seat = HttpSeat(SeatInfo(0, "bot-x", "x"), BotTransport(url, [SECRET], allow_private=True))
        try:
            seat.transport.hello(hello_request(), 5.0)
            hello = seat.exchange
            record = _decided(seat, TimeControl(1000, 0, 5), origin_ns=now_ns())
        finally:
            seat.close()
    assert hello.connection is Connection.NEW and hello.connect_ns is not None
    assert record.status is Status.OK and record.timing is not None
    assert record.timing.connection is Connection.REUSED


# -- a slow network: the answer held back past a deadline ---------------------------------------


def _decided(seat: HttpSeat, tc: TimeControl, *, origin_ns: int) -> DecisionRecord:
    """Seat 0's first decision of a match, asked through ``seat`` and entered in a fresh book."""
    game = Game(Rules(fixed_hands=1), seed="7")
    obs = game.observation(game.pending[0].seat)
    book = FaultBook.fresh(tc)
    return decide(book, seat, obs, match_id="m-1", ident="m-1:1:0", origin_ns=origin_ns)


def _through_a_slow_network(tc: TimeControl, delay_s: float) -> tuple[DecisionRecord, int]:
    """A decision answered at once by the bot, its answer's first 12 bytes passed on at once
    and the rest ``delay_s`` later; the record, and how long the match had run at its end (us)."""
    with (
        running(make_app(LowestCard, SECRET)) as url,
        shimmed(_port(url), delay_s=delay_s, prompt=12) as shim,
    ):
        origin = now_ns()
        seat = HttpSeat(
            SeatInfo(0, "bot-x", "x"), BotTransport(shim.url, [SECRET], allow_private=True)
        )
        try:
            record = _decided(seat, tc, origin_ns=origin)
        finally:
            seat.close()
        return record, (now_ns() - origin) // 1000


@pytest.mark.parametrize(
    ("tc", "deadline"),
    [(TimeControl(200, 0, 5), Deadline.LIMIT), (TimeControl(150, 150, 5), Deadline.BANK)],
)
def test_an_answer_held_back_past_the_deadline_shows_when_and_which(
    tc: TimeControl, deadline: Deadline
) -> None:
    record, elapsed_us = _through_a_slow_network(tc, delay_s=0.6)
    assert (record.status, record.deadline) == (Status.TIMEOUT, deadline)
    timing = record.timing
    assert timing is not None and timing.sent_us is not None and timing.received_us is not None
    assert timing.bytes_received == 12  # the status line's start, before the deadline
    allowed_us = (tc.decision_ms + tc.bank_ms) * 1000  # the deadline, from just before sending
    assert 0 <= timing.sent_us <= timing.received_us < timing.sent_us + allowed_us
    assert allowed_us <= elapsed_us
    assert timing.connection is Connection.NEW and timing.connect_us is not None
    assert record.latency_ms is not None and record.latency_ms * 1000 >= allowed_us


def test_an_answer_held_back_past_the_limit_but_within_the_bank_is_late_not_a_timeout() -> None:
    record, elapsed_us = _through_a_slow_network(TimeControl(100, 2000, 5), delay_s=0.3)
    assert (record.status, record.deadline) == (Status.OK, None)
    timing = record.timing
    assert timing is not None and timing.sent_us is not None and timing.received_us is not None
    assert timing.received_us - timing.sent_us >= 300_000  # the arena's clock saw it late
    assert timing.received_us <= elapsed_us


def _silent(conn: socket.socket, n: int) -> bool:
    """Reads the request and answers nothing for half a second."""
    time.sleep(0.5)
    return True


def test_a_deadline_error_keeps_what_was_measured_before_it() -> None:
    with bot(_silent) as running_bot:
        transport = BotTransport(running_bot.url, [SECRET], allow_private=True)
        try:
            with pytest.raises(DeadlineError):
                transport.post(b"{}", 0.2)
        finally:
            transport.close()
    exchange: Exchange = transport.exchange
    assert exchange.sent_ns is not None and exchange.received_ns is None
    assert exchange.bytes_received == 0 and exchange.bytes_sent


def test_an_answer_read_in_many_reads_counts_all_its_bytes() -> None:
    raw = response(b"x" * 40_000)  # a read takes at most 16 KiB
    with bot(answers(raw)) as running_bot:
        transport = BotTransport(running_bot.url, [SECRET], allow_private=True)
        try:
            transport.post(b"{}", 5.0)
        finally:
            transport.close()
    assert transport.exchange.bytes_received == len(raw)

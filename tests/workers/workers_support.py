"""Helpers of the worker tests: misbehaving bot servers on loopback, and playing one match with
one seat over HTTP."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from arena.http_seat import HttpSeat
from arena.match_loop import InProcessSeat, play_match
from arena.transport import BotTransport
from bot_sdk.examples.lowest_card import LowestCard
from referee import Game, Rules
from replays.deals import DealSource
from replays.log import MatchLog, SeatInfo, TimeControl

RULES = Rules.with_variants("no_exposure", fixed_hands=1)
"""One hand, play decisions only: every request to seat 0 is a play."""

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WSGI = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def answering(
    answer: Callable[[dict[str, Any]], bytes],
    status: str = "200 OK",
    notice_status: str = "204 No Content",
    **headers: str,
) -> WSGI:
    """A WSGI bot that answers every decision with ``answer(request)``, every notice with
    ``notice_status``."""

    def app(environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        request = json.loads(environ["wsgi.input"].read(size))
        if request["type"] != "decision":
            start(notice_status, [])
            return [b""]
        body = answer(request)
        start(status, [("Content-Type", "application/json"), *headers.items()])
        return [body]

    return app


def lowest_card(request: dict[str, Any]) -> bytes:
    return json.dumps({"card": request["observation"]["decision"]["choices"][0]}).encode()


def illegal_card(request: dict[str, Any]) -> bytes:
    """A card the seat does not hold."""
    hand = set(request["observation"]["hand"])
    card = next(f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA" if f"{r}{s}" not in hand)
    return json.dumps({"card": card}).encode()


@contextmanager
def raw_server(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """A TCP server on loopback whose every connection is handed to ``handle`` in a thread."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_handled, args=(handle, conn), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/bot"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _handled(handle: Callable[[socket.socket], None], conn: socket.socket) -> None:
    with conn:
        try:
            read_request(conn)
            handle(conn)
        except OSError:
            return


def read_request(conn: socket.socket) -> bytes:
    """One request's body; ConnectionError when the client closes the connection first."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += _received(conn)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += _received(conn)
    return body


def _received(conn: socket.socket) -> bytes:
    chunk = conn.recv(4096)
    if not chunk:
        raise ConnectionError("the client closed the connection")
    return chunk


def dripping(*, headers_too: bool) -> Callable[[socket.socket], None]:
    """Answers a valid-looking response one byte every 50 ms, forever."""

    def handle(conn: socket.socket) -> None:
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        )
        if not headers_too:
            conn.sendall(head)
        for byte in (head if headers_too else b"") + b" " * 100000:
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    return handle


def play_one(url: str, tc: TimeControl, *, allow_private: bool = True) -> MatchLog:
    """A one-hand match: seat 0 the bot at ``url`` (unsigned-checking bots accept any secret),
    seats 1-3 the lowest-card example in-process."""
    http = HttpSeat(
        SeatInfo(0, "bot-x", "x"), BotTransport(url, ["s3cret"], allow_private=allow_private)
    )
    others = [InProcessSeat(LowestCard(), SeatInfo(s, f"house-{s}", "lowest")) for s in (1, 2, 3)]
    try:
        return play_match(
            Game(RULES, seed="7"),
            [http, *others],
            match_id="m-1",
            deals=DealSource.practice("7"),
            time_control=tc,
        )
    finally:
        http.close()


def seat0(log: MatchLog) -> list[Any]:
    return [d for hand in log.hands for d in hand.decisions if d.seat == 0]

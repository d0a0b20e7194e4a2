"""A bot that closes its kept-alive connection between two requests (a stale connection): the
decision is sent once more, with the same ``decision_id``, on a new connection, inside its
deadline (docs/PROTOCOL.md, "Transport"); it is a fault only if that retry fails too. A request
on a new connection is never sent twice."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bot_sdk.protocol import Status
from replays.log import TimeControl
from tests.workers.workers_support import play_one, read_request, seat0

TC = TimeControl(1000, 1000, 3)
Seen = list[tuple[int, str]]
"""(connection number, decision_id) of each decision the bot received, in order."""


@contextmanager
def keep_alive_bot(drop: Callable[[int, int], bool]) -> Iterator[tuple[str, Seen]]:
    """A bot on raw sockets that plays its lowest legal card and keeps each connection open,
    except that it closes connection ``c`` without answering its request ``r`` (both counted
    from 1) when ``drop(c, r)``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    seen: Seen = []

    def serve(conn: socket.socket, number: int) -> None:
        with conn:
            requests = 0
            while True:
                try:
                    body = read_request(conn)
                except (OSError, StopIteration, ValueError):
                    return  # the arena closed it
                requests += 1
                message = json.loads(body)
                if message["type"] == "decision":
                    seen.append((number, message["decision_id"]))
                if drop(number, requests):
                    return
                answer = b""
                if message["type"] == "decision":
                    choice = message["observation"]["decision"]["choices"][0]
                    answer = json.dumps({"card": choice}).encode()
                head = "200 OK" if answer else "204 No Content"
                conn.sendall(
                    f"HTTP/1.1 {head}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )

    def accept() -> None:
        number = 0
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            number += 1
            threading.Thread(target=serve, args=(conn, number), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/bot", seen
    finally:
        listener.close()


def test_a_stale_kept_alive_connection_is_retried_once_with_the_same_decision_id() -> None:
    with keep_alive_bot(lambda connection, request: (connection, request) == (1, 2)) as (
        url,
        seen,
    ):
        log = play_one(url, TC)
    decisions = seat0(log)
    assert all(d.status is Status.OK for d in decisions), [d.fault for d in decisions]
    first, second = decisions[0].decision_id, decisions[1].decision_id
    # the second decision went out on the kept-alive connection, which the bot closed; sent
    # again on a new one, and answered there, like every later decision
    assert seen[:3] == [(1, first), (1, second), (2, second)]
    assert [d for _, d in seen[3:]] == [d.decision_id for d in decisions[2:]]
    assert {c for c, _ in seen[2:]} == {2}


def test_a_failed_retry_is_a_fault_and_a_new_connection_is_not_retried() -> None:
    with keep_alive_bot(lambda connection, request: (connection, request) != (1, 1)) as (
        url,
        seen,
    ):
        log = play_one(url, TC)
    asked = [d for d in seat0(log) if d.status is not Status.FORFEIT_AUTOPLAY]
    first, second, third = (d.decision_id for d in asked[:3])
    assert [d.status for d in asked] == [Status.OK] + [Status.ERROR] * TC.fault_limit
    assert asked[1].fault is not None
    assert asked[1].fault.startswith("could not reach the bot's endpoint: ")
    # the stale connection's request once more on a new connection; after that every request
    # is on a new connection (the bot closed the last one), and is sent once
    assert seen[:4] == [(1, first), (1, second), (2, second), (3, third)]
    assert len(seen) == 1 + len(asked)

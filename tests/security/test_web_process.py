"""The Procfile's web process under hostile clients: slow connections and floods cannot starve
it, and what gunicorn refuses itself is answered in the one JSON error shape, never an HTML page.

Bounded: at most 200 connections on loopback, about 4 s of reading per load, everything closed at
the end. The
figures side by side with the former thread workers are in docs/RELIABILITY.md
(``python -m benchmarks.slow_clients``); this test holds the line that matters: no read fails
or waits for seconds. With ``--threads 4`` workers none of the reads is answered.
"""

from __future__ import annotations

import json
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.slow_clients import (
    Reads,
    black_hole,
    flood,
    read_loop,
    recorded_match,
    slow_connections,
)
from benchmarks.web import fresh_redis, web_service

SLOW = 200
READERS = 32


@dataclass(frozen=True)
class Web:
    host: str
    port: int
    match_id: str
    """A recorded match, for /verify."""
    bot_id: str
    token: str
    """A bot and its owner's token, for endpoint changes."""
    black_hole: str
    """An endpoint that accepts connections and never answers."""
    log: Path
    """gunicorn's output."""

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"


@pytest.fixture(scope="module")
def web() -> Iterator[Web]:
    """The Procfile's web line on a fresh Redis with a recorded match and a registered bot."""
    with ExitStack() as stack:
        patch = stack.enter_context(pytest.MonkeyPatch.context())
        patch.setenv("GONGZHU_ALLOW_PRIVATE_ENDPOINTS", "1")  # the black hole is on loopback
        where = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        server, store, keys = stack.enter_context(fresh_redis(where, fsync="no"))
        _, match_id = recorded_match(store, keys)
        nowhere = stack.enter_context(black_hole())
        bot, token = store.create_bot(
            name="flooder", endpoint=nowhere, description="", contact="", version="1", secret="s"
        )
        base = stack.enter_context(web_service(server.url, keys))
        host, port = base.removeprefix("http://").split(":")
        log = keys.key_path.parent / f"gunicorn-{port}.log"
        yield Web(host, int(port), match_id, bot.id, token, nowhere, log)


def _reads_hold(reads: Reads) -> None:
    done = sorted(reads.latencies_ms)
    assert reads.failed == 0
    assert len(done) >= 200
    assert done[int(0.99 * len(done))] < 1000, f"p99 {done[int(0.99 * len(done))]:.0f} ms"


def _readers(web: Web) -> Reads:
    return read_loop([f"{web.base}/health", f"{web.base}/api/ladder"], 4.0, READERS)


def test_two_hundred_slow_connections_do_not_starve_the_readers(web: Web) -> None:
    with slow_connections(web.host, web.port, SLOW) as opened:
        reads = _readers(web)
        assert opened[0] == SLOW  # all of them really were open while it read
    _reads_hold(reads)


def test_a_flood_of_verifications_is_limited_held_and_does_not_starve_the_readers(
    web: Web,
) -> None:
    """60 verifications a minute from one address; beyond that each 429 is held a second, so
    32 connections that never back off are answered about 32 times a second, not thousands."""
    url = f"{web.base}/api/matches/{web.match_id}/verify"
    began = time.monotonic()
    with flood(32, "POST", url, None, {}) as answers:
        reads = _readers(web)
    seconds = time.monotonic() - began
    assert set(answers) == {200, 429}
    assert 60 <= answers[200] <= 120  # the limit (a fixed window may turn once meanwhile)
    assert answers[429] <= 32 * (seconds + 2), answers
    _reads_hold(reads)


def test_a_flood_of_endpoint_changes_to_a_silent_endpoint_does_not_starve_the_readers(
    web: Web,
) -> None:
    body = json.dumps({"endpoint": web.black_hole}).encode()
    owner = {"Authorization": f"Bearer {web.token}"}
    with flood(10, "PATCH", f"{web.base}/api/bots/{web.bot_id}", body, owner) as answers:
        reads = _readers(web)
    assert set(answers) <= {422, 429, 503}  # never answered by the bot: refused, then limited
    _reads_hold(reads)


def _raw(web: Web, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``request`` as it is; the status line, headers and body of the answer."""
    with socket.create_connection((web.host, web.port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return status, headers, body


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: arena\r\n\r\n", 400),
        (b"GET /health HTTP/1.1\r\nHost: arena\r\nX-Big: " + b"b" * 100_000 + b"\r\n\r\n", 431),
        (b"GET /health HTTP/1.1\r\nHost: arena\r\n" + b"X-Many: 1\r\n" * 200 + b"\r\n", 431),
        (b"BREW /health HTCPCP/1.0\r\n\r\n", 400),
    ],
    ids=["a 5 KB request line", "a 100 KB header", "200 headers", "not HTTP"],
)
def test_what_gunicorn_refuses_is_answered_in_the_json_error_shape(
    web: Web, request_bytes: bytes, status: int
) -> None:
    line, headers, body = _raw(web, request_bytes)
    assert line.startswith(f"HTTP/1.1 {status} "), line
    assert headers["content-type"] == "application/json"
    error = json.loads(body)
    assert error["status"] == status and error["message"].startswith("the server refused")
    assert b"<html" not in body


def test_gevent_patches_the_standard_library_before_the_app_is_imported(web: Web) -> None:
    """Else the sockets and TLS of the arena's calls to bots (requests, urllib3, redis-py)
    would stay unpatched: gevent warns of it when it starts the worker."""
    output = web.log.read_text()
    assert "Booting worker" in output
    assert "MonkeyPatchWarning" not in output, output[-2000:]

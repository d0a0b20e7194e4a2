"""The Procfile's web process under hostile clients: slow connections cannot starve it, and
what gunicorn refuses itself is answered in the one JSON error shape, never an HTML page.

Bounded: 200 connections on loopback, about 4 s of reading, everything closed at the end. The
figures side by side with the former thread workers are in docs/RELIABILITY.md
(``python -m benchmarks.slow_clients``); this test holds the line that matters: no read fails
or waits for seconds. With ``--threads 4`` workers none of the reads is answered.
"""

from __future__ import annotations

import json
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.slow_clients import read_loop, slow_connections
from benchmarks.web import fresh_redis, web_service

SLOW = 200
READERS = 32


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[str, int]]:
    """The Procfile's web line on a fresh Redis: (host, port)."""
    with tempfile.TemporaryDirectory() as where, fresh_redis(Path(where), fsync="no") as found:
        server, _, keys = found
        with web_service(server.url, keys) as base:
            host, port = base.removeprefix("http://").split(":")
            yield host, int(port)


def test_two_hundred_slow_connections_do_not_starve_the_readers(web: tuple[str, int]) -> None:
    host, port = web
    base = f"http://{host}:{port}"
    with slow_connections(host, port, SLOW) as opened:
        reads = read_loop([f"{base}/health", f"{base}/api/ladder"], 4.0, READERS)
        assert opened[0] == SLOW  # all of them really were open while it read
    done = sorted(reads.latencies_ms)
    assert reads.failed == 0
    assert len(done) >= 200
    assert done[int(0.99 * len(done))] < 1000, f"p99 {done[int(0.99 * len(done))]:.0f} ms"


def _raw(web: tuple[str, int], request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``request`` as it is; the status line, headers and body of the answer."""
    with socket.create_connection(web, timeout=10) as connection:
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
    web: tuple[str, int], request_bytes: bytes, status: int
) -> None:
    line, headers, body = _raw(web, request_bytes)
    assert line.startswith(f"HTTP/1.1 {status} "), line
    assert headers["content-type"] == "application/json"
    error = json.loads(body)
    assert error["status"] == status and error["message"].startswith("the server refused")
    assert b"<html" not in body

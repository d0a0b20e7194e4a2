"""Slow clients cannot starve the web: the Procfile's web process (gunicorn's gevent workers),
with 200 connections that never finish their request, still answers 32 readers at once.

Bounded: 200 connections on loopback, about 4 s of reading, everything closed at the end. The
figures side by side with the former thread workers are in docs/RELIABILITY.md
(``python -m benchmarks.slow_clients``); this test holds the line that matters: no read fails
or waits for seconds. With ``--threads 4`` workers none of the reads is answered.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.slow_clients import read_loop, slow_connections
from benchmarks.web import fresh_redis, web_service

SLOW = 200
READERS = 32


def test_two_hundred_slow_connections_do_not_starve_the_readers() -> None:
    with tempfile.TemporaryDirectory() as where, fresh_redis(Path(where), fsync="no") as found:
        server, _, keys = found
        with web_service(server.url, keys) as base:
            urls = [f"{base}/health", f"{base}/api/ladder"]
            host, port = base.removeprefix("http://").split(":")
            with slow_connections(host, int(port), SLOW) as opened:
                reads = read_loop(urls, 4.0, READERS)
                assert opened[0] == SLOW  # all of them really were open while it read
    done = sorted(reads.latencies_ms)
    assert reads.failed == 0
    assert len(done) >= 200
    assert done[int(0.99 * len(done))] < 1000, f"p99 {done[int(0.99 * len(done))]:.0f} ms"

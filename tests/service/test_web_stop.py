"""The Procfile's web process told to stop (SIGTERM: a restart, a deploy) with pull bots
connected, one on the WebSocket and one on the NDJSON stream (``python -m bot_sdk connect``):
each is told ``bye`` (``shutdown``: connect again), and gunicorn's master exits within
:data:`STOP_BOUND_S` instead of waiting out its graceful timeout (30 s) for the streams.

The bound: a gevent worker notices the stop at its loop's next tick (1 s), finds no request in
flight (the streams ended with their ``bye``, and a bot reconnecting meanwhile is told ``bye``
after its welcome) and ends; the master reaps it within 0.1 s. 1.1 to 1.5 s measured
(``python -m benchmarks.web_restart``); the rest is room for a busy 2-core machine. A stream
held to the end keeps the master for the whole 30 s.
"""

from __future__ import annotations

import signal
from contextlib import ExitStack
from pathlib import Path

from arena.redis_server import free_port
from benchmarks.web import fresh_redis, web_process
from benchmarks.web_restart import BYE, pull_bot, stop
from tests.workers.crashes import wait_for

STOP_BOUND_S = 5.0


def test_a_stopping_web_process_says_bye_to_its_pull_bots_and_exits_at_once(
    tmp_path: Path,
) -> None:
    with ExitStack() as stack:
        server, store, keys = stack.enter_context(fresh_redis(tmp_path, fsync="no"))
        port = free_port()
        master, base = stack.enter_context(web_process(server.url, keys, port))
        logs = {channel: tmp_path / f"bot-{channel}.log" for channel in ("websocket", "stream")}
        for channel, log in logs.items():
            stack.enter_context(pull_bot(store, base, channel, log))
        took = stop(master, timeout_s=60)
        for channel, log in logs.items():
            assert BYE in log.read_text(), (channel, log.read_text())
        web_log = (tmp_path / f"gunicorn-{port}.log").read_text()
        assert "graceful timeout" not in web_log, web_log
        assert master.returncode == 0, web_log
        assert took < STOP_BOUND_S, f"the master took {took:.1f} s to stop"


def test_a_web_process_stopped_while_its_workers_load_the_app_stops_cleanly(
    tmp_path: Path,
) -> None:
    """SIGTERM as soon as both workers are forked, while they patch for gevent and import the
    arena (seconds): each takes the signal, ends by itself once its app is loaded (it says so),
    and the master exits 0, with no traceback. (The handler once read the app before there was
    one; before that, gunicorn's own handlers were not yet installed and the signal was lost.)"""
    with ExitStack() as stack:
        server, _, keys = stack.enter_context(fresh_redis(tmp_path, fsync="no"))
        port = free_port()
        master, _ = stack.enter_context(web_process(server.url, keys, port, ready=False))
        log = tmp_path / f"gunicorn-{port}.log"
        wait_for(lambda: log.read_text().count("Booting worker") == 2, 30, "both workers forked")
        master.send_signal(signal.SIGTERM)
        master.wait(60)
        web_log = log.read_text()
        assert master.returncode == 0, web_log
        assert "Traceback" not in web_log, web_log
        assert web_log.count("Worker exiting") == 2, web_log  # not killed by the master

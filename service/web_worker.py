"""The web process's gunicorn worker: gevent's event-driven worker (docs/OPERATIONS.md), with
the answers gunicorn writes itself, before the app sees a request (a request line or headers
too long, a malformed request), in the arena's one JSON error shape instead of an HTML page,
and a graceful stop that takes about a second, not gunicorn's graceful timeout:

- the pull bots' streams are ended with a ``bye`` when the worker is told to stop, and so is
  every stream opened after that (a bot reconnecting at once still reaches the worker until its
  loop, a second later, stops accepting): they would otherwise hold the stop for the whole
  timeout (30 s);
- once its last request is answered, the worker ends without the interpreter's teardown of the
  arena's modules (2 to 5.5 s measured on a busy machine, for nothing; gunicorn's ``worker_exit``
  hook, which the arena does not set, is not called);
- a SIGTERM that comes while the worker starts (patched for gevent, loading the app) stops it
  once the app is loaded, instead of being lost or failing its boot.

    gunicorn --worker-class service.web_worker.ArenaWorker 'service.app:from_environment()'
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
from types import FrameType

import gevent
from gunicorn import util
from gunicorn.workers.ggevent import GeventWorker


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's ``util.write_error``, answering JSON."""
    from service.errors import SLUGS  # noqa: PLC0415 - not at import: gevent patches first

    detail = f": {mesg}" if mesg else ""
    body = json.dumps(
        {
            "status": status_int,
            "error": SLUGS.get(status_int, "bad_request"),
            "message": f"the server refused the request before reading it ({reason}{detail}): "
            "keep the request line under 4 KiB and each header under 8 KiB",
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin1") + body)


class ArenaWorker(GeventWorker):
    def init_process(self) -> None:
        # gunicorn installs the worker's handlers after gevent's patching: until then a SIGTERM
        # (a stop right after a start) reached the master's handler, copied by the fork, and was
        # lost, and the master waited out its graceful timeout for a worker that never stopped
        signal.signal(signal.SIGTERM, self.handle_exit)
        util.write_error = write_json_error
        super().init_process()

    def run(self) -> None:
        super().run()  # returns once the worker has stopped and answered its last request
        self.log.info("Worker exiting (pid: %s)", self.pid)
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self._end_streams()

    def handle_quit(self, sig: int, frame: FrameType | None) -> None:
        self._end_streams()
        super().handle_quit(sig, frame)

    def _end_streams(self) -> None:
        """Have the pull bots' streams ended (:func:`service.context.end_streams`), once the app
        is loaded: a signal that comes while it loads finds no stream, nor the app's modules
        ready to import."""
        app = getattr(self, "wsgi", None)
        if app is None:
            return
        from service.context import end_streams  # noqa: PLC0415 - not at import: gevent patches first

        gevent.spawn(end_streams, app)  # out of the signal handler, as gunicorn does

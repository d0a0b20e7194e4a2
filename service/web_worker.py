"""The web process's gunicorn worker: gevent's event-driven worker (docs/OPERATIONS.md), with
the answers gunicorn writes itself, before the app sees a request (a request line or headers
too long, a malformed request), in the arena's one JSON error shape instead of an HTML page,
and the pull bots' streams ended with a ``bye`` when the worker is told to stop (they would
otherwise hold a graceful shutdown for its whole timeout).

    gunicorn --worker-class service.web_worker.ArenaWorker 'service.app:from_environment()'
"""

from __future__ import annotations

import json
import socket
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
        util.write_error = write_json_error
        super().init_process()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._end_streams()
        super().handle_exit(sig, frame)

    def handle_quit(self, sig: int, frame: FrameType | None) -> None:
        self._end_streams()
        super().handle_quit(sig, frame)

    def _end_streams(self) -> None:
        from service.context import end_streams  # noqa: PLC0415 - not at import: gevent patches first

        gevent.spawn(end_streams, self.wsgi)  # out of the signal handler, as gunicorn does

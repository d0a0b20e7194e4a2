"""What one request to a bot measured: :class:`Exchange`, filled in by whoever carries the
request (a push bot's :class:`~arena.transport.BotTransport`, a pull bot's
:class:`~arena.pull_transport.PullTransport`, a house bot's
:class:`~arena.match_loop.InProcessSeat`) and turned into the log's
:class:`~replays.log.Timing` once the match's start is known.

Instants are read from :func:`time.monotonic_ns` (``now_ns``), in nanoseconds, as they
happen: a few readings per request, no system call beyond the clock's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from replays.log import Connection, Timing

now_ns = time.monotonic_ns
"""The clock of every instant an :class:`Exchange` holds (one clock for the whole match)."""


@dataclass(slots=True)
class Exchange:
    """One request and its answer, on the :data:`now_ns` clock; ``None`` where the carrier has
    nothing to say (see :class:`~replays.log.Timing` for each field)."""

    sent_ns: int | None = None
    received_ns: int | None = None
    connection: Connection | None = None
    connect_ns: int | None = None
    tls_ns: int | None = None
    bytes_sent: int | None = None
    bytes_received: int | None = None
    retried: bool | None = None

    def timing(self, origin_ns: int) -> Timing:
        """The log's record of this exchange, for a match that started at ``origin_ns``."""
        return Timing(
            sent_us=_offset(self.sent_ns, origin_ns),
            received_us=_offset(self.received_ns, origin_ns),
            connection=self.connection,
            connect_us=_offset(self.connect_ns, 0),
            tls_us=_offset(self.tls_ns, 0),
            bytes_sent=self.bytes_sent,
            bytes_received=self.bytes_received,
            retried=self.retried,
        )


def _offset(instant_ns: int | None, origin_ns: int) -> int | None:
    return None if instant_ns is None else (instant_ns - origin_ns) // 1000

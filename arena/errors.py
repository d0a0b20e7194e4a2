"""What the arena refuses, by kind; the message always says why, in words a person can act on.

The web answers each kind with one status (``service/errors.py`` maps them in one place); the
workers log them. ``UNAVAILABLE`` names the store's "try again later" errors, so that no layer
above the store needs to know that it is Redis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import redis


class ArchiveError(Exception):
    """The archive of sealed logs (:mod:`arena.archive`) cannot keep or return a blob: it is
    unreachable, or a blob is missing or damaged. Never a client's mistake: try again later."""


UNAVAILABLE: tuple[type[Exception], ...] = (
    redis.ConnectionError,
    redis.TimeoutError,
    ArchiveError,
)
"""The store is down or restarting (``BusyLoadingError`` is a ``ConnectionError``), or the
archive cannot return a log."""


class ArenaError(Exception):
    """A request the arena's state does not allow. ``field`` names the input at fault, if one
    is; ``code`` is a short machine-readable word for the kind (``conflict``,
    ``handshake_failed``); ``errors`` lists several problems by field."""

    code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        code: str | None = None,
        errors: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code
        self.errors = {k: list(v) for k, v in (errors or {}).items()}


class NotFoundError(ArenaError):
    """There is no such bot, tournament, match or game."""


class NotAllowedError(ArenaError):
    """Something the arena does not let this caller do (choose a bot whose owner does not allow
    human games)."""


class NameTakenError(ArenaError):
    """Another bot has that name."""

    code = "conflict"


class WrongStateError(ArenaError):
    """A transition from a state that does not allow it (resuming a retired bot, …)."""


class EmbargoedError(WrongStateError):
    """A finished match whose deal other matches of its tournament are still playing: nothing
    about its hands is shown yet (docs/REPLAYS.md, fair deals)."""

    code = "embargoed"


class AlreadyDisputedError(WrongStateError):
    """An open dispute already contests that decision (or hand)."""

    code = "conflict"


class StaleVersionError(ArenaError):
    """A write based on a version of a human game that another request has changed since."""


class TooManyError(ArenaError):
    """More of something at once than the arena allows one caller (live gauntlets per bot)."""

    code = "too_many"


class InvalidError(ArenaError):
    """Input that is well-formed but that the arena cannot act on (an unknown participant, an
    endpoint that does not answer)."""
